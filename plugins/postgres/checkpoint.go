package postgres

import (
	"bytes"
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.Checkpointer = (*Backend)(nil)

// digestQuery is the binding of a checkpoint, and its arguments: SHA-256,
// computed by the server, over the stored rows of events [0, events) of
// session id of s's tenant, each as its length (4 bytes) and its bytes, in
// seq order, and the count of those rows.
func (s space) digestQuery(id string, events int64) (string, []any) {
	return "SELECT sha256(coalesce(string_agg(int4send(length(envelope)) || envelope, ''::bytea ORDER BY seq), ''::bytea)), count(*) FROM " +
		s.q() + ".events WHERE tenant = $3 AND session_id = $1 AND seq < $2", []any{id, events, s.tenant}
}

// WriteCheckpoint implements sdk.Checkpointer: it stores data as the
// checkpoint of the write handle's session covering its first events
// events, replacing the earlier one, bound to the session's incarnation
// and to a digest of those events' stored rows. events past the stored
// log (or a create not stored yet) is INVALID_BOUNDARY.
func (b *Backend) WriteCheckpoint(ctx context.Context, handle string, events sdk.Offset, data []byte) error {
	if err := handles.Ended(ctx, op, "write checkpoint"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	hd, err := b.writable(handle)
	if err != nil {
		return err
	}
	tx, err := st.pool.Begin(ctx)
	if err != nil {
		return st.dbErr(ctx, hd.id, "write checkpoint", err)
	}
	defer tx.Rollback(context.Background())
	r, found, err := st.session(ctx, tx, hd.id, true)
	if err != nil {
		return err
	}
	if !found || int64(events) > r.nextSeq || events < 0 {
		stored := int64(0)
		if found {
			stored = r.nextSeq
		}
		return newErr(sdk.CodeInvalidBoundary, hd.id, "a checkpoint of %d events is past the %d stored", events, stored)
	}
	var digest []byte
	var n int64
	q, args := st.digestQuery(hd.id, int64(events))
	if err := tx.QueryRow(ctx, q, args...).Scan(&digest, &n); err != nil {
		return st.dbErr(ctx, hd.id, "write checkpoint", err)
	}
	if n != int64(events) {
		return corruptAt(hd.id, n, "session %q has %d rows for its first %d events", hd.id, n, events)
	}
	_, err = tx.Exec(ctx, "INSERT INTO "+st.q()+".checkpoints(tenant, session_id, incarnation, events, digest, data) VALUES ($6, $1, $2, $3, $4, $5) "+
		"ON CONFLICT (tenant, session_id) DO UPDATE SET incarnation = $2, events = $3, digest = $4, data = $5", hd.id, r.incarnation, int64(events), digest, data, st.tenant)
	if err == nil {
		err = tx.Commit(ctx)
	}
	return st.dbErr(ctx, hd.id, "write checkpoint", err)
}

// ReadCheckpoint implements sdk.Checkpointer: the handle's session's
// checkpoint when its incarnation and the digest of the rows it covers,
// computed again, are the ones it was written with; found is false
// otherwise.
func (b *Backend) ReadCheckpoint(ctx context.Context, handle string) (sdk.Offset, []byte, bool, error) {
	if err := handles.Ended(ctx, op, "read checkpoint"); err != nil {
		return 0, nil, false, err
	}
	st, err := b.store()
	if err != nil {
		return 0, nil, false, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return 0, nil, false, err
	}
	var (
		inc, now     string
		events, next int64
		want, data   []byte
	)
	err = st.pool.QueryRow(ctx, "SELECT c.incarnation, c.events, c.digest, c.data, s.incarnation, s.next_seq FROM "+st.q()+".checkpoints c JOIN "+
		st.q()+".sessions s ON s.tenant = c.tenant AND s.id = c.session_id WHERE c.tenant = $2 AND c.session_id = $1", hd.id, st.tenant).Scan(&inc, &events, &want, &data, &now, &next)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, false, nil
	}
	if err != nil {
		return 0, nil, false, st.dbErr(ctx, hd.id, "read checkpoint", err)
	}
	if inc != now || events > next {
		return 0, nil, false, nil
	}
	var got []byte
	var n int64
	q, args := st.digestQuery(hd.id, events)
	if err := st.pool.QueryRow(ctx, q, args...).Scan(&got, &n); err != nil {
		return 0, nil, false, st.dbErr(ctx, hd.id, "read checkpoint", err)
	}
	if n != events || !bytes.Equal(got, want) {
		return 0, nil, false, nil
	}
	return sdk.Offset(events), data, true, nil
}
