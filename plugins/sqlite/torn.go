package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// openSession is the storage half of Backend.Open: in one read transaction the
// sessions row, the format gate and the header check, the write claim for a
// write handle, and the torn-row scan; then, for a write open of a torn
// log, the cut in a BEGIN IMMEDIATE transaction of its own. A claim taken
// here is the caller's to release on error.
func (s space) openSession(ctx context.Context, id string, hd *handle) (sdk.Opened, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: a snapshot
	if err != nil {
		return sdk.Opened{}, s.dbErr(ctx, id, "open", err)
	}
	defer tx.Rollback()
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return sdk.Opened{}, s.dbErr(ctx, id, "open", err)
	}
	if !found {
		if hd.write {
			// A create that is not stored yet holds the claim already.
			holder, err := s.claimedElsewhere(id)
			if err != nil {
				return sdk.Opened{}, withSession(err, id)
			}
			if holder != "" {
				return sdk.Opened{}, newErr(sdk.CodeAlreadyOwned, id, "session %s is being created and is not stored yet; %s holds its write claim", strconv.Quote(id), holder)
			}
		}
		return sdk.Opened{}, handles.NotFound(op, id)
	}
	h, err := s.header(r, id)
	if err != nil {
		return sdk.Opened{}, err
	}
	stored := h.FormatVersion
	h, migrated, err := headerjson.Migrate(h, r.header, s.path)
	if err != nil {
		return sdk.Opened{}, err
	}
	if hd.write {
		if err := s.acquire(id, hd); err != nil {
			if errors.Is(err, errClaimed) {
				return sdk.Opened{}, newErr(sdk.CodeAlreadyOwned, id, "session %s is already open for writing (%v); close that handle first", strconv.Quote(id), err)
			}
			return sdk.Opened{}, withSession(err, id)
		}
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, true)
	if err == nil {
		err = sc.Corrupt(op, id, strconv.Quote(s.path))
	}
	if err != nil {
		return sdk.Opened{}, err
	}
	// The kept envelopes are good only while no other connection has
	// committed (data_version) and this one has not appended to or cut
	// the session (revision).
	var dataVersion int64
	if sc.Events != nil {
		if err := tx.StmtContext(ctx, s.stmts.dataVersion).QueryRowContext(ctx).Scan(&dataVersion); err != nil {
			sc.Events = nil
		}
	}
	// The one connection is free again only after the read transaction.
	if err := tx.Rollback(); err != nil {
		return sdk.Opened{}, s.dbErr(ctx, id, "open", err)
	}
	if hd.write && h.FormatVersion != stored {
		if r, err = s.migrate(ctx, id, stored, migrated); err != nil {
			return sdk.Opened{}, err
		}
	}
	if sc.Torn.Bytes > 0 && hd.write {
		if r, sc, err = s.cut(ctx, id); err != nil {
			return sdk.Opened{}, err
		}
	}
	if sc.Events != nil && int64(len(sc.Events)) == sc.End {
		hd.cache, hd.cacheRev, hd.cacheData = sc.Events, s.revision(r), dataVersion
	}
	hd.incarnation = r.incarnation
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: sdk.Offset(sc.End), Revision: s.revision(r), Torn: sc.Torn}, nil
}

// migrate stores the migration of session id from format version from
// (docs/format.md "Format versions"): in one BEGIN IMMEDIATE transaction
// the header column becomes header, the migrated header JSON, and
// format_version the current version (revision + 1); the event rows stay
// as they are, as every edge of this build keeps them byte-exact. A crash
// before the commit leaves the old version, which the next write open
// migrates again. A sessions row no longer at version from (another
// process migrated or deleted the session after this open read it) is
// OWNERSHIP_LOST, as in PostgreSQL. It returns the new sessions row.
func (s space) migrate(ctx context.Context, id string, from int, header []byte) (sessionRow, error) {
	fail := func(err error) (sessionRow, error) {
		return sessionRow{}, s.dbErr(ctx, id, "storing the format migration", err)
	}
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	res, err := tx.ExecContext(ctx, "UPDATE sessions SET format_version = ?, header = ?, revision = revision + 1 WHERE tenant = ? AND id = ? AND format_version = ?", sdk.FormatVersion, string(header), s.tenant, id, from)
	if err != nil {
		return fail(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fail(err)
	}
	if n != 1 {
		return sessionRow{}, newErr(sdk.CodeOwnershipLost, id, "session %s changed its format version or went away while its format migration was stored; nothing was migrated; open it again", strconv.Quote(id))
	}
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil || !found {
		return fail(fmt.Errorf("reading back the migrated sessions row (found %t): %v", found, err))
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return r, nil
}

// scan examines every row of session id in seq order, as docs/storage.md
// says with rows as units (sqlstore.Scan): a row that does not decode
// comes back as its raw columns with the reason (rawLine). With keep, scan
// also returns the envelopes of the valid prefix (sqlstore.Scan.Events),
// so that the handle's first Read need not decode the rows again.
func (s space) scan(ctx context.Context, tx *sql.Tx, id string, nextSeq int64, keep bool) (*sqlstore.Scan, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+rowColumns+" FROM events WHERE tenant = ? AND session_id = ? ORDER BY seq", s.tenant, id)
	if err != nil {
		return nil, s.dbErr(ctx, id, "scanning for a torn tail", err)
	}
	defer rows.Close()
	rs := scanRows(rows, s.codec)
	defer rs.close()
	out := sqlstore.NewScan(op, id, nextSeq, keep)
	for {
		batch, err := rs.next(ctx)
		if err != nil {
			return nil, s.dbErr(ctx, id, "scanning for a torn tail", err)
		}
		if batch == nil {
			break
		}
		for i := range batch.rows {
			sr := &batch.rows[i]
			raw := &sr.raw
			reason := ""
			if sr.err != nil {
				reason = sr.err.reason
			}
			if err := out.Row(raw.seq, sr.env, reason, func() []byte { return rawLine(raw, reason) }); err != nil {
				return nil, err
			}
		}
	}
	out.Finish()
	return out, nil
}

// cut is the write open's repair of docs/storage.md: in one BEGIN IMMEDIATE
// transaction it scans again, writes the torn rows as canonical JSON lines
// to <path>.torn/<enc(id)>.<epoch ms>.jsonl (fsynced), deletes them, and
// sets next_seq to the end of the valid prefix (revision + 1). It returns
// the new sessions row and the scan with Torn.Artifact set.
func (s space) cut(ctx context.Context, id string) (sessionRow, *sqlstore.Scan, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return sessionRow{}, nil, s.dbErr(ctx, id, "cutting the torn tail", err)
	}
	defer tx.Rollback()
	fail := func(err error) (sessionRow, *sqlstore.Scan, error) {
		return sessionRow{}, nil, s.dbErr(ctx, id, "cutting the torn tail", err)
	}
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return fail(err)
	}
	if !found {
		return fail(handles.NotFound(op, id))
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, false)
	if err == nil {
		err = sc.Corrupt(op, id, strconv.Quote(s.path))
	}
	if err != nil || sc.Torn.Bytes == 0 {
		return r, sc, err // the tail went away meanwhile: nothing to cut
	}
	dir, err := s.tornDirectory()
	if err != nil {
		return fail(err)
	}
	if sc.Torn.Artifact, err = writeArtifact(dir, id, sc.Lines); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM events WHERE tenant = ? AND session_id = ? AND seq >= ?", s.tenant, id, sc.End); err != nil {
		return fail(err)
	}
	if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, sc.End, s.tenant, id).Scan(&r.revision); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	r.nextSeq = sc.End
	sc.Lines = nil
	return r, sc, nil
}

// writeArtifact writes lines, each followed by a newline, to a new file
// <dir>/<artifactName(id, epoch ms)> (durable.WriteFile: 0600, fsynced with
// its directory entry, never replacing a file; the next millisecond when
// the name is taken, at most artifactTries times), and returns its path.
func writeArtifact(dir, id string, lines [][]byte) (string, error) {
	var buf []byte
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	ms := time.Now().UnixMilli()
	path, err := durable.WriteFirstFree(func(i int) string {
		return filepath.Join(dir, artifactName(id, ms+int64(i)))
	}, artifactTries, buf, 0o600)
	if err != nil {
		return "", artifactErr(path, err)
	}
	return path, nil
}

// artifactName is the file name of a torn-row artifact of session id cut
// at ms: <enc(id)>.<ms>.jsonl, shortened with a hash when it would pass
// sdk.MaxFileNameBytes (durable.FitName).
func artifactName(id string, ms int64) string {
	return durable.FitName(encID(id), "."+strconv.FormatInt(ms, 10)+".jsonl")
}

// artifactTries bounds the names writeArtifact tries.
const artifactTries = 1000

func artifactErr(path string, err error) error {
	return sdk.Wrapf(sdk.CodeIOError, op, err, "saving the torn rows to %q", path)
}

// rowStats are the count and the lowest and highest seq (-1 without rows)
// of a session's events rows.
type rowStats struct{ count, lo, hi int64 }

// checkRows is the cheap check Stat and List make before they trust
// next_seq as the event count: the rows must be exactly seqs 0 …
// next_seq−1. When they are not, the session is damaged: the rows are
// scanned as an open would, and the error is the open's CORRUPT_LOG for
// committed damage, else a CORRUPT_LOG that names the torn rows a write
// open would cut.
func (s space) checkRows(ctx context.Context, id string, nextSeq int64, rs rowStats) error {
	if rs.count == nextSeq && (nextSeq == 0 || rs.lo == 0 && rs.hi == nextSeq-1) {
		return nil
	}
	d, err := s.scanDamaged(ctx, id)
	if err != nil {
		return err
	}
	sc := d.Scan
	if err := sc.Corrupt(op, id, strconv.Quote(s.path)); err != nil {
		return err
	}
	if len(sc.Lines) == 0 {
		return nil // repaired since the caller's snapshot
	}
	return corruptAt(id, sc.End, "the events rows of session %s in %s (%s) do not match its next_seq %d: it ends in a torn tail from seq %d (%s stored from there), which reads leave out and the next write open (logbook resume or append) cuts and keeps in %s",
		strconv.Quote(id), strconv.Quote(s.path), rs, nextSeq, sc.End, rowCount(sc.Rows), strconv.Quote(s.dir(s.path+".torn")))
}

// String describes the rows: "no rows", "1 row, seq 4", "3 rows, seqs 0 … 3".
func (rs rowStats) String() string {
	switch rs.count {
	case 0:
		return "no rows"
	case 1:
		return "1 row, seq " + strconv.FormatInt(rs.lo, 10)
	}
	return rowCount(rs.count) + ", seqs " + strconv.FormatInt(rs.lo, 10) + " … " + strconv.FormatInt(rs.hi, 10)
}

// rowCount is "1 row" or "n rows".
func rowCount(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return strconv.FormatInt(n, 10) + " rows"
}
