package sqlite

import (
	"context"
	"errors"
	"strconv"

	msqlite "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of every *sdk.Error this package returns.
const op = "sqlite"

// newErr builds an *sdk.Error for session id ("" for none).
func newErr(code sdk.Code, id, format string, args ...any) *sdk.Error {
	return sqlstore.NewErr(op, code, id, format, args...)
}

func corruptAt(id string, seq int64, format string, args ...any) *sdk.Error {
	return sqlstore.CorruptAt(op, id, seq, format, args...)
}

func withSession(err error, id string) error {
	var e *sdk.Error
	if errors.As(err, &e) && e.SessionID == "" {
		return e.WithSession(id)
	}
	return err
}

// dbErr turns an error of a database call into an *sdk.Error
// (sqlstore.DBErr, with the codes of Classify).
func (s *store) dbErr(ctx context.Context, id, what string, err error) error {
	return sqlstore.DBErr(ctx, s, id, what, err)
}

// Op implements sqlstore.Dialect.
func (s *store) Op() string { return op }

// Classify implements sqlstore.Dialect: SQLITE_BUSY and SQLITE_LOCKED (a
// lock held past busy_timeout) are BACKEND_BUSY; SQLITE_CORRUPT is
// CORRUPT_LOG; SQLITE_NOTADB is SCHEMA_MISMATCH.
func (s *store) Classify(err error, what string) (sdk.Code, string, bool) {
	var le *msqlite.Error
	if errors.As(err, &le) {
		switch le.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return sdk.CodeBackendBusy, what + ": " + s.path + " is locked by another connection and stayed locked for busy_timeout " + strconv.FormatInt(s.busy.Milliseconds(), 10) + " ms; retry later, or raise busy_timeout", true
		case sqlite3.SQLITE_CORRUPT:
			return sdk.CodeCorruptLog, what + ": the database file " + s.path + " is damaged", true
		case sqlite3.SQLITE_NOTADB:
			return sdk.CodeSchemaMismatch, what + ": " + strconv.Quote(s.path) + " is not an SQLite database; point path at a logbook database or at a new file", true
		}
	}
	return "", "", false
}

// Failed implements sqlstore.Dialect.
func (s *store) Failed(what string) string { return what + " failed on " + s.path }

// Cause implements sqlstore.Dialect: an error of the driver holds no
// secret.
func (s *store) Cause(err error) error { return err }
