package postgres

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Table implements sqlstore.Dialect: the tables live in the configured
// schema.
func (s *store) Table(t string) string { return s.q() + "." + t }

// Param implements sqlstore.Dialect: $n.
func (s *store) Param(n int) string { return "$" + strconv.Itoa(n) }

// QueryRow implements sqlstore.Dialect on the pool.
func (s *store) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return s.pool.QueryRow(ctx, query, args...)
}

// Query implements sqlstore.Dialect on the pool.
func (s *store) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, func(), error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, rows.Close, nil
}

// tx adapts a pgx.Tx to sqlstore.Tx.
type tx struct{ pgx.Tx }

// Exec implements sqlstore.Tx.
func (t tx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.Tx.Exec(ctx, query, args...)
	return err
}

// QueryRow implements sqlstore.Tx.
func (t tx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.Tx.QueryRow(ctx, query, args...)
}

// Salvage implements sqlstore.Salvager: the store's damage scan and its
// read of a valid prefix.
func (s space) Salvage() sqlstore.Salvage {
	return sqlstore.Salvage{Op: op, Scan: s.scanDamaged, Fetch: s.fetch}
}

// Lifecycle implements sqlstore.Lifecycler, the store's delete
// capability: a change locks the sessions row first, so a hold and a
// delete of one session never interleave, and a Delete removes the
// session's torn_rows artifacts with it.
func (s space) Lifecycle() sqlstore.Lifecycle {
	return sqlstore.Lifecycle{
		Begin: s.beginChange,
		Lock: func(ctx context.Context, t sqlstore.Tx, id string) (bool, error) {
			_, found, err := s.session(ctx, t.(tx).Tx, id, true)
			return found, err
		},
		InsertAudit: func(r sdk.AuditRecord) (string, []any) {
			return "INSERT INTO " + s.q() + ".audit(tenant, at, op, session_id, events, digest, reason, actor) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
				[]any{s.tenant, r.Time, string(r.Op), r.Session, int64(r.Events), r.Digest, r.Reason, r.By}
		},
		Audit: func(ctx context.Context) ([]sdk.AuditRecord, error) {
			rows, err := s.pool.Query(ctx, "SELECT at, op, session_id, events, digest, reason, actor FROM "+s.q()+".audit WHERE tenant = $1 ORDER BY seq", s.tenant)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			return sqlstore.Collect(rows, func(row sqlstore.Row) (sdk.AuditRecord, error) {
				var r sdk.AuditRecord
				var at time.Time
				var o string
				var events int64
				err := row.Scan(&at, &o, &r.Session, &events, &r.Digest, &r.Reason, &r.By)
				r.Time, r.Op, r.Events = at.UTC(), sdk.AuditOp(o), sdk.Offset(events)
				return r, err
			})
		},
		Purge: []string{"torn_rows"},
	}
}

// beginChange begins the read-write transaction of a change of the
// delete capability.
func (s *store) beginChange(ctx context.Context) (sqlstore.Tx, func() error, func(), error) {
	t, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	return tx{t}, func() error { return t.Commit(ctx) }, func() { t.Rollback(context.Background()) }, nil
}
