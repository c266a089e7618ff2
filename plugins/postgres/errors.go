package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of every *sdk.Error this package returns.
const op = "postgres"

// newErr builds an *sdk.Error for session id ("" for none).
func newErr(code sdk.Code, id, format string, args ...any) *sdk.Error {
	return sqlstore.NewErr(op, code, id, format, args...)
}

func corruptAt(id string, seq int64, format string, args ...any) *sdk.Error {
	return sqlstore.CorruptAt(op, id, seq, format, args...)
}

// redacted is an error whose text has the DSN's password blanked out.
type redacted struct {
	err    error
	secret string
}

func (r *redacted) Error() string {
	return strings.ReplaceAll(r.err.Error(), r.secret, "xxxxx")
}

func (r *redacted) Unwrap() error { return r.err }

// redact returns err with the password of dsn blanked out of its text, so
// no error of this package ever shows it (pgx already leaves it out of its
// own messages; this also covers the drivers' and the network's).
func redact(err error, dsn string) error {
	if err == nil {
		return nil
	}
	pw := password(dsn)
	if pw == "" {
		return err
	}
	return &redacted{err: err, secret: pw}
}

// password is the password dsn sets, or "" when it sets none.
func password(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil || cfg.Password == "" {
		return ""
	}
	return cfg.Password
}

// dbErr turns an error of a database call into an *sdk.Error
// (sqlstore.DBErr, with the codes of Classify), its cause redacted.
func (s *store) dbErr(ctx context.Context, id, what string, err error) error {
	return sqlstore.DBErr(ctx, s, id, what, err)
}

// Op implements sqlstore.Dialect.
func (s *store) Op() string { return op }

// Classify implements sqlstore.Dialect: a serialization failure, a
// deadlock, too many connections, a lock timeout or a cancelled statement
// is BACKEND_BUSY; data_corrupted and index_corrupted are CORRUPT_LOG.
func (s *store) Classify(err error, what string) (sdk.Code, string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "53300", "55P03", "57014":
			return sdk.CodeBackendBusy, what + ": the database is busy (SQLSTATE " + pe.Code + "); retry later", true
		case "XX001", "XX002":
			return sdk.CodeCorruptLog, what + ": the database reports damaged data (SQLSTATE " + pe.Code + ")", true
		}
	}
	return "", "", false
}

// Failed implements sqlstore.Dialect.
func (s *store) Failed(what string) string { return what + " failed on schema " + s.schema }

// Cause implements sqlstore.Dialect: err with the DSN's password blanked
// out.
func (s *store) Cause(err error) error { return redact(err, s.dsn) }

// isUniqueViolation reports a duplicate key.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
