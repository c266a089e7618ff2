package sqlite

import (
	"context"
	"strconv"

	"github.com/google/uuid"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.PrefixCopier = (*Backend)(nil)

// copyRowsSQL copies a session's rows up to a seq into another session,
// verbatim: the stored data (TEXT or zstd BLOB) is never decoded.
const copyRowsSQL = "INSERT INTO events(session_id, " + eventColumns + ") SELECT ?, " + eventColumns +
	" FROM events WHERE session_id = ? AND seq <= ? ORDER BY seq"

// CopyPrefix implements sdk.PrefixCopier (docs/storage.md): it creates the
// session child as Create does, then in one BEGIN IMMEDIATE transaction
// stores its sessions row and copies the rows of source's events
// [0, boundary] with INSERT … SELECT, and returns the write handle. The
// source's format gate and header check run first (its errors), a
// boundary outside its next_seq is INVALID_BOUNDARY, and a prefix whose
// rows are not all there is CORRUPT_LOG; any failure stores nothing.
func (b *Backend) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(source); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := b.Create(ctx, child)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd, err := b.writable(o.Handle)
	if err == nil {
		var d sdk.Durable
		d, err = b.commitWhole(ctx, st, hd, func(hdr []byte, h sdk.Header) (sdk.Durable, string, error) {
			return st.copyTx(ctx, hd.id, hdr, h, source, boundary)
		})
		o.NextSeq, o.Revision = d.NextSeq, d.Revision
	}
	if err != nil {
		_ = b.Close(ctx, o.Handle) // abandons the create
		return sdk.Opened{}, err
	}
	return o, nil
}

// commitWhole materializes the pending create hd in the transaction tx
// runs (CopyPrefix, Import), given hd's canonical header, with the
// bookkeeping of commit.
func (b *Backend) commitWhole(ctx context.Context, st *store, hd *handle, tx func(hdr []byte, h sdk.Header) (sdk.Durable, string, error)) (sdk.Durable, error) {
	hd.ops.Lock()
	defer hd.ops.Unlock()
	b.mu.Lock()
	closed, hdr, h := hd.closed, hd.pending, hd.header
	b.mu.Unlock()
	if closed {
		return sdk.Durable{}, handles.HandleClosed(op, hd.name)
	}
	if err := st.holds(hd.id, hd); err != nil {
		return sdk.Durable{}, err
	}
	d, inc, err := tx(hdr, h)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		hd.pending, hd.incarnation = nil, inc
		b.pending.Release(hd.id, hd)
		hd.view.Saw(int64(d.NextSeq))
	}
	return d, err
}

// copyTx is the transaction of CopyPrefix: the child's sessions row (hdr,
// its canonical header) and the source's rows up to boundary.
func (s *store) copyTx(ctx context.Context, id string, hdr []byte, h sdk.Header, source string, boundary sdk.Seq) (sdk.Durable, string, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "copy prefix", err)
	}
	defer tx.Rollback()
	fail := func(err error) (sdk.Durable, string, error) {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "copy prefix", err)
	}
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	if _, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id); err != nil {
		return fail(err)
	} else if found {
		return fail(handles.AlreadyExists(op, id, "another instance or process stored it first"))
	}
	src, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), source)
	switch {
	case err != nil:
		return fail(err)
	case !found:
		return fail(handles.NotFound(op, source))
	}
	if _, err := s.header(src, source); err != nil {
		return fail(err)
	}
	if boundary < 0 || int64(boundary) >= src.nextSeq {
		last := "none"
		if src.nextSeq > 0 {
			last = strconv.FormatInt(src.nextSeq-1, 10)
		}
		return fail(newErr(sdk.CodeInvalidBoundary, source, "boundary %d is outside the stored events of %s (last seq %s)", boundary, strconv.Quote(source), last).WithSeq(int64(boundary)))
	}
	inc := uuid.NewString()
	if _, err := tx.StmtContext(ctx, s.stmts.insertSession).ExecContext(ctx, id, sdk.FormatVersion, h.CreatedAt, string(hdr), inc); err != nil {
		return fail(err)
	}
	res, err := tx.ExecContext(ctx, copyRowsSQL, id, source, int64(boundary))
	if err != nil {
		return fail(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fail(err)
	} else if n != int64(boundary)+1 {
		return fail(corruptAt(source, 0, "session %s holds %d rows for seqs 0 … %d; %d are missing", strconv.Quote(source), n, boundary, int64(boundary)+1-n))
	}
	r := sessionRow{incarnation: inc, nextSeq: int64(boundary) + 1}
	if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, r.nextSeq, id).Scan(&r.revision); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}
