package postgres

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// check turns a stored events row into the envelope it holds: the zstd
// frame decoded (checksum verified) when zstd is set, then a canonical
// envelope (envelope.Split) whose seq is the row's. reason says why not.
func (s *store) check(seq int64, zstd bool, stored []byte) (env []byte, reason string) {
	env = stored
	if zstd {
		out, err := s.dec.DecodeAll(stored, nil)
		if err != nil {
			return nil, "the compressed envelope does not decode: " + err.Error()
		}
		env = out
	}
	p, err := envelope.Split(op, env)
	if err != nil {
		return nil, "not a canonical envelope: " + sdk.ErrorOf(err).Detail
	}
	if p.Seq != seq {
		return nil, fmt.Sprintf("the envelope has seq %d", p.Seq)
	}
	return env, ""
}

// scanned is the outcome of a scan.
type scanned struct {
	end   int64    // length of the valid, committed prefix
	torn  sdk.Torn // zero when nothing is torn; Artifact is set by cut
	lines [][]byte // the rows from end on as artifact lines, without newlines
	rows  int64    // how many stored rows lines holds (a gap's line is none)
	// events are the envelopes of the valid prefix [0, end) when the scan
	// was asked to keep them (and they fit in scanKeepBytes); else nil.
	events [][]byte
	// The first damaged row below next_seq (a seq gap or a row that does
	// not check), -1 when none, and why.
	bad    int64
	reason string
	// The first row after bad, below next_seq, that checks (-1 when
	// none): it makes the damage committed corruption. intact counts all
	// of them.
	intactAt, intact int64
}

// committedDamage reports a damaged row with an intact row after it.
func (sc *scanned) committedDamage() bool { return sc.bad >= 0 && sc.intactAt >= 0 }

// corrupt is the CORRUPT_LOG of committed damage, or nil.
func (sc *scanned) corrupt(id, where string) error {
	if !sc.committedDamage() {
		return nil
	}
	return corruptAt(id, sc.bad, "event seq %d in %s: %s, but the later event %d is intact, so the damage is inside the committed log, not a torn tail, and nothing was cut; salvage the valid prefix into a new session (logbook salvage) or restore the database from a backup",
		sc.bad, where, sc.reason, sc.intactAt)
}

// scan examines every events row of session id in seq order, rows as the
// units of docs/storage.md: rows with seq ≥ next_seq are torn; below
// next_seq, the first row that is missing (a seq gap) or does not check
// starts a torn tail, unless a later row below next_seq checks: then the
// damage is committed corruption (corrupt). The rows from the end of the
// valid prefix on come back as artifact lines; Torn.Bytes counts them
// with their newlines. With keep, the valid prefix's envelopes come back
// too.
func (s *store) scan(ctx context.Context, q querier, id string, nextSeq int64, keep bool) (scanned, error) {
	out := scanned{bad: -1, intactAt: -1}
	if keep && nextSeq > 0 {
		out.events = make([][]byte, 0, min(nextSeq, 1<<20))
	}
	var want, kept int64 // the seq the next row should have; bytes kept
	add := func(line []byte) {
		out.lines = append(out.lines, line)
		out.torn.Bytes += int64(len(line)) + 1
	}
	missing := func(from, to int64) {
		add(missingLine(from, to))
		if out.bad < 0 {
			out.bad, out.reason = from, fmt.Sprintf("the rows of events %d … %d are missing", from, to)
		}
	}
	err := s.checkedRows(ctx, q, id, "SELECT seq, zstd, envelope FROM "+s.q()+".events WHERE session_id = $1 ORDER BY seq", func(chunk []storedRow) error {
		for i := range chunk {
			r := &chunk[i]
			if r.seq < 0 {
				return corruptAt(id, r.seq, "a row has the negative seq %d; the database was written by something other than logbook", r.seq)
			}
			if r.seq > want && want < nextSeq {
				missing(want, min(r.seq, nextSeq)-1)
			}
			want = r.seq + 1
			if out.bad < 0 && r.seq < nextSeq {
				if r.reason == "" {
					if out.events != nil {
						if kept += int64(len(r.env)); kept > scanKeepBytes {
							out.events = nil
						} else {
							out.events = append(out.events, r.env)
						}
					}
					continue
				}
				out.bad, out.reason = r.seq, r.reason
			}
			out.rows++
			if r.reason != "" {
				add(undecodableLine(r.seq, r.zstd, r.stored, r.reason))
				continue
			}
			if out.bad >= 0 && r.seq < nextSeq {
				if out.intactAt < 0 {
					out.intactAt = r.seq
				}
				out.intact++
			}
			add(r.env)
		}
		return nil
	}, id)
	if err != nil {
		return scanned{}, err
	}
	if want < nextSeq {
		missing(want, nextSeq-1)
	}
	out.end = nextSeq
	if out.bad >= 0 {
		out.end = out.bad
	}
	if len(out.lines) > 0 {
		out.torn.FromSeq = sdk.Seq(out.end)
	}
	return out, nil
}

// cut is a write open's repair: in one transaction, with the sessions row
// locked, it scans again, keeps the torn rows as one torn_rows row (the
// artifact lines, newline-terminated), deletes them and sets next_seq to
// the end of the valid prefix (revision + 1).
func (s *store) cut(ctx context.Context, id string) (sessionRow, scanned, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return sessionRow{}, scanned{}, s.dbErr(ctx, id, "cutting the torn tail", err)
	}
	defer tx.Rollback(context.Background())
	fail := func(err error) (sessionRow, scanned, error) {
		return sessionRow{}, scanned{}, s.dbErr(ctx, id, "cutting the torn tail", err)
	}
	r, found, err := s.session(ctx, tx, id, true)
	if err != nil {
		return fail(err)
	}
	if !found {
		return fail(handles.NotFound(op, id))
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, false)
	if err == nil {
		err = sc.corrupt(id, s.where())
	}
	if err != nil || sc.torn.Bytes == 0 {
		return r, sc, err
	}
	var buf []byte
	for _, l := range sc.lines {
		buf = append(append(buf, l...), '\n')
	}
	var cutID int64
	if err := tx.QueryRow(ctx, "INSERT INTO "+s.q()+".torn_rows(session_id, cut_at, lines) VALUES ($1, now(), $2) RETURNING cut_id", id, buf).Scan(&cutID); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+s.q()+".events WHERE session_id = $1 AND seq >= $2", id, sc.end); err != nil {
		return fail(err)
	}
	err = tx.QueryRow(ctx, "UPDATE "+s.q()+".sessions SET next_seq = $2, revision = revision + 1, last_activity = now(), "+
		"size_bytes = octet_length(header) + (SELECT coalesce(sum(octet_length(envelope)), 0) FROM "+s.q()+".events WHERE session_id = $1) WHERE id = $1 RETURNING revision, size_bytes",
		id, sc.end).Scan(&r.revision, &r.sizeBytes)
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	r.nextSeq = sc.end
	sc.lines = nil
	sc.torn.Artifact = s.artifact(cutID)
	return r, sc, nil
}

// artifact names the torn_rows row a cut kept.
func (s *store) artifact(cutID int64) string {
	return "postgres:" + s.schema + ".torn_rows/" + strconv.FormatInt(cutID, 10)
}

// undecodableLine renders a row that does not check as one JSON line of
// a torn-row artifact: its columns as stored (the envelope in base64) and
// why it does not check.
func undecodableLine(seq int64, zstd bool, stored []byte, reason string) []byte {
	b := []byte(`{"undecodable":{"seq":`)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"zstd":`...)
	b = strconv.AppendBool(b, zstd)
	b = append(b, `,"envelopeBase64":"`...)
	b = base64.StdEncoding.AppendEncode(b, stored)
	b = append(b, `"},"reason":`...)
	b = jsonv.AppendString(b, reason)
	return append(b, '}')
}

// missingLine renders seqs [from, to] absent below next_seq as one line.
func missingLine(from, to int64) []byte {
	b := []byte(`{"missing":{"fromSeq":`)
	b = strconv.AppendInt(b, from, 10)
	b = append(b, `,"toSeq":`...)
	b = strconv.AppendInt(b, to, 10)
	return append(b, "}}"...)
}
