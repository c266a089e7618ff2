package client

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Backoff between the attempts of AppendRetry, by default.
const (
	DefaultRetryBackoff    = 10 * time.Millisecond
	DefaultRetryMaxBackoff = time.Second
)

// RetryOptions tune AppendRetry. Every zero field takes the default it
// names.
type RetryOptions struct {
	// Flush makes the events durable on every backend before AppendRetry
	// returns; a failed flush is retried like a failed append.
	Flush bool
	// MaxAttempts bounds the attempts; 0 retries until ctx ends (give it a
	// deadline).
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each further one up to MaxBackoff; defaults DefaultRetryBackoff and
	// DefaultRetryMaxBackoff.
	Backoff, MaxBackoff time.Duration
	// OnRetry, when set, is called with each failure AppendRetry goes on
	// from: a failure it retries, and a SEQ_CONFLICT it resolved by finding
	// its own events in the log (where a retry without an expected seq
	// would have appended them twice).
	OnRetry func(err error)
}

// AppendRetry appends events to session id at log length expected (the
// seq its first event must get), retrying a failure that may pass — a
// retryable code (sdk.Retryable: the server or a plugin unavailable, an I/O
// error, a busy backend) or FLUSH_FAILED of a session that is not fenced
// (see Fenced) — with backoff, until it succeeds, fails otherwise, or ctx
// ends.
//
// Every attempt carries the expected length, so no retry appends an event
// twice: when an earlier attempt did append the events (its reply was lost,
// or only its flush failed) the retry gets SEQ_CONFLICT, and AppendRetry
// reads the events at expected back and compares them with its own (type,
// data by value, surfaceOp, sourceEventSeqs, ignorable). If they are its
// own it goes on as if that attempt had succeeded: with the rest of the
// events when only some were appended (and nothing follows them), then
// with the flush; events after all of its own (a resume's closers after a
// server restart) do not matter. If the events at expected are not its own
// — another writer got there first, or a resume appended its closers and
// marker where they would have gone — it returns the SEQ_CONFLICT.
//
// Any failure is an *AppendError whose Appended counts the events of the
// call appended over all attempts, from seq expected. The result's
// envelopes are the stored events, one per input; Flush is set when
// o.Flush is.
func (c *Client) AppendRetry(ctx context.Context, id string, expected sdk.Offset, events []Input, o RetryOptions) (Appended, error) {
	if o.Backoff <= 0 {
		o.Backoff = DefaultRetryBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultRetryMaxBackoff
	}
	r := retrier{c: c, ctx: ctx, id: id, o: o, wait: o.Backoff}
	out := Appended{Envelopes: make([]json.RawMessage, 0, len(events))}
	// fail gives up with err; last counts what the failed attempt appended.
	fail := func(err error, last int64) (Appended, error) {
		var ae *AppendError
		if errors.As(err, &ae) {
			err = ae.Err
		}
		return Appended{}, &AppendError{Appended: int64(len(out.Envelopes)) + last, FirstSeq: int64(expected), Err: err}
	}
	for len(out.Envelopes) < len(events) || len(events) == 0 {
		at := expected + sdk.Offset(len(out.Envelopes))
		rest := events[len(out.Envelopes):]
		app, err := c.Append(ctx, id, rest, AppendOptions{Flush: o.Flush, ExpectedSeq: &at})
		if err == nil {
			out.Envelopes = append(out.Envelopes, app.Envelopes...)
			out.Flush = app.Flush
			return out, nil
		}
		if _, actual, ok := SeqConflictOf(err); ok && actual > at && len(rest) > 0 {
			mine, rerr := r.ownEvents(at, actual, rest)
			if rerr != nil {
				return fail(rerr, 0)
			}
			out.Envelopes = append(out.Envelopes, mine...)
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
		res, err := r.flush()
		if err != nil {
			return fail(err, 0)
		}
		out.Flush = res
	}
	return out, nil
}

// retrier is the state of one AppendRetry.
type retrier struct {
	c        *Client
	ctx      context.Context
	id       string
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
	return errors.Is(err, sdk.ErrSessionFenced) || (errors.As(err, &e) && e.Meta["fenced"] == "true")
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

// ownEvents reads the log [at, end) and returns the envelopes of its
// leading events that are the inputs' (the first of them is ins[0], …),
// stopping at the first that is not. A failed read is retried like an
// append.
func (r *retrier) ownEvents(at, end sdk.Offset, ins []Input) ([]json.RawMessage, error) {
	end = min(end, at+sdk.Offset(len(ins)))
	for {
		var mine []json.RawMessage
		var rerr error
		for env, err := range r.c.Events(r.ctx, r.id, EventsOptions{From: at, To: &end}) {
			if err != nil {
				rerr = err
				break
			}
			if !sameEvent(env, ins[len(mine)]) {
				return mine, nil
			}
			mine = append(mine, env)
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
func (r *retrier) flush() (*FlushResult, error) {
	for {
		res, err := r.c.Flush(r.ctx, r.id)
		if err == nil {
			return &res, nil
		}
		if errors.Is(err, sdk.ErrSessionNotLive) {
			return nil, nil
		}
		if err := r.again(err); err != nil {
			return nil, err
		}
	}
}

// sameEvent reports whether a stored envelope is the event in would
// append: the same type, surfaceOp, sourceEventSeqs and ignorable, and
// value-equal data.
func sameEvent(envelope json.RawMessage, in Input) bool {
	env, err := jsonv.Parse(envelope, jsonv.Options{Enclosing: 1}) // data sits inside the envelope
	if err != nil {
		return false
	}
	data, err := jsonv.Parse(in.Data, jsonv.Options{})
	if err != nil {
		return false
	}
	root := env.Root()
	ign, _ := root.Get("ignorable").Bool()
	return root.Get("type").StrEqual(in.Type) && jsonv.Equal(root.Get("data"), data.Root()) && ign == in.Ignorable &&
		sameSurfaceOp(root.Get("surfaceOp"), in.SurfaceOp) && sameSources(root.Get("sourceEventSeqs"), in.SourceEventSeqs)
}

// sameSurfaceOp compares an envelope's surfaceOp with an input's.
func sameSurfaceOp(v jsonv.Value, op *SurfaceOp) bool {
	switch {
	case op == nil:
		return !v.Exists()
	case !op.Replace:
		return v.StrEqual("append")
	}
	start, ok1 := v.Get("startSeq").Int()
	end, ok2 := v.Get("endSeq").Int()
	return v.Get("op").StrEqual("replace") && ok1 && ok2 && sdk.Seq(start) == op.StartSeq && sdk.Seq(end) == op.EndSeq
}

// sameSources compares an envelope's sourceEventSeqs with an input's.
func sameSources(v jsonv.Value, seqs []sdk.Seq) bool {
	if seqs == nil || !v.Exists() {
		return seqs == nil && !v.Exists()
	}
	if v.Kind() != jsonv.Array || v.Len() != len(seqs) {
		return false
	}
	for i, el := range v.Elements() {
		if n, ok := el.Int(); !ok || sdk.Seq(n) != seqs[i] {
			return false
		}
	}
	return true
}
