package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// backend is one persistence backend attached to a live session.
type backend struct {
	name    string
	p       sdk.Persistence
	primary bool
	handle  string
}

// queue is the write-behind queue of one session × backend (docs/architecture.md). A
// worker goroutine, owned by the live session, writes it; the session's
// commit hook fills it. Events stay queued, in seq order, until the backend
// acknowledges them: nothing is ever dropped.
type queue struct {
	st  *Store
	ls  *live
	b   *backend
	mu  sync.Mutex
	evs []session.Event
	arr []time.Time // arrival time of each queued event
	// tied[i] says that no batch boundary may fall between events i-1 and i:
	// both belong to one atomic unit (an AppendGroup, docs/compaction.md).
	tied []bool
	// bytes is the size of the queued envelopes.
	bytes     int64
	watermark sdk.Cursor // highest acknowledged seq
	// stored says that the backend holds the session: it was opened or
	// copied, or the backend acknowledged an Append or a Flush of it. Only
	// a drain of a session not stored yet asks the backend for a Flush,
	// which materializes it; an acknowledged Append is durable already.
	stored  bool
	timer   Timer
	writing bool
	drains  []chan error // explicit drains waiting for the next barrier
	retryAt time.Time    // end of the current backoff
	streak  int          // consecutive retryable failures
	reopen  bool         // the backend's state is unknown: re-open before writing
	// unresolved is the error of a drain's attempt whose outcome the
	// backend's state must settle before the drain is answered: the batch
	// may be stored although the call failed.
	unresolved error
	final      error    // fenced (primary) or detached (mirror); set once
	stopped    bool     // shut down: nothing more is queued or written
	parts      [][]byte // reused list of a write's envelopes
	wake       chan struct{}
	stop       chan struct{}
	done       chan struct{}
}

func newQueue(st *Store, ls *live, b *backend, watermark sdk.Cursor, stored bool) *queue {
	q := &queue{st: st, ls: ls, b: b, watermark: watermark, stored: stored, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// enqueue adds committed events (called under the session's append lock,
// so in seq order). When unit is set the events are one atomic unit: the
// worker never puts a batch boundary inside them (docs/compaction.md), so a crash
// persists all of them or none. The caller has counted their bytes in the
// store's pending total already; the queue gives them back as they leave it.
func (q *queue) enqueue(evs []session.Event, unit bool) {
	now := clockTime(q.st.clock)
	q.mu.Lock()
	if q.stopped || q.final != nil && !q.b.primary {
		q.mu.Unlock() // a released session or a detached mirror gets nothing more
		q.st.pending.release(envelopeBytes(evs))
		return
	}
	wasEmpty, wasSmall := len(q.evs) == 0, q.bytes < q.st.opts.EagerBytes
	for i, e := range evs {
		q.evs = append(q.evs, e)
		q.arr = append(q.arr, now)
		q.tied = append(q.tied, unit && i > 0)
		q.bytes += int64(e.EnvelopeLen())
	}
	eager := wasSmall && q.bytes >= q.st.opts.EagerBytes
	q.mu.Unlock()
	if wasEmpty || eager {
		q.poke() // the worker arms the window timer, or writes a full queue at once
	}
}

// drain writes everything queued (including events committed meanwhile);
// concurrent drains share one barrier. The backend's acknowledgements make
// the events durable, so the barrier calls the backend only to materialize
// a session it does not store yet (a created session with no event). It makes
// one attempt and returns its error, but only once the backend's state has
// settled what the failed call stored (a re-open and read back): a batch
// the backend did store counts as written, so the error never covers
// durable events. ctx only bounds the wait.
func (q *queue) drain(ctx context.Context) error {
	ch := make(chan error, 1)
	q.mu.Lock()
	if q.final != nil {
		err := q.final
		q.mu.Unlock()
		return err
	}
	q.drains = append(q.drains, ch)
	q.mu.Unlock()
	q.poke()
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shutdown stops the worker; whatever is still queued (a fenced
// session's events, or what a final Close could not drain) leaves the
// store's pending total with it.
func (q *queue) shutdown() {
	close(q.stop)
	<-q.done
	q.mu.Lock()
	n := q.bytes
	q.evs, q.arr, q.tied, q.bytes, q.stopped = nil, nil, nil, 0, true
	q.mu.Unlock()
	q.st.pending.release(n)
}

func (q *queue) run() {
	defer close(q.done)
	for {
		select {
		case <-q.wake:
			q.work()
		case <-q.stop:
			q.mu.Lock()
			if q.timer != nil {
				q.timer.Stop()
			}
			q.mu.Unlock()
			return
		}
	}
}

// work writes whatever is due, then arms the timer for what is not.
func (q *queue) work() {
	for {
		q.mu.Lock()
		if q.final != nil {
			q.reply(q.final)
			q.mu.Unlock()
			return
		}
		now := clockTime(q.st.clock)
		draining := len(q.drains) > 0
		backoff := now.Before(q.retryAt)
		due := len(q.evs) > 0 && (draining || !backoff && (q.bytes >= q.st.opts.EagerBytes || !now.Before(q.arr[0].Add(q.st.opts.WriteWindow))))
		if q.reopen && (due || draining) {
			attempt := q.unresolved
			q.unresolved = nil
			q.mu.Unlock()
			err := q.recover()
			q.mu.Lock()
			switch {
			case err != nil:
				q.failed(err)
				if attempt == nil {
					attempt = err
				}
				q.reply(attempt)
			case attempt != nil && len(q.evs) > 0:
				// The backend holds less than the attempt sent: it failed,
				// and the drain learns so with the watermark recovery found.
				q.reopen = false
				q.reply(attempt)
			default:
				// Nothing was lost, or the failed attempt's batch turned out
				// stored: the drain goes on to its barrier.
				q.reopen = false
			}
			q.mu.Unlock()
			continue
		}
		if !due {
			if draining { // queue empty: the barrier
				waiters, stored := q.drains, q.stored
				q.drains = nil
				q.mu.Unlock()
				var err error
				if !stored {
					err = q.flushBackend()
				}
				for _, w := range waiters {
					w <- err
				}
				continue
			}
			q.armTimer(now, backoff)
			q.mu.Unlock()
			return
		}
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil
		}
		batch, tied := q.evs, q.tied
		q.writing = true
		q.mu.Unlock()

		acked, err := q.write(batch, tied)

		q.mu.Lock()
		q.writing = false
		if acked > 0 {
			n := envelopeBytes(batch[:acked])
			q.bytes -= n
			q.st.pending.release(n)
			q.evs = q.evs[acked:]
			q.arr = q.arr[acked:]
			q.tied = q.tied[acked:]
			q.watermark = sdk.Cursor(batch[acked-1].Seq())
			q.stored = true
			q.ls.spaceFreed()
		}
		if err == nil {
			q.streak, q.retryAt = 0, time.Time{}
			q.mu.Unlock()
			continue
		}
		q.failed(err)
		if draining && q.final == nil {
			// A failed call does not say what the backend stored (a
			// plugin may die after its fsync, a backend may fail after
			// the batch became durable): the drain is answered once the
			// re-open has settled it, so that what it reports is what is
			// durable.
			q.unresolved = err
		}
		q.mu.Unlock()
	}
}

// failed handles a write or flush failure; called with q.mu held. After a
// retryable one the backend's state is unknown, so the next write re-opens
// first and the batch stays queued; any other fences or
// detaches.
func (q *queue) failed(err error) {
	if obs := q.st.opts.Observer; obs != nil {
		obs.WriteFailed(q.b.name, sdk.CodeOf(err))
	}
	if sdk.Retryable(err) || sdk.CodeOf(err) == sdk.CodeHandleClosed {
		q.reopen = true
		q.streak++
		if q.streak == 1 {
			q.st.log.Warn("write-behind failed; will retry", "session", q.ls.s.ID(), "backend", q.b.name, "error", err)
		}
		backoff := q.st.opts.WriteWindow << min(q.streak-1, 30)
		if backoff > q.st.opts.RetryMaxBackoff || backoff <= 0 {
			backoff = q.st.opts.RetryMaxBackoff
		}
		q.retryAt = clockTime(q.st.clock).Add(backoff)
		return
	}
	q.setFinal(err)
}

// setFinal fences the session (primary) or detaches the mirror; q.mu held.
func (q *queue) setFinal(err error) {
	if q.b.primary {
		q.final = err
		q.ls.ctl.Fence(err)
		q.st.log.Error("primary backend failed; session fenced", "session", q.ls.s.ID(), "backend", q.b.name, "error", err)
	} else {
		q.final = &sdk.Error{Code: sdk.CodeMirrorDiverged, Op: "flush", SessionID: q.ls.s.ID(),
			Detail: "mirror " + q.b.name + " is detached for this session until it is released", Err: err}
		q.st.pending.release(q.bytes)
		q.evs, q.arr, q.tied, q.bytes = nil, nil, nil, 0
		q.ls.spaceFreed()
		q.st.log.Error("mirror detached", "session", q.ls.s.ID(), "backend", q.b.name, "error", err)
	}
	q.reply(q.final)
}

func (q *queue) reply(err error) {
	for _, w := range q.drains {
		w <- err
	}
	q.drains = nil
}

// armTimer schedules the next wake-up: the window deadline of the first
// queued event, or the end of the backoff. Called with q.mu held.
func (q *queue) armTimer(now time.Time, backoff bool) {
	if q.timer != nil || len(q.evs) == 0 {
		return
	}
	at := q.arr[0].Add(q.st.opts.WriteWindow)
	if backoff && q.retryAt.After(at) {
		at = q.retryAt
	}
	q.timer = q.st.clock.AfterFunc(at.Sub(now), func() {
		q.mu.Lock()
		q.timer = nil
		q.mu.Unlock()
		q.poke()
	})
}

// write appends batch, split so each request stays under RPCMaxBytes and,
// where tied says so, only between atomic units; it returns how many events
// the backend acknowledged. A part is one backend Append, which the backend
// makes durable all or nothing; the margin below RPCMaxBytes keeps the
// plugin client from splitting it again. A unit too large for one request is
// the one case that is split (logged), since it cannot be written otherwise.
func (q *queue) write(batch []session.Event, tied []bool) (acked int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), q.st.opts.CallTimeout)
	defer cancel()
	for acked < len(batch) {
		n := q.partLen(batch[acked:], tied[acked:])
		// The stored envelopes go as they are, uncopied: they never
		// change, and a backend neither keeps nor modifies what Append
		// hands it (sdk.Persistence.Append).
		q.parts = q.parts[:0]
		for _, e := range batch[acked : acked+n] {
			q.parts = append(q.parts, e.SharedEnvelope())
		}
		part := q.parts
		first := batch[acked].Seq()
		d, err := q.b.p.Append(ctx, q.b.handle, first, part)
		if err != nil {
			return acked, err
		}
		if want := sdk.Offset(first) + sdk.Offset(len(part)); d.NextSeq != want {
			return acked, sdk.Errorf(sdk.CodeSeqConflict, "flush", "backend %s acknowledged next seq %d, expected %d", q.b.name, d.NextSeq, want).
				WithSession(q.ls.s.ID()).WithSeq(int64(first))
		}
		acked += len(part)
	}
	return acked, nil
}

// partLen returns how many events of batch the next request takes: as many
// as fit below the request limit (at least one), cut back to the start of
// an atomic unit the limit would split.
func (q *queue) partLen(batch []session.Event, tied []bool) int {
	n := rpcsize.AppendBatchLen(len(batch), rpcsize.MaxAppendBytes(q.st.opts.RPCMaxBytes), func(i int) int { return batch[i].EnvelopeLen() })
	if n == len(batch) || !tied[n] {
		return n
	}
	cut := n
	for cut > 0 && tied[cut] {
		cut--
	}
	if cut > 0 {
		return cut
	}
	q.st.log.Warn("an atomic group exceeds one backend request and is written in parts", "session", q.ls.s.ID(), "backend", q.b.name, "first_seq", batch[0].Seq())
	return n
}

// flushBackend is the barrier after the queue drained, for a session the
// backend does not store yet (nothing acknowledged): its Flush materializes
// it. A failure is handled as a write's. q.mu is not held.
func (q *queue) flushBackend() error {
	ctx, cancel := context.WithTimeout(context.Background(), q.st.opts.CallTimeout)
	defer cancel()
	_, err := q.b.p.Flush(ctx, q.b.handle)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err != nil {
		q.failed(err)
		return err
	}
	q.stored = true
	return nil
}

// envelopeBytes is the size of evs' canonical envelopes.
func envelopeBytes(evs []session.Event) int64 {
	var n int64
	for _, e := range evs {
		n += int64(e.EnvelopeLen())
	}
	return n
}

// holds reports whether the backend stores the session's events up to
// seq byte for byte: the queue is attached and has them acknowledged.
func (q *queue) holds(seq sdk.Cursor) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.final == nil && q.watermark >= seq
}

// durable returns the acknowledged watermark.
func (q *queue) durable() sdk.Cursor {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.watermark
}

// recover re-opens the backend after an ambiguous failure or a plugin
// restart (docs/plugins.md): the stored next seq becomes the watermark after the
// stored events beyond the old watermark are verified byte for byte against
// the queue, which then drops them.
func (q *queue) recover() error {
	ctx, cancel := context.WithTimeout(context.Background(), q.st.opts.CallTimeout)
	defer cancel()
	id := q.ls.s.ID()
	_ = q.b.p.Close(ctx, q.b.handle) // idempotent; a dead process has forgotten it anyway
	o, err := q.b.p.Open(ctx, id, sdk.AccessWrite)
	opened := err == nil
	if errors.Is(err, sdk.CodeSessionNotFound) && q.durable() < 0 {
		// Nothing was acknowledged: the session had not materialized when the
		// plugin died, so it is created again.
		o, err = q.b.p.Create(ctx, q.ls.s.Header())
	}
	if err != nil {
		if errors.Is(err, sdk.CodeAlreadyOwned) {
			return &sdk.Error{Code: sdk.CodeOwnershipLost, Op: "flush", SessionID: id, Detail: "another owner holds " + q.b.name + " after a reconnect", Err: err}
		}
		return err
	}
	q.b.handle = o.Handle
	q.mu.Lock()
	wm, queued := q.watermark, q.evs
	q.stored = opened
	q.mu.Unlock()
	stored := int64(o.NextSeq) - 1
	if stored < int64(wm) {
		return sdk.Errorf(sdk.CodeLogShrank, "flush", "backend %s holds up to seq %d below the acknowledged %d", q.b.name, stored, wm).WithSession(id).WithSeq(stored)
	}
	extra := stored - int64(wm)
	if extra == 0 {
		return nil
	}
	if extra > int64(len(queued)) {
		return sdk.Errorf(sdk.CodeSeqConflict, "flush", "backend %s holds seqs this host never sent (up to %d)", q.b.name, stored).WithSession(id).WithSeq(stored)
	}
	i := 0
	err = q.b.p.Read(ctx, o.Handle, sdk.Offset(wm+1), extra, func(chunk [][]byte) error {
		for _, b := range chunk {
			if i >= len(queued) || string(b) != string(queued[i].Envelope()) {
				return sdk.Errorf(sdk.CodeSeqConflict, "flush", "stored event differs from the queued one after a reconnect to %s", q.b.name).
					WithSession(id).WithSeq(int64(wm) + 1 + int64(i))
			}
			i++
		}
		return nil
	})
	if err != nil {
		return err
	}
	q.mu.Lock()
	n := envelopeBytes(q.evs[:extra])
	q.bytes -= n
	q.evs, q.arr, q.tied = q.evs[extra:], q.arr[extra:], q.tied[extra:]
	q.watermark = sdk.Cursor(stored)
	q.mu.Unlock()
	q.st.pending.release(n)
	q.ls.spaceFreed()
	return nil
}
