package sdk

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// Code is a stable, UPPER_SNAKE error code. A Code is itself an error, so
// errors.Is(err, CodeXxx) matches any *Error carrying that code anywhere in
// its chain.
type Code string

// Error returns the code itself.
func (c Code) Error() string { return string(c) }

// Error is the error type of every logbook component. Only Code is stable;
// Detail names the broken rule and the offending values for humans.
type Error struct {
	Code      Code
	Op        string // component or operation: "session", "restore", "fork", "jsonl", "flush", …
	SessionID string // "" when not applicable
	Seq       *int64 // offending seq; nil when not applicable (set it with WithSeq)
	Index     *int   // index in a seed, restore input or batch; nil when not applicable (set it with WithIndex)
	Detail    string // the broken rule and the offending values
	Err       error  // wrapped cause
	// Meta holds further machine-readable details by name, e.g. the
	// "expected" and "actual" log lengths of a SEQ_CONFLICT; nil when there
	// are none. Across gRPC each travels as one more ErrorInfo metadata
	// entry (see sdk/errinfo), so a name must not be one of the members
	// above (op, detail, session_id, seq, index, cause).
	Meta map[string]string
}

// Errorf builds an *Error with a formatted detail and no session, seq,
// index or cause; add them with the With methods.
func Errorf(code Code, op, format string, args ...any) *Error {
	return &Error{Code: code, Op: op, Detail: fmt.Sprintf(format, args...)}
}

// Wrapf builds an *Error with a formatted detail that wraps cause, keeping
// the cause's session when it is an *Error. It renders
// `<op>: <CODE>: <detail>: <cause>`, so the detail says what was being done
// and the cause says what went wrong.
func Wrapf(code Code, op string, cause error, format string, args ...any) *Error {
	w := &Error{Code: code, Op: op, Detail: fmt.Sprintf(format, args...), Err: cause}
	var inner *Error
	if errors.As(cause, &inner) {
		w.SessionID = inner.SessionID
	}
	return w
}

// Wrap builds an *Error without a detail that wraps cause, keeping the
// cause's session when it is an *Error.
func Wrap(code Code, op string, cause error) *Error {
	return Wrapf(code, op, cause, "")
}

// Error renders `<op>: <CODE>: <detail>` plus ` (session "<id>", seq <n>,
// index <i>)` for the parts that are set, and `: <cause>` when a cause is
// wrapped. A cause that starts with the same `<op>: ` (an error of the same
// component, or its text rebuilt from the wire) is rendered without it, so
// no op is rendered twice in a row.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Code))
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	var where []string
	if e.SessionID != "" {
		where = append(where, "session "+strconv.Quote(e.SessionID))
	}
	if e.Seq != nil {
		where = append(where, "seq "+strconv.FormatInt(*e.Seq, 10))
	}
	if e.Index != nil {
		where = append(where, "index "+strconv.Itoa(*e.Index))
	}
	if len(where) > 0 {
		b.WriteString(" (")
		b.WriteString(strings.Join(where, ", "))
		b.WriteString(")")
	}
	if e.Err != nil {
		cause := e.Err.Error()
		if e.Op != "" {
			cause = strings.TrimPrefix(cause, e.Op+": ")
		}
		b.WriteString(": ")
		b.WriteString(cause)
	}
	return b.String()
}

// Is reports whether target is the same Code, or an *Error with the same Code.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return e.Code == t
	case *Error:
		return t != nil && e.Code == t.Code
	}
	return false
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

// WithMeta returns a copy of e with the Meta entry name set to value; e's
// Meta is copied, not shared.
func (e *Error) WithMeta(name, value string) *Error {
	c := *e
	c.Meta = maps.Clone(e.Meta)
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	c.Meta[name] = value
	return &c
}

// MetaInt returns the Meta entry name as an integer; false when it is
// absent or not a decimal integer.
func (e *Error) MetaInt(name string) (int64, bool) {
	v, ok := e.Meta[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// WithSession returns a copy of e with SessionID set.
func (e *Error) WithSession(id string) *Error {
	c := *e
	c.SessionID = id
	return &c
}

// WithSeq returns a copy of e with Seq set.
func (e *Error) WithSeq(seq int64) *Error {
	c := *e
	c.Seq = &seq
	return &c
}

// WithIndex returns a copy of e with Index set.
func (e *Error) WithIndex(index int) *Error {
	c := *e
	c.Index = &index
	return &c
}

// CodeOf returns the outermost code in err's chain, or "" when there is none.
// For a joined error it returns the first code found in depth-first order.
func CodeOf(err error) Code {
	if e := ErrorOf(err); e != nil {
		return e.Code
	}
	return ""
}

// ErrorOf returns the outermost logbook error in err's chain, the one whose
// code CodeOf returns: the *Error itself, or a bare Code as a new *Error
// holding only that code; nil when there is none. Transports render this
// error when they carry err.
func ErrorOf(err error) *Error {
	for err != nil {
		switch e := err.(type) {
		case *Error:
			return e
		case Code:
			return &Error{Code: e}
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if found := ErrorOf(inner); found != nil {
					return found
				}
			}
			return nil
		}
		err = errors.Unwrap(err)
	}
	return nil
}

// Retryable reports whether err's outermost code is one a caller may retry:
// IO_ERROR, BACKEND_BUSY, PLUGIN_UNAVAILABLE or TOO_MANY_LIVE_SESSIONS.
func Retryable(err error) bool {
	switch CodeOf(err) {
	case CodeIOError, CodeBackendBusy, CodePluginUnavailable, CodeTooManyLiveSessions:
		return true
	}
	return false
}
