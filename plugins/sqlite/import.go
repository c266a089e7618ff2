package sqlite

import (
	"context"

	"github.com/google/uuid"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Import implements sdk.Importer (docs/storage.md, "Importing"): it
// creates h as Create does, then stores its sessions row and the rows of
// every batch in one BEGIN IMMEDIATE transaction, and returns the write
// handle. Until the commit no other connection sees any of it; a failure,
// a crash or a killed process rolls it all back. The transaction holds
// the database's write lock while the batches arrive, so other writers
// wait (busy_timeout) for as long as the import takes.
func (b *Backend) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := b.create(ctx, h, true)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd, err := b.writable(o.Handle)
	if err == nil {
		var d sdk.Durable
		d, err = b.commitWhole(ctx, st, hd, func(hdr []byte, h sdk.Header) (sdk.Durable, string, error) {
			return st.importTx(ctx, hd.id, hdr, h, b.compressMin, events)
		})
		o.NextSeq, o.Revision = d.NextSeq, d.Revision
	}
	if err != nil {
		_ = b.Close(context.WithoutCancel(ctx), o.Handle) // abandons the create
		return sdk.Opened{}, err
	}
	return o, nil
}

// importTx is the transaction of Import: the sessions row (hdr, the
// canonical header) and the rows of every batch of events.
func (s *store) importTx(ctx context.Context, id string, hdr []byte, h sdk.Header, compressMin int, events func(yield func(batch [][]byte) error) error) (sdk.Durable, string, error) {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "import", err)
	}
	defer tx.Rollback()
	fail := func(err error) (sdk.Durable, string, error) {
		return sdk.Durable{}, "", s.dbErr(ctx, id, "import", err)
	}
	if err := s.checkIdentity(ctx, tx); err != nil {
		return fail(err)
	}
	if _, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id); err != nil {
		return fail(err)
	} else if found {
		return fail(handles.AlreadyExists(op, id, "another instance or process stored it first"))
	}
	inc := uuid.NewString()
	if _, err := tx.StmtContext(ctx, s.stmts.insertSession).ExecContext(ctx, id, sdk.FormatVersion, h.CreatedAt, string(hdr), inc); err != nil {
		return fail(err)
	}
	r := sessionRow{incarnation: inc}
	err = events(func(batch [][]byte) error {
		if err := handles.Ended(ctx, op, "import"); err != nil {
			return err
		}
		rows := prepareRows(batch, sdk.Seq(r.nextSeq), id, compressMin, s.codec)
		defer rows.wait()
		if err := s.insert(ctx, tx, id, rows); err != nil {
			return err
		}
		if e := rows.firstErr(); e != nil {
			return e
		}
		r.nextSeq += int64(len(batch))
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, r.nextSeq, id).Scan(&r.revision); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}

var _ sdk.Importer = (*Backend)(nil)
