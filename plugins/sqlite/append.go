package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/google/uuid"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Append stores events at firstSeq onwards in one BEGIN IMMEDIATE
// transaction under compare-and-set on next_seq, all or nothing
// (docs/storage.md). Checks run in this order: the context, HANDLE_CLOSED,
// READ_ONLY_HANDLE, INVALID_SEQ, ENVELOPE_INVALID and SEQ_NOT_CONTIGUOUS
// per event, then OWNERSHIP_LOST, and in the transaction SCHEMA_MISMATCH,
// SESSION_ALREADY_EXISTS (a create another instance stored first) and
// SEQ_CONFLICT. An empty batch is a compare-and-set probe that stores and
// materializes nothing.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "append"); err != nil {
		return sdk.Durable{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.writable(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if err := handles.CheckAppend(hd.id, firstSeq); err != nil {
		return sdk.Durable{}, err
	}
	rows := prepareRows(events, firstSeq, hd.id, b.compressMin, st.codec)
	defer rows.wait()
	if !rows.parallel {
		if e := rows.firstErr(); e != nil {
			return sdk.Durable{}, e
		}
	}
	hd.ops.Lock()
	defer hd.ops.Unlock()
	d, err := b.commit(ctx, st, hd, firstSeq, rows, false)
	if err != nil {
		if e := rows.firstErr(); e != nil { // a bad event wins over any other failure
			return sdk.Durable{}, e
		}
		return sdk.Durable{}, err
	}
	return d, nil
}

// commit runs one append transaction for hd (materializing a pending
// create when rows is non-empty or materialize is set); hd.ops is held.
func (b *Backend) commit(ctx context.Context, st space, hd *handle, firstSeq sdk.Seq, rows *batchRows, materialize bool) (sdk.Durable, error) {
	b.mu.Lock()
	closed, hdr, h, inc := hd.closed, hd.pending, hd.header, hd.incarnation
	b.mu.Unlock()
	if closed {
		return sdk.Durable{}, handles.HandleClosed(op, hd.name)
	}
	if hdr != nil {
		if firstSeq != 0 {
			return sdk.Durable{}, handles.SeqConflict(op, hd.id, int64(firstSeq), 0)
		}
		if rows.len() == 0 && !materialize {
			return sdk.Durable{}, nil
		}
	}
	if err := st.holds(hd.id, hd); err != nil {
		return sdk.Durable{}, err
	}
	d, inc, err := st.appendTx(ctx, hd.id, hdr, h, inc, firstSeq, rows)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && hdr != nil {
		hd.pending, hd.incarnation = nil, inc
		b.pending.Release(hd.id, hd)
	}
	if err == nil {
		hd.view.Saw(int64(d.NextSeq))
	}
	if hd.closed {
		st.release(hd.id, hd) // a Close that raced the append
	}
	if err != nil {
		return sdk.Durable{}, err
	}
	return d, nil
}

// Flush materializes a pending create and reports the stored next seq and
// revision: every acknowledged append is already durable (synchronous =
// FULL). On a read handle it reports what the handle may read.
func (b *Backend) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "flush"); err != nil {
		return sdk.Durable{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if hd.write {
		hd.ops.Lock()
		defer hd.ops.Unlock()
		b.mu.Lock()
		pending := hd.pending != nil
		b.mu.Unlock()
		if pending {
			return b.commit(ctx, st, hd, 0, nil, true)
		}
		if err := st.holds(hd.id, hd); err != nil {
			return sdk.Durable{}, err
		}
	}
	end, r, err := b.end(ctx, st, hd, false)
	if err != nil {
		return sdk.Durable{}, err
	}
	b.mu.Lock()
	inc := hd.incarnation
	b.mu.Unlock()
	if hd.write && r.incarnation != inc {
		return sdk.Durable{}, newErr(sdk.CodeOwnershipLost, hd.id, "session %s was replaced since this handle opened it (incarnation %s, now %s)", strconv.Quote(hd.id), inc, r.incarnation)
	}
	return sdk.Durable{NextSeq: sdk.Offset(end), Revision: st.revision(r)}, nil
}

// appendTx is the append transaction of docs/storage.md. hdr is the canonical
// header of a pending create (materialized here) or nil; inc the
// incarnation the handle owns. It returns the new durable state and the
// session's incarnation.
func (s space) appendTx(ctx context.Context, id string, hdr []byte, h sdk.Header, inc string, firstSeq sdk.Seq, rows *batchRows) (d sdk.Durable, _ string, err error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return d, "", s.dbErr(ctx, id, "append", err)
	}
	defer tx.Rollback()
	fail := func(err error) (sdk.Durable, string, error) {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "append", err)
	}
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return fail(err)
	}
	switch {
	case hdr != nil && found:
		return fail(handles.AlreadyExists(op, id, "another instance or process stored it first"))
	case hdr != nil:
		inc = uuid.NewString()
		if _, err := tx.StmtContext(ctx, s.stmts.insertSession).ExecContext(ctx, s.tenant, id, sdk.FormatVersion, h.CreatedAt, string(hdr), inc); err != nil {
			return fail(err)
		}
		r = sessionRow{incarnation: inc}
	case !found:
		return fail(newErr(sdk.CodeOwnershipLost, id, "session %s is no longer stored", strconv.Quote(id)))
	case r.incarnation != inc:
		return fail(newErr(sdk.CodeOwnershipLost, id, "session %s was replaced since this handle opened it (incarnation %s, now %s)", strconv.Quote(id), inc, r.incarnation))
	case int64(firstSeq) != r.nextSeq:
		return fail(handles.SeqConflict(op, id, int64(firstSeq), r.nextSeq))
	}
	if n := rows.len(); n > 0 {
		if err := s.insert(ctx, tx, id, rows); err != nil {
			if isConstraint(err) {
				return fail(newErr(sdk.CodeSeqConflict, id, "compare-and-set failed: rows for seqs %d … %d already exist beyond the stored next seq %d (written by another writer); open the session again to cut them",
					firstSeq, int64(firstSeq)+int64(n)-1, r.nextSeq).WithSeq(int64(firstSeq)))
			}
			return fail(err)
		}
		next := int64(firstSeq) + int64(n)
		if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, next, s.tenant, id).Scan(&r.revision); err != nil {
			return fail(err)
		}
		r.nextSeq = next
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}

// insert inserts the batch's rows with the prepared statements, insertRows
// at a time, each run as soon as its rows are prepared. A bad event stops
// it with that event's error.
func (s space) insert(ctx context.Context, tx *sql.Tx, id string, rows *batchRows) error {
	var args []any
	bind := func(rows []row) []any {
		args = args[:0]
		for _, ev := range rows {
			args = append(args, s.tenant, id, ev.seq, ev.typ, ev.time, ev.dataValue(), nullText(ev.surfaceOp), nullText(ev.sources), ev.ignorableValue(), nullText(ev.operation))
		}
		return args
	}
	var many, one *sql.Stmt
	for from := 0; from < rows.len(); {
		n := insertRows
		if rows.len()-from < insertRows {
			n = 1
		}
		if e := rows.ready(from + n); e != nil {
			return e
		}
		stmt := &many
		if n == 1 {
			stmt = &one
		}
		if *stmt == nil {
			src := s.stmts.insertEvents
			if n == 1 {
				src = s.stmts.insertEvent
			}
			*stmt = tx.StmtContext(ctx, src)
		}
		if _, err := (*stmt).ExecContext(ctx, bind(rows.rows[from:from+n])...); err != nil {
			return err
		}
		from += n
	}
	return nil
}

// isConstraint reports a constraint violation (here: a duplicate seq).
func isConstraint(err error) bool {
	var le *msqlite.Error
	return errors.As(err, &le) && le.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
