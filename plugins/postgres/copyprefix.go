package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.PrefixCopier = (*Backend)(nil)

// CopyPrefix implements sdk.PrefixCopier: it creates the session child as
// Create does (its claim taken), then in one transaction stores its
// sessions row and copies the rows of source's events [0, boundary] with
// INSERT … SELECT, as stored (a zstd frame stays the same frame), and
// returns the write handle. The source's format gate and header check run
// first (their errors), a boundary outside its log is INVALID_BOUNDARY, and
// a prefix whose rows are not all there is CORRUPT_LOG; any failure stores
// nothing and abandons the create.
func (b *Backend) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(source); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	return sqlstore.Materialize(ctx, func() (sdk.Opened, error) { return b.Create(ctx, child) }, func(handle string) (sdk.Durable, error) {
		return b.copyTx(ctx, st, handle, source, boundary)
	}, b.Close)
}

// copyTx materializes the pending create of the write handle named handle
// as the copy of source's prefix (wholeTx).
func (b *Backend) copyTx(ctx context.Context, st space, handle string, source string, boundary sdk.Seq) (sdk.Durable, error) {
	return b.wholeTx(ctx, st, handle, "copying a prefix", func(tx pgx.Tx, id string, r *sessionRow) error {
		src, found, err := st.session(ctx, tx, source, false)
		if err != nil {
			return err
		}
		if !found {
			return handles.NotFound(op, source)
		}
		if _, err := st.header(src, source); err != nil {
			return err
		}
		if boundary < 0 || int64(boundary) >= src.nextSeq {
			return newErr(sdk.CodeInvalidBoundary, source, "boundary %d is outside session %q, whose last seq is %d", boundary, source, src.nextSeq-1).WithSeq(int64(boundary))
		}
		tag, err := tx.Exec(ctx, "INSERT INTO "+st.q()+".events(tenant, session_id, seq, zstd, envelope) SELECT tenant, $1, seq, zstd, envelope FROM "+st.q()+
			".events WHERE tenant = $4 AND session_id = $2 AND seq <= $3", id, source, int64(boundary), st.tenant)
		if err != nil {
			return err
		}
		if n := tag.RowsAffected(); n != int64(boundary)+1 {
			return corruptAt(source, int64(boundary), "session %q has %d rows for its events 0 … %d; the rows of the others are missing", source, n, boundary)
		}
		r.nextSeq = int64(boundary) + 1
		return tx.QueryRow(ctx, "UPDATE "+st.q()+".sessions SET next_seq = $2, revision = 1, size_bytes = size_bytes + "+
			"(SELECT coalesce(sum(octet_length(envelope)), 0) FROM "+st.q()+".events WHERE tenant = $3 AND session_id = $1) WHERE tenant = $3 AND id = $1 RETURNING revision, size_bytes",
			id, r.nextSeq, st.tenant).Scan(&r.revision, &r.sizeBytes)
	})
}

// wholeTx materializes the pending create of the write handle named
// handle in one transaction with what fill stores (CopyPrefix, Import):
// the sessions row, then fill, which inserts the events of session id and
// sets r's next seq, revision and size; watches are told at the commit.
// It does the bookkeeping of commit; what names the work in errors.
func (b *Backend) wholeTx(ctx context.Context, st space, handle, what string, fill func(tx pgx.Tx, id string, r *sessionRow) error) (sdk.Durable, error) {
	hd, err := b.writable(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	b.mu.Lock()
	cs := claimState{pending: hd.pending, header: hd.header, oc: hd.oc}
	b.mu.Unlock()
	fail := func(err error) (sdk.Durable, error) {
		return sdk.Durable{}, st.dbErr(ctx, hd.id, what, err)
	}
	tx, err := st.pool.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback(context.Background())
	r, err := st.materialize(ctx, tx, hd, cs)
	if err != nil {
		return fail(err)
	}
	if err := fill(tx, hd.id, &r); err != nil {
		return fail(err)
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", st.channel(), st.payload(hd.id)); err != nil {
		return fail(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	hd.pending, hd.incarnation, hd.epoch = nil, r.incarnation, r.epoch
	b.pending.Release(hd.id, hd)
	hd.view.Saw(r.nextSeq)
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: st.rev(r)}, nil
}
