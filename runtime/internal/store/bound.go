package store

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// pendingBound is the process-wide bound on write-behind memory
// (Options.MaxPendingBytesTotal). Its total is the envelope bytes queued
// for every backend of every live session (an event counts once per
// queue) plus what admitted appends have reserved and not queued yet.
//
// An append reserves its unit's bytes before it commits (reserve, called
// at step A12 under the session's append lock), so a refused append
// commits nothing; the commit hook then queues exactly what was reserved,
// and a queue gives bytes back (release) as its backend acknowledges
// them, as a detached mirror drops them, and as a released session's
// queues stop. Events a create, fork or open queues without an append
// (a seed, an inherited prefix a backend could not copy) are counted
// with add, which never waits.
//
// Appends that do not fit wait in arrival order; one is admitted alone
// into an empty total whatever its size, so that no unit waits forever.
// Save for that unit and for what add counts, the total never exceeds
// the limit. The common case, room and
// nobody waiting, costs two atomic loads and one compare-and-swap; the
// mutex is taken only when someone waits.
type pendingBound struct {
	limit   int64
	timeout time.Duration
	clock   Clock

	total   atomic.Int64 // reserved or queued bytes
	waiting atomic.Int32 // len(waiters), readable without mu

	mu      sync.Mutex
	waiters []*boundWaiter // in arrival order
}

// boundWaiter is an append to session id (its live entry ls, which tells
// apart sessions of one id in two tenants' stores) waiting for room.
// granted (under mu) says its bytes were added to the total; ready is
// closed then. closed is closed when the session is released under it
// (dropWaiters).
type boundWaiter struct {
	n       int64
	id      string
	ls      *live
	granted bool
	ready   chan struct{}
	closed  chan struct{}
}

// reserve adds n bytes to the total once they fit, waiting behind earlier
// waiters up to the timeout (then BACKEND_BUSY naming the bound), until
// ctx ends (its error), or until the session id of ls is released
// (SESSION_CLOSED; dropWaiters(ls) ends the wait). ls may be nil (an
// append of no session). On error nothing was added.
func (p *pendingBound) reserve(ctx context.Context, n int64, id string, ls *live) error {
	if n <= 0 || p.waiting.Load() == 0 && p.tryAdd(n) {
		return nil
	}
	w := &boundWaiter{n: n, id: id, ls: ls, ready: make(chan struct{}), closed: make(chan struct{})}
	p.mu.Lock()
	if ls != nil && ls.s.Closed() {
		// Released before w was listed: dropWaiters did not see it.
		p.mu.Unlock()
		return closedWhileWaiting(id, "max_pending_bytes_total")
	}
	p.waiters = append(p.waiters, w)
	p.waiting.Add(1)
	p.grant() // room freed before w was listed is not announced again
	p.mu.Unlock()
	expired := make(chan struct{})
	t := p.clock.AfterFunc(p.timeout, func() { close(expired) })
	defer t.Stop()
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = p.busy(n, id)
	case <-w.closed:
		err = closedWhileWaiting(id, "max_pending_bytes_total")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted {
		return nil // admitted as the wait ended: the room is w's
	}
	for i, o := range p.waiters {
		if o == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			p.waiting.Add(-1)
			break
		}
	}
	p.grant() // w may have held back smaller appends behind it
	return err
}

// tryAdd adds n when it fits (or the total is empty).
func (p *pendingBound) tryAdd(n int64) bool {
	for {
		cur := p.total.Load()
		if cur != 0 && cur+n > p.limit {
			return false
		}
		if p.total.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// grant admits waiters in arrival order while the first fits; p.mu held.
func (p *pendingBound) grant() {
	for len(p.waiters) > 0 && p.tryAdd(p.waiters[0].n) {
		w := p.waiters[0]
		w.granted = true
		close(w.ready)
		p.waiters[0] = nil
		p.waiters = p.waiters[1:]
		p.waiting.Add(-1)
	}
}

// dropWaiters ends the wait of every append to the session of ls, which
// its release closed: each fails with SESSION_CLOSED, unless it was
// admitted first. The session is marked closed before, so an append that
// lists itself later sees it so (reserve).
func (p *pendingBound) dropWaiters(ls *live) {
	if p.waiting.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.waiters {
		if w.ls == ls {
			select {
			case <-w.closed:
			default:
				close(w.closed)
			}
		}
	}
}

// add counts n bytes queued without an append; it never waits.
func (p *pendingBound) add(n int64) { p.total.Add(n) }

// release gives back n bytes and admits the waiters that now fit.
func (p *pendingBound) release(n int64) {
	if n == 0 {
		return
	}
	p.total.Add(-n)
	// A waiter lists itself before it checks the total, and this reads
	// waiting after changing it: one of the two sees the other.
	if p.waiting.Load() > 0 {
		p.mu.Lock()
		p.grant()
		p.mu.Unlock()
	}
}

// busy is the refusal of an append of n bytes that found no room in time.
func (p *pendingBound) busy(n int64, id string) error {
	cur := p.total.Load()
	e := sdk.Errorf(sdk.CodeBackendBusy, "append",
		"the write-behind queues of this process hold %d bytes and this append needs %d more, past max_pending_bytes_total %d; no backend made room within write_backpressure_timeout %v. Nothing was appended: retry later, or raise max_pending_bytes_total",
		cur, n, p.limit, p.timeout).WithSession(id)
	e.Meta = map[string]string{
		"max_pending_bytes_total":    strconv.FormatInt(p.limit, 10),
		"write_backpressure_timeout": p.timeout.String(),
		"pending_bytes":              strconv.FormatInt(cur, 10),
	}
	return e
}
