package client

import (
	"context"
	"errors"
	"slices"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Backoff between the attempts of AppendRetry, by default.
const (
	DefaultRetryBackoff    = 10 * time.Millisecond
	DefaultRetryMaxBackoff = time.Second
)

// RetryOptions tune Session.AppendRetry. Every zero field takes the default it
// names.
type RetryOptions struct {
	// Flush makes the events durable on every backend before AppendRetry
	// returns, flushing in the same round trip as the append; a failed
	// flush is retried like a failed append.
	Flush bool
	// MaxAttempts bounds the attempts; 0 retries until ctx ends (give it a
	// deadline).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each further one up to MaxBackoff; defaults DefaultRetryBackoff and
	// DefaultRetryMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// OperationID, when set, makes every attempt carry it (Session.AppendOnce):
	// the inputs are one atomic group, and an attempt after one that did
	// append them (its reply lost, or only its flush failed) is answered
	// with those events as a replay, flushed when Flush is set, without
	// reading the log back. A SEQ_CONFLICT then means other events are
	// where these would go, and is returned. An id that is not 1–128 bytes
	// of printable ASCII is OPERATION_ID_INVALID, refused before any call.
	OperationID string
	// OnRetry, when set, is called with each failure AppendRetry goes on
	// from: a failure it retries, and a SEQ_CONFLICT it resolved by finding
	// its own events in the log (where a retry without an expected seq
	// would have appended them twice).
	OnRetry func(err error)
}

// AppendRetry appends ins at log length expected (the seq the first of
// them must get), retrying a failure that may pass — a retryable code
// (sdk.Retryable: the server or a plugin unavailable, an I/O error, a busy
// backend) or FLUSH_FAILED of a session that is not fenced (see Fenced) —
// with backoff, until it succeeds, fails otherwise, or ctx ends.
//
// Every attempt carries the expected length, so no retry appends an event
// twice: when an earlier attempt did append the events (its reply was lost,
// or only its flush failed) the retry gets SEQ_CONFLICT, and AppendRetry
// reads the events at expected back and compares them with its own (type,
// data by value, surfaceOp, sourceEventSeqs, ignorable). If they are its
// own it goes on as if that attempt had succeeded: with the rest of the
// inputs when only some were appended (and nothing follows them), then
// with the flush; events after all of its own (a resume's closers after a
// server restart) do not matter. If the events at expected are not its own
// — another writer got there first, or a resume appended its closers and
// marker where they would have gone — it returns the SEQ_CONFLICT.
//
// Any failure is an *AppendError whose Appended counts the inputs
// appended over all attempts, from seq expected. The result is the stored
// events, one per input.
func (s *Session) AppendRetry(ctx context.Context, expected sdk.Offset, ins []events.Input, o RetryOptions) ([]events.Event, error) {
	if o.Backoff <= 0 {
		o.Backoff = DefaultRetryBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultRetryMaxBackoff
	}
	r := retrier{s: s, ctx: ctx, o: o, wait: o.Backoff}
	out := make([]events.Event, 0, len(ins))
	// fail gives up with err; last counts what the failed attempt appended.
	fail := func(err error, last int64) ([]events.Event, error) {
		var ae *AppendError
		if errors.As(err, &ae) {
			err = ae.Err
		}
		return nil, &AppendError{Appended: int64(len(out)) + last, FirstSeq: int64(expected), Err: err}
	}
	once := o.OperationID != ""
	if once {
		if err := sdk.ValidateOperationID(o.OperationID); err != nil {
			return fail(err, 0)
		}
	}
	for len(out) < len(ins) || len(ins) == 0 {
		at := expected + sdk.Offset(len(out))
		rest := ins[len(out):]
		evs, _, err := s.append(ctx, appendCall{expected: &at, flush: o.Flush, group: once, operationID: o.OperationID}, rest)
		if err == nil {
			return append(out, evs...), nil
		}
		if _, actual, ok := SeqConflictOf(err); ok && !once && actual > at && len(rest) > 0 {
			mine, rerr := r.ownEvents(at, actual, rest)
			if rerr != nil {
				return fail(rerr, 0)
			}
			out = append(out, mine...)
			if len(mine) < len(rest) && (len(mine) == 0 || at+sdk.Offset(len(mine)) != actual) {
				return fail(err, 0) // another writer's events at or after ours
			}
			r.notify(err)
			continue // with the rest, if any
		}
		if gerr := r.again(err); gerr != nil {
			var ae *AppendError
			if errors.As(err, &ae) && ae.FirstSeq == int64(at) {
				return fail(gerr, ae.Appended)
			}
			return fail(gerr, 0)
		}
	}
	if o.Flush {
		if err := r.flush(); err != nil {
			return fail(err, 0)
		}
	}
	return out, nil
}

// retrier is the state of one AppendRetry.
type retrier struct {
	s        *Session
	ctx      context.Context
	o        RetryOptions
	attempts int
	wait     time.Duration
}

// again returns nil after the backoff when err may pass on a retry and
// attempts remain; else the error to give up with.
func (r *retrier) again(err error) error {
	r.attempts++
	if !retryable(err) {
		return err
	}
	if r.ctx.Err() != nil || (r.o.MaxAttempts > 0 && r.attempts >= r.o.MaxAttempts) {
		return err
	}
	r.notify(err)
	t := time.NewTimer(r.wait)
	defer t.Stop()
	select {
	case <-r.ctx.Done():
		return err
	case <-t.C:
	}
	r.wait = min(2*r.wait, r.o.MaxBackoff)
	return nil
}

// notify hands err to OnRetry.
func (r *retrier) notify(err error) {
	if r.o.OnRetry != nil {
		r.o.OnRetry(err)
	}
}

// Fenced reports whether err says its session is fenced: a final
// persistence failure stopped its writes, so a failed flush of it cannot
// pass on a retry. Releasing the session lets the next append resume it
// from what is stored; events it held beyond that are gone (none of them
// was acknowledged as durable).
func Fenced(err error) bool {
	var e *sdk.Error
	return errors.Is(err, sdk.CodeSessionFenced) || (errors.As(err, &e) && e.Meta["fenced"] == "true")
}

// retryable reports whether a failed attempt may pass when repeated: a
// retryable code or FLUSH_FAILED from the server; from the transport, only
// a server that is unreachable or broke the call, not a refusal that a
// retry would meet again (a wrong token, a request over the size limit).
func retryable(err error) bool {
	if sdk.CodeOf(err) == sdk.CodeFlushFailed {
		return !Fenced(err)
	}
	if !sdk.Retryable(err) {
		return false
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return true // the server's own code, or a transport failure before any status
	}
	switch ce.Code() {
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeAborted, connect.CodeUnknown, connect.CodeInternal:
		return true
	}
	return false
}

// ownEvents reads the log [at, end) and returns its leading events that
// are the inputs' (the first of them is ins[0], …), stopping at the first
// that is not. A failed read is retried like an append.
func (r *retrier) ownEvents(at, end sdk.Offset, ins []events.Input) ([]events.Event, error) {
	end = min(end, at+sdk.Offset(len(ins)))
	for {
		var mine []events.Event
		var rerr error
		for ev, err := range r.s.Read(r.ctx, ReadOptions{From: at, To: &end}) {
			if err != nil {
				rerr = err
				break
			}
			if !sameEvent(ev, ins[len(mine)]) {
				return mine, nil
			}
			mine = append(mine, ev)
		}
		if rerr == nil {
			return mine, nil
		}
		if err := r.again(rerr); err != nil {
			return nil, err
		}
	}
}

// flush flushes the session, retrying like an append. A session that is
// not live (the server restarted) was read from storage: what ownEvents
// found is durable already.
func (r *retrier) flush() error {
	for {
		err := r.s.Flush(r.ctx)
		if err == nil || errors.Is(err, sdk.CodeSessionNotLive) {
			return nil
		}
		if err := r.again(err); err != nil {
			return err
		}
	}
}

// sameEvent reports whether a stored event is the one in would append: the
// same type, surfaceOp, sourceEventSeqs and ignorable, and value-equal
// data.
func sameEvent(ev events.Event, in events.Input) bool {
	if ev.Type != in.Type || ev.Ignorable != in.Ignorable || !sameSurfaceOp(ev.SurfaceOp, in.SurfaceOp) ||
		(ev.SourceEventSeqs == nil) != (in.SourceEventSeqs == nil) || !slices.Equal(ev.SourceEventSeqs, in.SourceEventSeqs) {
		return false
	}
	stored, err := jsonv.Parse(ev.Data, jsonv.Options{})
	if err != nil {
		return false
	}
	data, err := jsonv.Parse(in.Data, jsonv.Options{})
	return err == nil && jsonv.Equal(stored.Root(), data.Root())
}

// sameSurfaceOp compares a stored surface operation with an input's; nil
// is absent, and every "append" is the same.
func sameSurfaceOp(stored, in *events.SurfaceOp) bool {
	if stored == nil || in == nil {
		return stored == in
	}
	return stored.Replace == in.Replace && (!in.Replace || *stored == *in)
}
