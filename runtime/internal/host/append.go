package host

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// AppendRequest is one append to a session: Inputs, each its own event
// with consecutive seqs; at Expected (the seq the first event must get,
// else SEQ_CONFLICT and nothing appended) when it is set; as one atomic
// group with Group; flushed before the answer with Flush; once, under
// OperationID, when it is set. The public
// service.AppendRequest, converted to it field for field, documents each.
type AppendRequest struct {
	Inputs      []events.Input
	Expected    *sdk.Offset
	Group       bool
	Flush       bool
	OperationID string
}

// AppendResult is what an append did, on success and on failure alike:
// the Events appended (before the failure); FirstSeq, the first one's seq
// or, when none was, the log's length the append found (nil when it did
// not reach the session or a group was refused); Fenced, whether the
// session is fenced (Session.Fenced); and Flush, the result of a flush
// the request asked for and that passed; and Replayed, whether the
// request's operation id was already held with the same inputs (Events
// are then the original append's).
type AppendResult struct {
	Events   []events.Event
	FirstSeq *sdk.Offset
	Fenced   bool
	Flush    *store.FlushResult
	Replayed bool
}

// Append appends r to session id, resuming the session first when it is
// not live (and releasing it again when the request fails, so a failed
// request leaves a session that was not live as it was: Borrow). On a
// failure the result still says what was appended; the error of a
// rejected input is an *sdk.Error whose Index is its position in
// r.Inputs.
func (h *Host) Append(ctx context.Context, id string, r AppendRequest) (AppendResult, error) {
	a, err := h.Appender(ctx, id)
	if err != nil {
		return AppendResult{}, err
	}
	return a.Finish(ctx, a.do(ctx, r), r.Flush)
}

// AppendTo appends r to sess, a live session the caller holds (Append).
// It counts as a use of sess, which ReleaseIdle leaves live for another
// idle period.
func (h *Host) AppendTo(ctx context.Context, sess *session.Session, r AppendRequest) (AppendResult, error) {
	h.use(ctx, sess)
	a := &Appender{h: h, sess: sess}
	return a.Finish(ctx, a.do(ctx, r), r.Flush)
}

// An appender's queued inputs (Queue) are appended in batches of at most
// batchInputs inputs and, unless one alone is larger, batchBytes of wire
// input, each under one hold of the session's append lock, so a long
// stream never keeps other appends waiting for long.
const (
	batchInputs = 256
	batchBytes  = 1 << 20
)

// Appender appends a stream of batches to one session: the requests of an
// append stream, or the batches of a long request body. It keeps the
// tally of the whole stream (AppendResult) and ends with Finish. It is
// not safe for concurrent use.
type Appender struct {
	h    *Host
	sess *session.Session
	done func(ok bool) // ends the borrow of sess (host.Borrow); nil for a held session
	// res is the tally; its FirstSeq is set by Finish from first, which is
	// known once a batch reached the session (firstKnown).
	res        AppendResult
	first      sdk.Offset
	firstKnown bool

	queue  []events.Input // the inputs Commit appends next
	queued int            // their size on the wire
}

// Appender borrows session id for a stream of appends, resuming it when it
// is not live (Borrow). The caller must call Finish: when the stream
// fails, a session resumed for it is released again.
func (h *Host) Appender(ctx context.Context, id string) (*Appender, error) {
	o, done, err := h.Borrow(ctx, id)
	if err != nil {
		return nil, err
	}
	return &Appender{h: h, sess: o.Session, done: done}, nil
}

// SessionID returns the id of the session a appends to.
func (a *Appender) SessionID() string { return a.sess.ID() }

// Len returns the session's log length.
func (a *Appender) Len() sdk.Offset { return a.sess.Len() }

// do appends one request, without its flush.
func (a *Appender) do(ctx context.Context, r AppendRequest) error {
	if r.OperationID != "" {
		evs, replayed, err := a.appendOperation(ctx, r.Expected, r.OperationID, r.Inputs)
		if replayed && len(evs) > 0 {
			// One request: its result is the original events, marked.
			a.tally(sdk.Offset(evs[0].Seq()), evs)
			a.res.Replayed = true
		}
		return err
	}
	if r.Group {
		return a.AppendGroup(ctx, r.Expected, r.Inputs)
	}
	_, err := a.Append(ctx, r.Expected, r.Inputs)
	return err
}

// Append appends ins as one batch, each as its own event, at expected (the
// seq its first event must get) when it is set (AppendRequest). It
// returns how many it appended; at the first rejected input it stops with
// that input's error (Index its position in ins). A batch with no inputs
// checks expected and appends nothing.
func (a *Appender) Append(ctx context.Context, expected *sdk.Offset, ins []events.Input) (int, error) {
	b, err := a.sess.AppendBatch(ctx, ins, session.BatchOptions{ExpectedLen: expected})
	a.tally(b.Start, b.Events)
	return len(b.Events), err
}

// Queue adds in, size bytes on the wire, to the batch Commit appends next,
// and reports whether that batch is full: the caller commits it before it
// queues more.
func (a *Appender) Queue(in events.Input, size int) (full bool) {
	a.queue = append(a.queue, in)
	a.queued += size
	return len(a.queue) >= batchInputs || a.queued >= batchBytes
}

// Queued returns how many inputs are queued.
func (a *Appender) Queued() int { return len(a.queue) }

// Commit appends the queued inputs as one batch (Append), at expected when
// it is set, and empties the queue.
func (a *Appender) Commit(ctx context.Context, expected *sdk.Offset) (int, error) {
	n, err := a.Append(ctx, expected, a.queue)
	clear(a.queue)
	a.queue, a.queued = a.queue[:0], 0
	return n, err
}

// AppendGroup appends ins as one atomic group, at expected when it is set
// (AppendRequest.Group): all of them, or none and the rejected member's
// error.
func (a *Appender) AppendGroup(ctx context.Context, expected *sdk.Offset, ins []events.Input) error {
	var (
		evs []session.Event
		err error
	)
	if expected != nil {
		evs, err = a.sess.AppendGroupAt(ctx, sdk.Seq(*expected), ins)
	} else {
		evs, err = a.sess.AppendGroup(ctx, ins)
	}
	if len(evs) > 0 {
		a.tally(sdk.Offset(evs[0].Seq()), evs)
	}
	return err
}

// AppendOperation appends ins once under operation id, as one atomic
// group, at expected when it is set (AppendRequest.OperationID): all of
// them, or none and the error. A replay (the session holds the id with the
// same inputs) appends nothing, adds nothing to the tally, and reports
// replayed: a stream of requests counts only what it appended.
func (a *Appender) AppendOperation(ctx context.Context, expected *sdk.Offset, id string, ins []events.Input) (replayed bool, err error) {
	_, replayed, err = a.appendOperation(ctx, expected, id, ins)
	return replayed, err
}

// appendOperation is AppendOperation, returning the original events of a
// replay (untallied) besides.
func (a *Appender) appendOperation(ctx context.Context, expected *sdk.Offset, id string, ins []events.Input) ([]session.Event, bool, error) {
	first := sdk.Seq(-1)
	if expected != nil {
		first = sdk.Seq(*expected)
	}
	evs, replayed, err := a.sess.AppendOperation(ctx, id, first, ins)
	if replayed {
		return evs, true, err
	}
	if len(evs) > 0 {
		a.tally(sdk.Offset(evs[0].Seq()), evs)
	}
	return evs, false, err
}

// tally adds the events of a batch that began when the log was start long.
// The stream's first seq is its first appended event's, or, until one
// is appended, the length its first batch found.
func (a *Appender) tally(start sdk.Offset, evs []session.Event) {
	if !a.firstKnown || (len(a.res.Events) == 0 && len(evs) > 0) {
		a.first, a.firstKnown = start, true
	}
	if a.res.Events == nil {
		a.res.Events = Shared(evs)
		return
	}
	for _, e := range evs {
		a.res.Events = append(a.res.Events, e.Shared())
	}
}

// Flush flushes the session on every backend.
func (a *Appender) Flush(ctx context.Context) (store.FlushResult, error) {
	return a.h.st.Flush(ctx, a.sess)
}

// Finish ends the stream whose error (nil: it succeeded) is err. With
// flush, it first flushes what the stream appended (a failed stream that
// appended nothing is not flushed), joining a flush error to err. It
// returns the stream's result and err. A session the stream resumed is
// released again when err is not nil. On a nil Appender (the stream never
// reached a session) it returns a zero result and err.
func (a *Appender) Finish(ctx context.Context, err error, flush bool) (AppendResult, error) {
	if a == nil {
		return AppendResult{}, err
	}
	if flush && (err == nil || len(a.res.Events) > 0) {
		res, ferr := a.Flush(context.WithoutCancel(ctx))
		if ferr != nil {
			err = errors.Join(err, ferr)
		} else {
			a.res.Flush = &res
		}
	}
	if a.done != nil {
		a.done(err == nil)
	}
	a.res.Fenced = a.sess.Fenced() != nil
	if a.firstKnown {
		a.res.FirstSeq = &a.first
	}
	return a.res, err
}

// Shared converts session events to the events package's, sharing their
// bytes; nil for none.
func Shared(evs []session.Event) []events.Event {
	if evs == nil {
		return nil
	}
	out := make([]events.Event, len(evs))
	for i, e := range evs {
		out[i] = e.Shared()
	}
	return out
}
