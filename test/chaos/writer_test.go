package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// callTimeout bounds one call of a client; the machine is small and shared,
// and a call may wait for a plugin restart.
const callTimeout = 2 * time.Minute

// retryAttempts bounds the attempts of one AppendRetry: after a restart of
// serve the writer goes on with a client of the new server.
const retryAttempts = 8

// writer is one client appending batches to its own session, each batch
// one operation (docs/format.md, "Operation ids") made durable with a
// flush, and retrying a failed batch as the same operation, so that a
// retry never stores an event twice.
type writer struct {
	h    *harness
	name string
	rng  *rand.Rand // the writer goroutine's own
	n    int        // next payload number
	op   int        // next operation number

	mu  sync.Mutex
	rec *record   // the session it appends to
	all []*record // every session it appended to, rec last

	// large asks for one large batch (a torn-kill fault): the writer closes
	// the channel it receives right before it sends that batch.
	large chan chan struct{}

	// turn is the number of the turn the writer's pending events go in:
	// each attempt sends them as one whole turn, and a new number, above
	// every turn of the log, follows whatever may have stored part of one.
	turn int

	successes atomic.Int64 // batches acknowledged in full
	failures  atomic.Int64 // calls that failed
	// replays counts the retries of an operation after a failed attempt
	// that the server answered as a replay: the failed attempt had stored
	// it. resent counts the acknowledged operations sent once more, as a
	// client that lost the reply would, each of which must be a replay.
	replays, resent atomic.Int64
}

// rotateEvents is how many acknowledged events a session gets before its
// writer releases it and goes on with a new one, which keeps every log and
// each verification small.
const rotateEvents = 3000

func newWriter(h *harness, name string, seed uint64) *writer {
	w := &writer{h: h, name: name, rng: rand.New(rand.NewPCG(seed, 0x5eed)), large: make(chan chan struct{}, 1)}
	w.rec = newRecord(name)
	w.all = []*record{w.rec}
	return w
}

// session returns the session the writer appends to.
func (w *writer) session() *record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rec
}

// sessions returns every session the writer appended to.
func (w *writer) sessions() []*record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.all)
}

// rotate releases the writer's session once it holds rotateEvents
// acknowledged events and moves on to a new one.
func (w *writer) rotate(ctx context.Context) {
	if w.rec.ackedCount() < rotateEvents {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := w.h.client().Session(w.rec.id).Release(rctx); err != nil {
		w.h.noteError(w.rec.id, err)
	}
	w.rec.retire()
	next := newRecord(fmt.Sprintf("%sr%d", w.name, len(w.all)))
	w.mu.Lock()
	w.rec, w.all = next, append(w.all, next)
	w.mu.Unlock()
	w.turn = 0
}

// run appends batch after batch until ctx ends, holding the harness's gate
// (shared) for each batch so that the verifier can pause every writer
// between batches.
func (w *writer) run(ctx context.Context) {
	for {
		w.h.gate.RLock()
		if ctx.Err() != nil {
			w.h.gate.RUnlock()
			return
		}
		w.rotate(ctx)
		batch, started := w.nextBatch()
		for _, part := range operations(batch) {
			w.appendDurably(ctx, part, started)
			started = nil
		}
		w.h.gate.RUnlock()
		// An agent thinks between appends; it also keeps the logs small.
		time.Sleep(time.Duration(w.rng.Int64N(int64(20 * time.Millisecond))))
	}
}

// nextBatch returns the next batch: 1–8 small events, or a large one when
// a fault asked for it (with the channel to close as it goes out).
func (w *writer) nextBatch() ([]event, chan struct{}) {
	count, size := 1+w.rng.IntN(8), 0
	var started chan struct{}
	select {
	case started = <-w.large:
		count, size = 200+w.rng.IntN(400), 2048
	default:
	}
	batch := make([]event, count)
	for i := range batch {
		n := size
		if n == 0 {
			n = 10 + w.rng.IntN(500)
		}
		batch[i] = event{pid: fmt.Sprintf("%s-%d", w.rec.id, w.n), text: filler(n)}
		w.n++
	}
	w.rec.send(batch)
	return batch, started
}

// maxOperationBytes bounds the events of one operation, about half the
// backend request of the suite's configs (rpc_max_bytes 1310720): an
// append with an operation id must fit in one backend request, or it is
// refused (docs/format.md, "Operation ids").
const maxOperationBytes = 640 << 10

// operations cuts batch into consecutive parts, each one operation whose
// events stay below maxOperationBytes (with room for each envelope's
// other members); a small batch is one.
func operations(batch []event) [][]event {
	var parts [][]event
	size, from := 0, 0
	for i, e := range batch {
		n := len(e.text) + 256
		if i > from && size+n > maxOperationBytes {
			parts = append(parts, batch[from:i])
			from, size = i, 0
		}
		size += n
	}
	return append(parts, batch[from:])
}

// resendOneIn is how rarely an acknowledged operation is sent once more.
const resendOneIn = 4

// appendDurably appends batch as one operation and flushes it, until every
// event of it is acknowledged or ctx ends. Every attempt sends the pending
// events as one whole turn under the same operation id and no expected
// seq, then flushes: when an earlier attempt stored them (its reply was
// lost, its flush failed, serve was killed after the append) the server
// answers a replay with the stored envelopes, so the operation id is all
// that keeps a retry from storing them twice. Should the log hold the
// operation in part (OPERATION_CONFLICT, a broken rule: an operation is
// all or nothing), the writer acknowledges the stored part and sends the
// rest as a new operation, in a new turn, as a harness whose turn a repair
// closed goes on. One acknowledged operation in resendOneIn is sent once
// more and must be a replay of the same envelopes.
func (w *writer) appendDurably(ctx context.Context, batch []event, started chan struct{}) {
	pending := batch
	w.turn++
	op := w.operation(pending)
	tried := false // an attempt of op failed
	for len(pending) > 0 && ctx.Err() == nil {
		c := w.h.client()
		if started != nil {
			close(started)
			started = nil
		}
		res, err := w.once(ctx, c, op, pending)
		if err == nil {
			if res.Replayed && tried {
				w.replays.Add(1)
			}
			if err := w.ackEvents(op, res.Events, pending); err != nil {
				w.h.problem(err)
			}
			w.successes.Add(1)
			if w.rng.IntN(resendOneIn) == 0 {
				w.resend(ctx, c, op, pending, res.Events)
			}
			return
		}
		tried = true
		w.failed(ctx, c, err)
		if sdk.CodeOf(err) == sdk.CodeOperationConflict {
			w.h.problem(fmt.Errorf("session %s: the log holds operation %s in part or with other events: %v", w.rec.id, op, err))
			pending = w.resolve(ctx, pending)
			w.turn++
			op = w.operation(pending)
			if len(pending) == 0 {
				w.successes.Add(1)
			}
			continue
		}
		select { // a backoff: serve restarts, a plugin comes back
		case <-ctx.Done():
		case <-time.After(time.Duration(10+w.rng.IntN(90)) * time.Millisecond):
		}
	}
}

// operation returns a new operation id for pending as a turn of the
// writer's session (unique in the run) and notes it as sent.
func (w *writer) operation(pending []event) string {
	w.op++
	op := fmt.Sprintf("%s-op%d", w.rec.id, w.op)
	w.rec.sendOp(op, len(pending)+2)
	return op
}

// once is one attempt: the pending events as one whole turn under op,
// then a flush.
func (w *writer) once(ctx context.Context, c *client.Client, op string, pending []event) (client.Appended, error) {
	actx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s := c.Session(w.rec.id)
	res, err := s.AppendOnce(actx, op, inTurn(w.turn, pending)...)
	if err != nil {
		return res, err
	}
	return res, s.Flush(actx)
}

// resend sends the acknowledged operation op once more, as a client that
// lost its reply would: the answer must be a replay of the acknowledged
// envelopes. A call that fails (a fault) proves nothing and is let go.
func (w *writer) resend(ctx context.Context, c *client.Client, op string, pending []event, acked []events.Event) {
	actx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := c.Session(w.rec.id).AppendOnce(actx, op, inTurn(w.turn, pending)...)
	if err != nil {
		w.h.noteError(w.rec.id, err)
		return
	}
	w.resent.Add(1)
	same := res.Replayed && len(res.Events) == len(acked)
	for i := 0; same && i < len(acked); i++ {
		same = bytes.Equal(res.Events[i].Envelope, acked[i].Envelope)
	}
	if !same {
		w.h.problem(fmt.Errorf("session %s: operation %s sent again after its acknowledgement: replayed %v, %d envelopes, not the %d acknowledged ones", w.rec.id, op, res.Replayed, len(res.Events), len(acked)))
	}
}

// ackEvents acknowledges the operation op and its events at the seqs of
// the envelopes an AppendOnce of them as one whole turn (inTurn) returned
// for them.
func (w *writer) ackEvents(op string, evs []events.Event, sent []event) error {
	if len(evs) != len(sent)+2 {
		return fmt.Errorf("session %s: operation %s of a turn of %d events returned %d envelopes", w.rec.id, op, len(sent)+2, len(evs))
	}
	for i, ev := range evs {
		s, err := parseEnvelope(ev.Envelope)
		if err != nil {
			return err
		}
		if i == 0 {
			if s.op != op || s.opCount != len(evs) {
				return fmt.Errorf("session %s: the first envelope of operation %s carries operation %q of %d events: %s", w.rec.id, op, s.op, s.opCount, ev.Envelope)
			}
			if err := w.rec.ackOp(op, s.seq); err != nil {
				return err
			}
		}
		if i == 0 || i == len(evs)-1 {
			continue // the turn/start and turn/end around them
		}
		if s.pid != sent[i-1].pid {
			return fmt.Errorf("session %s: envelope %d of operation %s carries event %q, want %q", w.rec.id, i, op, s.pid, sent[i-1].pid)
		}
		if err := w.rec.ack(s.pid, s.seq); err != nil {
			return err
		}
	}
	return nil
}

// failed counts a failed call. A fenced session is released, so that the
// next call resumes it from what is stored; a session that is not found
// (never stored yet) is created.
func (w *writer) failed(ctx context.Context, c *client.Client, err error) {
	w.failures.Add(1)
	w.h.noteError(w.rec.id, err)
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	switch {
	case client.Fenced(err):
		_ = c.Session(w.rec.id).Release(rctx)
	case errors.Is(err, sdk.CodeSessionNotFound):
		_, _ = c.Create(rctx, w.rec.id, events.CreateOptions{})
	}
}

// resolve reads the session's log after an OPERATION_CONFLICT and returns
// the events of pending the log does not hold. Those it holds (a prefix:
// a batch is appended in order) are made durable with a flush when the
// session is live and acknowledged at their stored seqs.
func (w *writer) resolve(ctx context.Context, pending []event) []event {
	for ctx.Err() == nil {
		c := w.h.client()
		at, live, err := w.read(ctx, c)
		if err != nil {
			w.failed(ctx, c, err)
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // a backoff: the server restarts
			}
			continue
		}
		k := 0
		for k < len(pending) {
			if _, ok := at[pending[k].pid]; !ok {
				break
			}
			k++
		}
		for _, e := range pending[k:] {
			if _, ok := at[e.pid]; ok {
				w.h.problem(fmt.Errorf("session %s: event %s is stored but an earlier event of its batch is not", w.rec.id, e.pid))
			}
		}
		if k > 0 && live {
			fctx, cancel := context.WithTimeout(ctx, callTimeout)
			err := c.Session(w.rec.id).Flush(fctx)
			cancel()
			if err != nil {
				w.failed(ctx, c, err)
				continue
			}
		}
		for _, e := range pending[:k] {
			if err := w.rec.ack(e.pid, at[e.pid]); err != nil {
				w.h.problem(err)
			}
		}
		return pending[k:]
	}
	return pending
}

// read returns the seq of every payload id in the session's log past its
// last acknowledged event, as the server sees it (its memory when the
// session is live there, else what is stored), and whether it is live.
func (w *writer) read(ctx context.Context, c *client.Client) (map[string]int64, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, in, err := c.Inspect(rctx, w.rec.id)
	if errors.Is(err, sdk.CodeSessionNotFound) {
		return map[string]int64{}, false, nil // never stored
	}
	if err != nil {
		return nil, false, err
	}
	at := map[string]int64{}
	for ev, err := range c.Session(w.rec.id).Read(rctx, client.ReadOptions{From: sdk.Offset(w.rec.end())}) {
		if err != nil {
			return nil, false, err
		}
		s, err := parseEnvelope(ev.Envelope)
		if err != nil {
			return nil, false, err
		}
		if s.pid != "" {
			at[s.pid] = s.seq
		}
	}
	return at, in.Live, nil
}
