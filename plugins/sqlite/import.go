package sqlite

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
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
	return sqlstore.Materialize(ctx, func() (sdk.Opened, error) { return b.create(ctx, h, true) }, func(handle string) (sdk.Durable, error) {
		return b.commitWhole(ctx, st, handle, func(id string, hdr []byte, h sdk.Header) (sdk.Durable, string, error) {
			return st.importTx(ctx, id, hdr, h, b.compressMin, events)
		})
	}, b.Close)
}

// importTx is the transaction of Import: the sessions row (hdr, the
// canonical header) and the rows of every batch of events.
func (s space) importTx(ctx context.Context, id string, hdr []byte, h sdk.Header, compressMin int, events func(yield func(batch [][]byte) error) error) (sdk.Durable, string, error) {
	tx, inc, fail, err := s.beginNew(ctx, id, hdr, h, "import")
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
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
	if err := tx.StmtContext(ctx, s.stmts.advance).QueryRowContext(ctx, r.nextSeq, s.tenant, id).Scan(&r.revision); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return sdk.Durable{NextSeq: sdk.Offset(r.nextSeq), Revision: s.revision(r)}, inc, nil
}

var _ sdk.Importer = (*Backend)(nil)
