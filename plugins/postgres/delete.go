package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting
// sessions": the audit table holds the audit log of the schema, the holds
// table the sessions under a legal hold. A record is inserted in the
// transaction that makes the change it records, which locks the sessions
// row first, so a hold and a delete of one session never interleave. A
// session's digest is that of its plain JSONL form: the header JSON and
// the envelopes of its valid prefix, each followed by a newline
// (handles.Digest).

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter): under its write
// claim (ALREADY_OWNED naming the owning host), one transaction inserts
// the audit record and deletes the sessions row (its events and
// checkpoint cascade) and its torn_rows artifacts.
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
	if b.pending.Holder(id) != nil {
		return sdk.AuditRecord{}, handles.DeleteOwned(op, id, "it was created in this instance and is not stored yet")
	}
	hd := &handle{name: "delete", id: id, write: true, key: lockKey(st.schema, id)}
	oc, why, err := b.claim(ctx, st, hd)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	if why != "" {
		return sdk.AuditRecord{}, handles.DeleteOwned(op, id, why)
	}
	defer b.release(hd, oc)
	rec, err := b.recordOf(ctx, id, sdk.AuditDelete, r)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	err = st.lifecycleTx(ctx, id, "delete", func(tx pgx.Tx) error {
		held, err := st.lockedHold(ctx, tx, id)
		if err != nil {
			return err
		}
		if held {
			return handles.Held(op, id)
		}
		if err := st.insertRecord(ctx, tx, rec); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM "+st.q()+".torn_rows WHERE session_id = $1", id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "DELETE FROM "+st.q()+".sessions WHERE id = $1", id)
		return err
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return rec, nil
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter), beside a writer.
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
	rec, err := b.recordOf(ctx, id, o, r)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	changed := false
	err = st.lifecycleTx(ctx, id, "hold", func(tx pgx.Tx) error {
		now, err := st.lockedHold(ctx, tx, id)
		if err != nil || now == held {
			return err
		}
		if err := st.insertRecord(ctx, tx, rec); err != nil {
			return err
		}
		q := "INSERT INTO " + st.q() + ".holds(session_id) VALUES ($1)"
		if !held {
			q = "DELETE FROM " + st.q() + ".holds WHERE session_id = $1"
		}
		_, err = tx.Exec(ctx, q, id)
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
	err = st.pool.QueryRow(ctx, "SELECT EXISTS(SELECT 1 FROM "+st.q()+".sessions WHERE id = $1), EXISTS(SELECT 1 FROM "+st.q()+".holds WHERE session_id = $1)", id).Scan(&stored, &held)
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
	rows, err := st.pool.Query(ctx, "SELECT at, op, session_id, events, digest, reason, actor FROM "+st.q()+".audit ORDER BY seq")
	if err != nil {
		return st.dbErr(ctx, "", "reading the audit log", err)
	}
	var recs []sdk.AuditRecord
	for rows.Next() {
		var r sdk.AuditRecord
		var at time.Time
		var o string
		var events int64
		if err := rows.Scan(&at, &o, &r.Session, &events, &r.Digest, &r.Reason, &r.By); err != nil {
			rows.Close()
			return st.dbErr(ctx, "", "reading the audit log", err)
		}
		r.Time, r.Op, r.Events = at.UTC(), sdk.AuditOp(o), sdk.Offset(events)
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return st.dbErr(ctx, "", "reading the audit log", err)
	}
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// recordOf returns the record of o on the stored session id, with the
// digest and length of its valid prefix (ReadDamaged's).
func (b *Backend) recordOf(ctx context.Context, id string, o sdk.AuditOp, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	d := handles.NewDigest()
	var events [][]byte
	dm, err := b.ReadDamaged(ctx, id, func(chunk [][]byte) error {
		events = append(events, chunk...)
		return nil
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	d.Line(headerjson.Encode(dm.Header))
	for _, ev := range events {
		d.Line(ev)
	}
	return handles.Record(o, id, sdk.Offset(dm.ValidEvents), d.String(), r), nil
}

// lockedHold locks the sessions row of id (SESSION_NOT_FOUND without one)
// and reports whether it is held.
func (s *store) lockedHold(ctx context.Context, tx pgx.Tx, id string) (bool, error) {
	if _, found, err := s.session(ctx, tx, id, true); err != nil || !found {
		if err == nil {
			err = handles.NotFound(op, id)
		}
		return false, err
	}
	var held bool
	err := tx.QueryRow(ctx, "SELECT EXISTS(SELECT 1 FROM "+s.q()+".holds WHERE session_id = $1)", id).Scan(&held)
	return held, err
}

func (s *store) insertRecord(ctx context.Context, tx pgx.Tx, r sdk.AuditRecord) error {
	_, err := tx.Exec(ctx, "INSERT INTO "+s.q()+".audit(at, op, session_id, events, digest, reason, actor) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		r.Time, string(r.Op), r.Session, int64(r.Events), r.Digest, r.Reason, r.By)
	return err
}

// lifecycleTx runs fn in a read-write transaction and commits it when fn
// succeeds.
func (s *store) lifecycleTx(ctx context.Context, id, what string, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.dbErr(ctx, id, what, err)
	}
	defer tx.Rollback(context.Background())
	if err := fn(tx); err != nil {
		return s.dbErr(ctx, id, what, err)
	}
	return s.dbErr(ctx, id, what, tx.Commit(ctx))
}
