package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting
// sessions": the audit table holds the audit log, the holds table the
// sessions under a legal hold. A record is inserted in the transaction
// that makes the change it records, so the log never misses a change and
// never records one that did not happen. A session's digest is that of
// its plain JSONL form: the header JSON and the envelopes of its valid
// prefix, each followed by a newline (handles.Digest).

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter): under its write
// claim, the audit record, the sessions row and with it (ON DELETE
// CASCADE) its events in one transaction; then its torn-row artifacts in
// <path>.torn/. The lock file stays, as every lock file does.
func (b *Backend) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	if err := handles.Ended(ctx, op, "delete"); err != nil {
		return sdk.AuditRecord{}, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	hd := &handle{name: "delete", id: id, write: true}
	if err := st.acquire(id, hd); err != nil {
		if errors.Is(err, errClaimed) {
			return sdk.AuditRecord{}, handles.DeleteOwned(op, id, "the write claim is held "+strings.TrimPrefix(err.Error(), errClaimed.Error()+" "))
		}
		return sdk.AuditRecord{}, withSession(err, id)
	}
	defer st.release(id, hd)
	rec, err := st.recordOf(ctx, id, sdk.AuditDelete, r)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	err = st.lifecycleTx(ctx, id, "delete", func(tx *sql.Tx) error {
		if held, err := isHeld(ctx, tx, id); err != nil || held {
			if err == nil {
				err = handles.Held(op, id)
			}
			return err
		}
		if err := insertRecord(ctx, tx, rec); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
		return err
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return rec, st.removeArtifacts(id)
}

// removeArtifacts removes the torn-row artifacts of session id: the files
// of <path>.torn/ named artifactName(id, ms) for some epoch ms.
func (s *store) removeArtifacts(id string) error {
	if s.tornDir == "" {
		return nil
	}
	names, err := os.ReadDir(s.tornDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return newErr(sdk.CodeIOError, id, "listing %s for the torn-row artifacts of the deleted session: %v", s.tornDir, err)
	}
	removed := false
	for _, e := range names {
		if !isArtifactOf(e.Name(), id) {
			continue
		}
		if err := os.Remove(filepath.Join(s.tornDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return newErr(sdk.CodeIOError, id, "removing the torn-row artifact %s of the deleted session: %v", filepath.Join(s.tornDir, e.Name()), err)
		}
		removed = true
	}
	if removed {
		if err := durable.SyncDir(s.tornDir); err != nil {
			return newErr(sdk.CodeIOError, id, "syncing %s: %v", s.tornDir, err)
		}
	}
	return nil
}

// isArtifactOf reports whether name is artifactName(id, ms) for some
// epoch ms: the digits before ".jsonl", after the last "." before them.
func isArtifactOf(name, id string) bool {
	rest, ok := strings.CutSuffix(name, ".jsonl")
	dot := strings.LastIndexByte(rest, '.')
	if !ok || dot < 0 {
		return false
	}
	ms, err := strconv.ParseInt(rest[dot+1:], 10, 64)
	return err == nil && ms >= 0 && name == artifactName(id, ms)
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter), beside a writer: the record and the holds row change in
// one transaction.
func (b *Backend) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	if err := handles.Ended(ctx, op, "hold"); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	o := sdk.AuditHold
	if !held {
		o = sdk.AuditReleaseHold
	}
	rec, err := st.recordOf(ctx, id, o, r)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	changed := false
	err = st.lifecycleTx(ctx, id, "hold", func(tx *sql.Tx) error {
		if _, found, err := st.session(ctx, tx.StmtContext(ctx, st.stmts.session), id); err != nil || !found {
			if err == nil {
				err = handles.NotFound(op, id)
			}
			return err
		}
		now, err := isHeld(ctx, tx, id)
		if err != nil || now == held {
			return err
		}
		if err := insertRecord(ctx, tx, rec); err != nil {
			return err
		}
		q := "INSERT INTO holds(session_id) VALUES (?)"
		if !held {
			q = "DELETE FROM holds WHERE session_id = ?"
		}
		_, err = tx.ExecContext(ctx, q, id)
		changed = err == nil
		return err
	})
	if err != nil || !changed {
		return sdk.AuditRecord{}, false, err
	}
	return rec, true, nil
}

// Held reports whether the stored session id has a holds row
// (sdk.Deleter).
func (b *Backend) Held(ctx context.Context, id string) (bool, error) {
	if err := handles.Ended(ctx, op, "held"); err != nil {
		return false, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return false, err
	}
	st, err := b.store()
	if err != nil {
		return false, err
	}
	var stored, held bool
	err = st.db.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1), EXISTS(SELECT 1 FROM holds WHERE session_id = ?1)", id).Scan(&stored, &held)
	if err != nil {
		return false, st.dbErr(ctx, id, "held", err)
	}
	if !stored {
		return false, handles.NotFound(op, id)
	}
	return held, nil
}

// Audit calls fn with every row of the audit table in insertion order
// (sdk.Deleter).
func (b *Backend) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	if err := handles.Ended(ctx, op, "audit"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	rows, err := st.db.QueryContext(ctx, "SELECT time_us, op, session_id, events, digest, reason, actor FROM audit ORDER BY id")
	if err != nil {
		return st.dbErr(ctx, "", "reading the audit log", err)
	}
	var recs []sdk.AuditRecord
	for rows.Next() {
		var r sdk.AuditRecord
		var us int64
		if err := rows.Scan(&us, &r.Op, &r.Session, &r.Events, &r.Digest, &r.Reason, &r.By); err != nil {
			rows.Close()
			return st.dbErr(ctx, "", "reading the audit log", err)
		}
		r.Time = time.UnixMicro(us).UTC()
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return st.dbErr(ctx, "", "reading the audit log", err)
	}
	rows.Close()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// recordOf returns the record of o on the stored session id, with the
// digest and length of its valid prefix (the rows before torn or damaged
// ones).
func (s *store) recordOf(ctx context.Context, id string, o sdk.AuditOp, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	h, sc, err := s.scanDamaged(ctx, id)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	d := handles.NewDigest()
	d.Line(headerjson.Encode(h))
	for seq := int64(0); seq < sc.End; {
		chunk, err := s.readChunk(ctx, id, seq, sc.End)
		if err != nil {
			return sdk.AuditRecord{}, err
		}
		for _, ev := range chunk {
			d.Line(ev)
		}
		seq += int64(len(chunk))
	}
	return handles.Record(o, id, sdk.Offset(sc.End), d.String(), r), nil
}

// lifecycleTx runs fn in a BEGIN IMMEDIATE transaction after the identity
// check, and commits it when fn succeeds.
func (s *store) lifecycleTx(ctx context.Context, id, what string, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return s.dbErr(ctx, id, what, err)
	}
	defer tx.Rollback()
	if err := s.checkIdentity(ctx, tx); err != nil {
		return s.dbErr(ctx, id, what, err)
	}
	if err := fn(tx); err != nil {
		return s.dbErr(ctx, id, what, err)
	}
	return s.dbErr(ctx, id, what, tx.Commit())
}

func isHeld(ctx context.Context, tx *sql.Tx, id string) (bool, error) {
	var held bool
	err := tx.QueryRowContext(ctx, "SELECT EXISTS(SELECT 1 FROM holds WHERE session_id = ?)", id).Scan(&held)
	return held, err
}

func insertRecord(ctx context.Context, tx *sql.Tx, r sdk.AuditRecord) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO audit(time_us, op, session_id, events, digest, reason, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
		r.Time.UnixMicro(), string(r.Op), r.Session, int64(r.Events), r.Digest, r.Reason, r.By)
	return err
}
