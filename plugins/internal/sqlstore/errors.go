package sqlstore

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/sdk"
)

// NewErr builds an *sdk.Error of the backend op for session id ("" for
// none).
func NewErr(op string, code sdk.Code, id, format string, args ...any) *sdk.Error {
	return sdk.Errorf(code, op, format, args...).WithSession(id)
}

// CorruptAt is the CORRUPT_LOG of the backend op for the event seq of
// session id.
func CorruptAt(op, id string, seq int64, format string, args ...any) *sdk.Error {
	return NewErr(op, sdk.CodeCorruptLog, id, format, args...).WithSeq(seq)
}

// DBErr turns an error of a database call about session id ("" for
// none) into an *sdk.Error: nil stays nil; an *sdk.Error passes
// unchanged; when ctx has ended it is IO_ERROR wrapping ctx's error and
// err; else the code d.Classify gives, or IO_ERROR. All but an *sdk.Error
// wrap d.Cause(err).
func DBErr(ctx context.Context, d Errors, id, what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sdk.Error
	if errors.As(err, &se) {
		return err
	}
	wrap := func(code sdk.Code, detail string, cause error) error {
		return &sdk.Error{Code: code, Op: d.Op(), SessionID: id, Detail: detail, Err: cause}
	}
	if ctx.Err() != nil {
		return wrap(sdk.CodeIOError, what+" not done: the context ended", errors.Join(ctx.Err(), d.Cause(err)))
	}
	if code, detail, ok := d.Classify(err, what); ok {
		return wrap(code, detail, d.Cause(err))
	}
	return wrap(sdk.CodeIOError, d.Failed(what), d.Cause(err))
}
