package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.SalvageReader = (*Backend)(nil)

// ReadDamaged implements sdk.SalvageReader (sqlstore.Salvage.ReadDamaged):
// it reads the stored session id without a claim and without changing
// anything, its rows in one snapshot. fn gets the longest valid prefix
// (the rows before the first damaged one), and the reply locates the
// damage by row, its Tail the JSON lines a torn_rows artifact holds. A
// sessions row that fails the format gate or the header check is refused
// as Open refuses it.
func (b *Backend) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	return sqlstore.ReadDamaged(ctx, op, id, fn, b.store)
}

// scanDamaged reads the sessions row of id and scans its rows in one
// snapshot, keeping the valid prefix's envelopes when they fit.
func (s space) scanDamaged(ctx context.Context, id string) (sqlstore.Scanned, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return sqlstore.Scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	defer tx.Rollback(context.Background())
	r, found, err := s.session(ctx, tx, id, false)
	if err != nil {
		return sqlstore.Scanned{}, err
	}
	if !found {
		return sqlstore.Scanned{}, handles.NotFound(op, id)
	}
	h, err := s.header(r, id)
	if err != nil {
		return sqlstore.Scanned{}, err
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, true)
	if err != nil {
		return sqlstore.Scanned{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return sqlstore.Scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	return sqlstore.Scanned{Header: h, Scan: sc}, nil
}
