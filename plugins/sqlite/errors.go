package sqlite

import (
	"context"
	"errors"
	"strconv"

	msqlite "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of every *sdk.Error this package returns.
const op = "sqlite"

// newErr builds an *sdk.Error for session id ("" for none).
func newErr(code sdk.Code, id, format string, args ...any) *sdk.Error {
	return sdk.Errorf(code, op, format, args...).WithSession(id)
}

func withSession(err error, id string) error {
	var e *sdk.Error
	if errors.As(err, &e) && e.SessionID == "" {
		return e.WithSession(id)
	}
	return err
}

// dbErr turns an error of a database call into an *sdk.Error: an
// *sdk.Error passes unchanged; an ended context is IO_ERROR wrapping the
// context's error; SQLITE_BUSY and SQLITE_LOCKED (a lock held past
// busy_timeout) are BACKEND_BUSY; SQLITE_CORRUPT is CORRUPT_LOG;
// SQLITE_NOTADB is SCHEMA_MISMATCH; everything else is IO_ERROR. All but an *sdk.Error wrap err.
func (s *store) dbErr(ctx context.Context, id, what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return err
	}
	wrap := func(code sdk.Code, detail string, cause error) error {
		return &sdk.Error{Code: code, Op: op, SessionID: id, Detail: detail, Err: cause}
	}
	if ctx.Err() != nil {
		return wrap(sdk.CodeIOError, what+" not done: the context ended", errors.Join(ctx.Err(), err))
	}
	var le *msqlite.Error
	if errors.As(err, &le) {
		switch le.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return wrap(sdk.CodeBackendBusy, what+": "+s.path+" is locked by another connection and stayed locked for busy_timeout "+strconv.FormatInt(s.busy.Milliseconds(), 10)+" ms; retry later, or raise busy_timeout", err)
		case sqlite3.SQLITE_CORRUPT:
			return wrap(sdk.CodeCorruptLog, what+": the database file "+s.path+" is damaged", err)
		case sqlite3.SQLITE_NOTADB:
			return wrap(sdk.CodeSchemaMismatch, what+": "+strconv.Quote(s.path)+" is not an SQLite database; point path at a logbook database or at a new file", err)
		}
	}
	return wrap(sdk.CodeIOError, what+" failed on "+s.path, err)
}
