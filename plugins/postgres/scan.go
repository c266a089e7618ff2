package postgres

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// check turns a stored events row into the envelope it holds: the zstd
// frame decoded (checksum verified) when zstd is set, then a canonical
// envelope (envelope.Split) whose seq is the row's. reason says why not.
func (s *store) check(c *envelope.Checker, seq int64, zstd bool, stored []byte) (env []byte, reason string) {
	env = stored
	if zstd {
		out, err := s.dec.DecodeAll(stored, nil)
		if err != nil {
			return nil, "the compressed envelope does not decode: " + err.Error()
		}
		env = out
	}
	p, err := c.Split(op, env)
	if err != nil {
		return nil, "not a canonical envelope: " + sdk.ErrorOf(err).Detail
	}
	if p.Seq != seq {
		return nil, fmt.Sprintf("the envelope has seq %d", p.Seq)
	}
	return env, ""
}

// scan examines every events row of session id in seq order
// (sqlstore.Scan), in q's snapshot. With keep, the valid prefix's
// envelopes come back too (sqlstore.Scan.Events).
func (s space) scan(ctx context.Context, q querier, id string, nextSeq int64, keep bool) (*sqlstore.Scan, error) {
	out := sqlstore.NewScan(op, id, nextSeq, keep)
	err := s.checkedRows(ctx, q, id, "SELECT seq, zstd, envelope FROM "+s.q()+".events WHERE tenant = $2 AND session_id = $1 ORDER BY seq", func(chunk []storedRow) error {
		for i := range chunk {
			r := &chunk[i]
			if err := out.Row(r.seq, r.env, r.reason, func() []byte { return undecodableLine(r.seq, r.zstd, r.stored, r.reason) }); err != nil {
				return err
			}
		}
		return nil
	}, id, s.tenant)
	if err != nil {
		return nil, err
	}
	out.Finish()
	return out, nil
}

// cut is a write open's repair: in one transaction, with the sessions row
// locked, it scans again, keeps the torn rows as one torn_rows row (the
// artifact lines, newline-terminated), deletes them and sets next_seq to
// the end of the valid prefix (revision + 1).
func (s space) cut(ctx context.Context, id string) (sessionRow, *sqlstore.Scan, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return sessionRow{}, nil, s.dbErr(ctx, id, "cutting the torn tail", err)
	}
	defer tx.Rollback(context.Background())
	fail := func(err error) (sessionRow, *sqlstore.Scan, error) {
		return sessionRow{}, nil, s.dbErr(ctx, id, "cutting the torn tail", err)
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
		err = sc.Corrupt(op, id, s.where())
	}
	if err != nil || sc.Torn.Bytes == 0 {
		return r, sc, err
	}
	buf := sc.Artifact()
	var cutID int64
	if err := tx.QueryRow(ctx, "INSERT INTO "+s.q()+".torn_rows(tenant, session_id, cut_at, lines) VALUES ($3, $1, now(), $2) RETURNING cut_id", id, buf, s.tenant).Scan(&cutID); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM "+s.q()+".events WHERE tenant = $3 AND session_id = $1 AND seq >= $2", id, sc.End, s.tenant); err != nil {
		return fail(err)
	}
	err = tx.QueryRow(ctx, "UPDATE "+s.q()+".sessions SET next_seq = $2, revision = revision + 1, last_activity = now(), "+
		"size_bytes = octet_length(header) + (SELECT coalesce(sum(octet_length(envelope)), 0) FROM "+s.q()+".events WHERE tenant = $3 AND session_id = $1) WHERE tenant = $3 AND id = $1 RETURNING revision, size_bytes",
		id, sc.End, s.tenant).Scan(&r.revision, &r.sizeBytes)
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	r.nextSeq = sc.End
	sc.Lines = nil
	sc.Torn.Artifact = s.artifact(cutID)
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
