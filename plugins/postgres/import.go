package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.Importer = (*Backend)(nil)

// Import implements sdk.Importer (docs/storage.md, "Importing"): it
// creates h as Create does (its claim taken), then in one transaction
// stores its sessions row and the rows of every batch, as Append would
// store them, and returns the write handle. No other transaction sees any
// of it before the commit; a failure, a lost connection or a killed
// process rolls it all back.
func (b *Backend) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	return sqlstore.Materialize(ctx, func() (sdk.Opened, error) { return b.create(ctx, h, true) }, func(handle string) (sdk.Durable, error) {
		return b.wholeTx(ctx, st, handle, "import", func(tx pgx.Tx, id string, r *sessionRow) error {
			var size int64
			err := events(func(batch [][]byte) error {
				if err := handles.Ended(ctx, op, "import"); err != nil {
					return err
				}
				rows, n, err := st.prepare(id, sdk.Seq(r.nextSeq), batch, b.compressMin)
				if err == nil && len(rows) > 0 {
					err = st.insert(ctx, tx, id, rows)
				}
				if err != nil {
					return err
				}
				r.nextSeq += int64(len(rows))
				size += n
				return nil
			})
			if err != nil {
				return err
			}
			return tx.QueryRow(ctx, "UPDATE "+st.q()+".sessions SET next_seq = $2, revision = 1, size_bytes = size_bytes + $3 WHERE tenant = $4 AND id = $1 RETURNING revision, size_bytes",
				id, r.nextSeq, size, st.tenant).Scan(&r.revision, &r.sizeBytes)
		})
	}, b.Close)
}
