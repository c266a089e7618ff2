package sqlite

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Table implements sqlstore.Dialect: the tables live in the database's
// main schema.
func (s *store) Table(t string) string { return t }

// Param implements sqlstore.Dialect: ?NNN.
func (s *store) Param(n int) string { return "?" + strconv.Itoa(n) }

// QueryRow implements sqlstore.Dialect.
func (s *store) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return s.db.QueryRowContext(ctx, query, args...)
}

// Query implements sqlstore.Dialect.
func (s *store) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, func(), error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	return rows, func() { rows.Close() }, nil
}

// tx adapts a *sql.Tx to sqlstore.Tx.
type tx struct{ *sql.Tx }

// Exec implements sqlstore.Tx.
func (t tx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.ExecContext(ctx, query, args...)
	return err
}

// QueryRow implements sqlstore.Tx.
func (t tx) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.QueryRowContext(ctx, query, args...)
}

// Salvage implements sqlstore.Salvager: the store's damage scan and its
// read of a valid prefix.
func (s space) Salvage() sqlstore.Salvage {
	return sqlstore.Salvage{
		Op:    op,
		Scan:  s.scanDamaged,
		Fetch: s.readChunk,
	}
}

// Lifecycle implements sqlstore.Lifecycler, the store's delete
// capability: the audit table keeps the time in Unix microseconds; a
// change runs in a BEGIN IMMEDIATE transaction after the identity check.
func (s space) Lifecycle() sqlstore.Lifecycle {
	return sqlstore.Lifecycle{
		Begin: s.beginChange,
		Lock: func(ctx context.Context, t sqlstore.Tx, id string) (bool, error) {
			_, found, err := s.session(ctx, t.(tx).StmtContext(ctx, s.stmts.session), id)
			return found, err
		},
		InsertAudit: func(r sdk.AuditRecord) (string, []any) {
			return "INSERT INTO audit(tenant, time_us, op, session_id, events, digest, reason, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
				[]any{s.tenant, r.Time.UnixMicro(), string(r.Op), r.Session, int64(r.Events), r.Digest, r.Reason, r.By}
		},
		Audit: func(ctx context.Context) ([]sdk.AuditRecord, error) {
			rows, err := s.db.QueryContext(ctx, "SELECT time_us, op, session_id, events, digest, reason, actor FROM audit WHERE tenant = ? ORDER BY id", s.tenant)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			return sqlstore.Collect(rows, func(row sqlstore.Row) (sdk.AuditRecord, error) {
				var r sdk.AuditRecord
				var us int64
				err := row.Scan(&us, &r.Op, &r.Session, &r.Events, &r.Digest, &r.Reason, &r.By)
				r.Time = time.UnixMicro(us).UTC()
				return r, err
			})
		},
	}
}

// beginChange begins the BEGIN IMMEDIATE transaction of a change of the
// delete capability, after the identity check.
func (s *store) beginChange(ctx context.Context) (sqlstore.Tx, func() error, func(), error) {
	t, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (_txlock)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := s.checkIdentity(ctx, t); err != nil {
		t.Rollback()
		return nil, nil, nil, err
	}
	return tx{t}, t.Commit, func() { t.Rollback() }, nil
}
