package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of every *sdk.Error this package returns.
const op = "postgres"

// newErr builds an *sdk.Error for session id ("" for none).
func newErr(code sdk.Code, id, format string, args ...any) *sdk.Error {
	return sdk.Errorf(code, op, format, args...).WithSession(id)
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

// dbErr turns an error of a database call into an *sdk.Error: an
// *sdk.Error passes unchanged; an ended context is IO_ERROR wrapping the
// context's error; a serialization failure, a deadlock, too many
// connections or a lock timeout is BACKEND_BUSY; data_corrupted and
// index_corrupted are CORRUPT_LOG; everything else is IO_ERROR. All but
// an *sdk.Error wrap err, redacted.
func (s *store) dbErr(ctx context.Context, id, what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return err
	}
	wrap := func(code sdk.Code, detail string) error {
		return &sdk.Error{Code: code, Op: op, SessionID: id, Detail: detail, Err: redact(err, s.dsn)}
	}
	if ctx.Err() != nil {
		return wrap(sdk.CodeIOError, what+" not done: the context ended")
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "53300", "55P03", "57014":
			return wrap(sdk.CodeBackendBusy, what+": the database is busy (SQLSTATE "+pe.Code+"); retry later")
		case "XX001", "XX002":
			return wrap(sdk.CodeCorruptLog, what+": the database reports damaged data (SQLSTATE "+pe.Code+")")
		}
	}
	return wrap(sdk.CodeIOError, what+" failed on schema "+s.schema)
}

// isUniqueViolation reports a duplicate key.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
