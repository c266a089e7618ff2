package chaos

import (
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

// writer is one client appending batches to its own session with flush,
// and retrying a failed batch without duplicating it.
type writer struct {
	h    *harness
	name string
	rng  *rand.Rand // the writer goroutine's own
	n    int        // next payload number

	mu  sync.Mutex
	rec *record   // the session it appends to
	all []*record // every session it appended to, rec last

	// large asks for one large batch (a torn-kill fault): the writer closes
	// the channel it receives right before it sends that batch.
	large chan chan struct{}

	expected sdk.Offset // the log length the writer's next append expects
	// turn is the number of the turn the writer's pending events go in:
	// each attempt sends them as one whole turn, and a new number, above
	// every turn of the log, follows whatever may have stored part of one.
	turn int

	successes atomic.Int64 // batches acknowledged in full
	failures  atomic.Int64 // calls that failed
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
	w.expected, w.turn = 0, 0
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
		w.appendDurably(ctx, batch, started)
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

// appendDurably appends batch with flush until every event of it is
// acknowledged or ctx ends. Every attempt is the client's AppendRetry at
// the log length the writer knows, of the pending events as one whole
// turn, so a retry never stores an event twice. When the log is longer
// than that (a resume appended its closers, which closed the turn, and its
// marker after a crash) the writer finds out which of its events the log
// holds before it sends the rest again, in a new turn, as a harness whose
// turn a repair closed goes on.
func (w *writer) appendDurably(ctx context.Context, batch []event, started chan struct{}) {
	pending := batch
	w.turn++
	for len(pending) > 0 && ctx.Err() == nil {
		c := w.h.client()
		if started != nil {
			close(started)
			started = nil
		}
		actx, cancel := context.WithTimeout(ctx, callTimeout)
		res, err := c.Session(w.rec.id).AppendRetry(actx, w.expected, inTurn(w.turn, pending), client.RetryOptions{Flush: true, MaxAttempts: retryAttempts})
		cancel()
		if err == nil {
			if err := w.ackEvents(res, pending); err != nil {
				w.h.problem(err)
			}
			w.successes.Add(1)
			return
		}
		w.failed(ctx, c, err)
		if _, _, conflict := client.SeqConflictOf(err); conflict {
			pending = w.resolve(ctx, pending)
			w.turn++
			if len(pending) == 0 {
				w.successes.Add(1)
			}
		}
	}
}

// ackEvents acknowledges events at the seqs of the envelopes a successful
// Append of them as one whole turn (inTurn) returned for them.
func (w *writer) ackEvents(evs []events.Event, sent []event) error {
	if len(evs) != len(sent)+2 {
		return fmt.Errorf("session %s: Append of a turn of %d events returned %d envelopes", w.rec.id, len(sent)+2, len(evs))
	}
	for i, ev := range evs {
		s, err := parseEnvelope(ev.Envelope)
		if err != nil {
			return err
		}
		w.expected = sdk.Offset(s.seq + 1)
		if i == 0 || i == len(evs)-1 {
			continue // the turn/start and turn/end around them
		}
		if s.pid != sent[i-1].pid {
			return fmt.Errorf("session %s: envelope %d of an Append carries event %q, want %q", w.rec.id, i, s.pid, sent[i-1].pid)
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

// resolve reads the session's log after a SEQ_CONFLICT, sets the length
// the writer expects to the log's, and returns the events of pending the
// log does not hold. Those it holds (a prefix: a batch is appended in
// order) are made durable with a flush when the session is live and
// acknowledged at their stored seqs.
func (w *writer) resolve(ctx context.Context, pending []event) []event {
	for ctx.Err() == nil {
		c := w.h.client()
		at, length, live, err := w.read(ctx, c)
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
				return pending // AppendRetry finds them again
			}
		}
		for _, e := range pending[:k] {
			if err := w.rec.ack(e.pid, at[e.pid]); err != nil {
				w.h.problem(err)
			}
		}
		w.expected = length
		return pending[k:]
	}
	return pending
}

// read returns the seq of every payload id in the session's log past its
// last acknowledged event and the log's length, as the server sees it (its
// memory when the session is live there, else what is stored), and whether
// it is live.
func (w *writer) read(ctx context.Context, c *client.Client) (map[string]int64, sdk.Offset, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, in, err := c.Inspect(rctx, w.rec.id)
	if errors.Is(err, sdk.CodeSessionNotFound) {
		return map[string]int64{}, 0, false, nil // never stored
	}
	if err != nil {
		return nil, 0, false, err
	}
	at, length := map[string]int64{}, int64(0)
	for ev, err := range c.Session(w.rec.id).Read(rctx, client.ReadOptions{From: sdk.Offset(w.rec.end())}) {
		if err != nil {
			return nil, 0, false, err
		}
		s, err := parseEnvelope(ev.Envelope)
		if err != nil {
			return nil, 0, false, err
		}
		if s.pid != "" {
			at[s.pid] = s.seq
		}
		length = s.seq + 1
	}
	// A log shorter than what was acknowledged lost events (the verifier
	// counts them); the writer goes on at its real length.
	return at, max(in.Events, sdk.Offset(length)), in.Live, nil
}
