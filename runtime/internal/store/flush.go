package store

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// BackendStatus is one backend's part of a flush.
type BackendStatus struct {
	Name       string
	DurableSeq sdk.Cursor // the backend's acknowledged watermark after the flush
	Err        error
}

// FlushResult reports a flush fan-out (docs/architecture.md).
type FlushResult struct {
	// Participated is true when at least one backend was attached and asked
	// to flush; false is no proof of durability.
	Participated bool
	// Backends lists every attached backend, in configuration order.
	Backends []BackendStatus
}

// FlushError names every backend that failed a flush. A flush returns it
// as the cause of a FLUSH_FAILED *sdk.Error (op "flush", the session's id),
// so sdk.CodeOf reports FLUSH_FAILED while errors.Is still finds each
// failure's own code beneath it.
type FlushError struct {
	Failures []BackendStatus
}

// Error lists the failed backends, each as `<name>: <error>`; the name is
// left out when the error already starts with it (a backend named after its
// plugin), so no prefix is rendered twice.
func (e *FlushError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = f.Err.Error()
		if !strings.HasPrefix(parts[i], f.Name+": ") {
			parts[i] = f.Name + ": " + parts[i]
		}
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns each failure's error.
func (e *FlushError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, f := range e.Failures {
		errs[i] = f.Err
	}
	return errs
}

// Flush drains every backend of the session concurrently, waits for all of
// them to settle — an early failure does not stop the wait — and returns each
// backend's watermark, plus a FLUSH_FAILED *sdk.Error whose cause is a
// *FlushError naming every failed backend.
func (st *Store) Flush(ctx context.Context, s *session.Session) (FlushResult, error) {
	ls, err := st.liveOf(s, "flush")
	if err != nil {
		return FlushResult{}, err
	}
	res, err := ls.flush(ctx)
	if err == nil {
		st.checkpointGrown(ctx, ls)
	}
	return res, err
}

// checkpointGrown writes the session's checkpoint after a flush once its
// log has doubled since the last one (from checkpointMinEvents on), so a
// long-lived session that is never released still restores quickly after
// a crash, at an amortized cost of O(1) per event. A fork child counts
// from its inherited prefix: its first flush, which makes the fork
// durable, does not wait for the fold of that prefix to be encoded and
// stored; the child is checkpointed when it has doubled it, or released.
// One flush at a time writes it; the others go on.
func (st *Store) checkpointGrown(ctx context.Context, ls *live) {
	n := ls.s.Len()
	if n < checkpointMinEvents || int64(n) < 2*max(ls.checkpointed.Load(), ls.inherited) || !ls.checkpointing.TryLock() {
		return
	}
	defer ls.checkpointing.Unlock()
	if st.writeCheckpoints(ctx, ls.s, ls.backends()) {
		ls.checkpointed.Store(int64(n))
	}
}

func (ls *live) flush(ctx context.Context) (FlushResult, error) {
	res := FlushResult{Participated: len(ls.queues) > 0, Backends: make([]BackendStatus, len(ls.queues))}
	settle := func(i int, q *queue) {
		start := q.st.observeStart()
		err := q.drain(ctx)
		if err == nil {
			q.st.observeFlushed(q.b.name, start)
		}
		res.Backends[i] = BackendStatus{Name: q.b.name, DurableSeq: q.durable(), Err: err}
	}
	if len(ls.queues) == 1 {
		settle(0, ls.queues[0]) // one backend: no goroutine to hand over to
	} else {
		var wg sync.WaitGroup
		for i, q := range ls.queues {
			wg.Go(func() { settle(i, q) })
		}
		wg.Wait()
	}
	fe := &FlushError{}
	for _, b := range res.Backends {
		if b.Err != nil {
			fe.Failures = append(fe.Failures, b)
		}
	}
	if len(fe.Failures) > 0 {
		return res, sdk.Wrapf(sdk.CodeFlushFailed, "flush", fe, "%d of %d backends failed", len(fe.Failures), len(res.Backends)).WithSession(ls.s.ID())
	}
	return res, nil
}

// Release drains and flushes every backend, closes the handles, takes the
// session out of the live set and closes it. It closes the session to
// appends before it drains, so an append racing it either committed before
// and is in the final flush, or fails with SESSION_CLOSED having appended
// nothing. When the primary cannot be drained the session stays live and
// open to appends (nothing queued is dropped) and the error is returned;
// mirror failures are returned but do not stop the release.
func (st *Store) Release(ctx context.Context, s *session.Session) error {
	_, err := st.ReleaseFlushed(ctx, s)
	return err
}

// ReleaseFlushed is Release, and also returns its final flush's result:
// each backend's watermark when the session was released.
func (st *Store) ReleaseFlushed(ctx context.Context, s *session.Session) (FlushResult, error) {
	ls, err := st.liveOf(s, "release")
	if err != nil {
		return FlushResult{}, err
	}
	return st.release(ctx, ls, false)
}

// release closes ls to appends, drains and flushes it, and closes it.
// Unless final is set, a primary that could not be drained keeps the
// session live and reopened (its events stay queued and are retried);
// final is the store's Close, after which nothing more is written, so that
// what it reports is what is durable. Releases of one session run one at a
// time: a later one finds it released.
func (st *Store) release(ctx context.Context, ls *live, final bool) (FlushResult, error) {
	ls.releasing.Lock()
	defer ls.releasing.Unlock()
	if cur, ok := st.liveEntry(ls.s.ID()); !ok || cur != ls {
		return FlushResult{}, releasedConcurrently(ls.s.ID())
	}
	ls.ctl.Close()
	ls.spaceFreed() // an append waiting for queue room wakes and finds the session closed
	st.pending.dropWaiters(ls)
	ls.ctl.Settle() // every append has committed, and is queued, or failed
	res, ferr := ls.flush(ctx)
	var fe *FlushError
	if errors.As(ferr, &fe) {
		for _, f := range fe.Failures {
			if f.Name == ls.queues[0].b.name && ls.s.Fenced() == nil && !final {
				ls.ctl.Reopen()
				return res, ferr // the primary still holds queued events: keep the session live
			}
		}
	} else if ferr != nil && !final {
		ls.ctl.Reopen()
		return res, ferr
	}
	st.mu.Lock()
	if st.live[ls.s.ID()] != ls {
		st.mu.Unlock()
		return res, releasedConcurrently(ls.s.ID())
	}
	delete(st.live, ls.s.ID())
	closed := make(chan struct{})
	st.releasing[ls.s.ID()] = closed
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.releasing, ls.s.ID())
		st.mu.Unlock()
		close(closed)
	}()
	st.stopQueues(ls)
	var errs []error
	if ferr != nil {
		errs = append(errs, ferr)
	}
	cctx, cancel := context.WithTimeout(context.Background(), st.opts.CallTimeout)
	defer cancel()
	if ferr == nil && int64(ls.s.Len()) != ls.checkpointed.Load() { // else the stored checkpoint still covers it all
		ls.checkpointing.Lock()
		st.writeCheckpoints(cctx, ls.s, ls.backends())
		ls.checkpointing.Unlock()
	}
	for _, q := range ls.queues {
		if err := q.b.p.Close(cctx, q.b.handle); err != nil {
			errs = append(errs, wrapBackend(err, "release", q.b.name, ls.s.ID()))
		}
	}
	st.feed.sessionReleased(ls.s)
	return res, errors.Join(errs...)
}

// releasedConcurrently is the error of a release that another release of
// the same session ran before.
func releasedConcurrently(id string) error {
	return &sdk.Error{Code: sdk.CodeSessionNotLive, Op: "release", SessionID: id, Detail: "released concurrently"}
}

// Close releases every live session concurrently and refuses new ones; it
// returns the joined errors. It is final: a session whose primary cannot be
// drained is closed all the same, its undrained events dropped, so that no
// write follows what Close reports.
func (st *Store) Close(ctx context.Context) error {
	st.mu.Lock()
	st.closed = true
	all := make([]*live, 0, len(st.live))
	for _, ls := range st.live {
		all = append(all, ls)
	}
	st.mu.Unlock()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, ls := range all {
		wg.Go(func() { _, errs[i] = st.release(ctx, ls, true) })
	}
	wg.Wait()
	st.feed.close()
	return errors.Join(errs...)
}

// ListEntry is one session of List: the primary's entry for it (Err set,
// and Header maybe zero, when the session cannot be read; the entry is
// still listed), and whether it is live in this store. A live session not
// yet stored has no Revision; a live session's EventCount is its log's
// length, and its LastActivity the later of the primary's and its last
// event's time.
type ListEntry struct {
	sdk.ListEntry
	Live bool
}

// List returns the live sessions plus the primary's stored ones; a broken
// session is an entry with Err, never a failed list.
func (st *Store) List(ctx context.Context) ([]ListEntry, error) {
	st.mu.Lock()
	var out []ListEntry
	seen := map[string]int{} // live id → its index in out
	for id, ls := range st.live {
		h := ls.s.Header()
		e := sdk.ListEntry{ID: id, Header: h, EventCount: int64(ls.s.Len()), LastActivity: h.CreatedAt}
		if n := ls.s.Len(); n > 0 {
			last, _ := ls.s.Event(sdk.Seq(n - 1))
			e.LastActivity = max(e.LastActivity, last.Time())
		}
		seen[id] = len(out)
		out = append(out, ListEntry{ListEntry: e, Live: true})
	}
	st.mu.Unlock()
	if p, ok := st.primary(); ok {
		err := p.Persistence.List(ctx, func(e sdk.ListEntry) error {
			if i, live := seen[e.ID]; live {
				out[i].Revision = e.Revision
				out[i].LastActivity = max(out[i].LastActivity, e.LastActivity)
				return nil
			}
			out = append(out, ListEntry{ListEntry: e})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
