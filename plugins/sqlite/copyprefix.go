package sqlite

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/google/uuid"
	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.PrefixCopier = (*Backend)(nil)

// copyRowsSQL copies a session's rows up to a seq into another session,
// verbatim: the stored data (TEXT or zstd BLOB) is never decoded.
const copyRowsSQL = "INSERT INTO events(tenant, session_id, " + eventColumns + ") SELECT tenant, ?, " + eventColumns +
	" FROM events WHERE tenant = ? AND session_id = ? AND seq <= ? ORDER BY seq"

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
	return sqlstore.Materialize(ctx, func() (sdk.Opened, error) { return b.Create(ctx, child) }, func(handle string) (sdk.Durable, error) {
		return b.commitWhole(ctx, st, handle, func(id string, hdr []byte, h sdk.Header) (sdk.Durable, string, error) {
			return st.copyTx(ctx, id, hdr, h, source, boundary)
		})
	}, b.Close)
}

// commitWhole materializes the pending create of the write handle named
// handle in the transaction tx runs (CopyPrefix, Import), given its
// session id and canonical header, with the bookkeeping of commit.
func (b *Backend) commitWhole(ctx context.Context, st space, handle string, tx func(id string, hdr []byte, h sdk.Header) (sdk.Durable, string, error)) (sdk.Durable, error) {
	hd, err := b.writable(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
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
	d, inc, err := tx(hd.id, hdr, h)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil {
		hd.pending, hd.incarnation = nil, inc
		b.pending.Release(hd.id, hd)
		hd.view.Saw(int64(d.NextSeq))
	}
	return d, err
}

// beginNew begins the BEGIN IMMEDIATE transaction that stores the new
// session id whole (CopyPrefix, Import): after the identity check, a
// stored id is SESSION_ALREADY_EXISTS, else its sessions row (hdr, its
// canonical header) is inserted with a new incarnation. fail maps an
// error of the transaction, named what; on error tx is nil or rolled
// back.
func (s space) beginNew(ctx context.Context, id string, hdr []byte, h sdk.Header, what string) (tx *sql.Tx, inc string, fail func(error) (sdk.Durable, string, error), err error) {
	fail = func(err error) (sdk.Durable, string, error) {
		return sdk.Durable{}, "", s.dbErr(ctx, id, what, err)
	}
	if tx, err = s.db.BeginTx(ctx, nil); err != nil { // BEGIN IMMEDIATE
		return nil, "", fail, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err := s.checkIdentity(ctx, tx); err != nil {
		return tx, "", fail, err
	}
	if _, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id); err != nil {
		return tx, "", fail, err
	} else if found {
		return tx, "", fail, handles.AlreadyExists(op, id, "another instance or process stored it first")
	}
	inc = uuid.NewString()
	if _, err := tx.StmtContext(ctx, s.stmts.insertSession).ExecContext(ctx, s.tenant, id, sdk.FormatVersion, h.CreatedAt, string(hdr), inc); err != nil {
		return tx, "", fail, err
	}
	return tx, inc, fail, nil
}

// copyTx is the transaction of CopyPrefix: the child's sessions row (hdr,
// its canonical header) and the source's rows up to boundary.
func (s space) copyTx(ctx context.Context, id string, hdr []byte, h sdk.Header, source string, boundary sdk.Seq) (sdk.Durable, string, error) {
	tx, inc, fail, err := s.beginNew(ctx, id, hdr, h, "copy prefix")
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
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
	res, err := tx.ExecContext(ctx, copyRowsSQL, id, s.tenant, source, int64(boundary))
	if err != nil {
		return fail(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fail(err)
	} else if n != int64(boundary)+1 {
		return fail(corruptAt(source, 0, "session %s holds %d rows for seqs 0 … %d; %d are missing", strconv.Quote(source), n, boundary, int64(boundary)+1-n))
	}
	r := sessionRow{incarnation: inc, nextSeq: int64(boundary) + 1}
	if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, r.nextSeq, s.tenant, id).Scan(&r.revision); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}
