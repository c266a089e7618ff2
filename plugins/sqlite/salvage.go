package sqlite

import (
	"context"
	"database/sql"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.SalvageReader = (*Backend)(nil)

// ReadDamaged reads the stored session id as salvage needs it, without a
// claim and without changing anything (sqlstore.Salvage.ReadDamaged): fn
// gets the longest valid prefix (the rows before the first damaged one),
// and the reply locates the damage by row, its Tail the canonical JSON
// lines a torn-row artifact holds. A sessions row that fails the format
// gate or the header check is refused as Open refuses it.
func (b *Backend) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	return sqlstore.ReadDamaged(ctx, op, id, fn, b.store)
}

// scanDamaged reads the sessions row of id and scans its rows in one read
// transaction.
func (s space) scanDamaged(ctx context.Context, id string) (sqlstore.Scanned, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return sqlstore.Scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	defer tx.Rollback()
	r, found, err := s.session(ctx, tx.StmtContext(ctx, s.stmts.session), id)
	if err != nil {
		return sqlstore.Scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	if !found {
		return sqlstore.Scanned{}, handles.NotFound(op, id)
	}
	h, err := s.header(r, id)
	if err != nil {
		return sqlstore.Scanned{}, err
	}
	sc, err := s.scan(ctx, tx, id, r.nextSeq, false)
	if err != nil {
		return sqlstore.Scanned{}, err
	}
	if err := tx.Rollback(); err != nil {
		return sqlstore.Scanned{}, s.dbErr(ctx, id, "read damaged", err)
	}
	return sqlstore.Scanned{Header: h, Scan: sc}, nil
}
