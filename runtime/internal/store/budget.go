package store

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Budget is the process-wide limits that several stores share (one store
// per tenant, Options.Budget): MaxLiveSessions counts the sessions live or
// opening in every store made with it, and MaxPendingBytesTotal the bytes
// queued by all of them. A store made without one has its own.
type Budget struct {
	maxLive int
	pending *pendingBound

	// mu orders the places takeSlot gives out; it is taken before any
	// store's mu, never under one.
	mu     sync.Mutex
	stores []*Store // every store made with this budget
}

// newBudget returns the budget of o's limits.
func newBudget(o Options) *Budget {
	return &Budget{maxLive: o.MaxLiveSessions,
		pending: &pendingBound{limit: o.MaxPendingBytesTotal, timeout: o.WriteBackpressureTimeout, clock: o.Clock}}
}

// join lists st among the stores the budget counts.
func (b *Budget) join(st *Store) {
	b.mu.Lock()
	b.stores = append(b.stores, st)
	b.mu.Unlock()
}

// members returns the stores made with the budget.
func (b *Budget) members() []*Store {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*Store(nil), b.stores...)
}

// Budget returns the limits st counts against, to hand to the store of
// another tenant (Options.Budget).
func (st *Store) Budget() *Budget { return st.budget }

// slot is a place among the budget's MaxLiveSessions taken by a Create,
// Open, Fork or Salvage while it builds its session: the session counts
// against the cap from before it claims anything until it is live (then
// st.live counts it) or has failed.
type slot struct{ st *Store }

// takeSlot takes a place for one more live session, or refuses with
// TOO_MANY_LIVE_SESSIONS when the live sessions and those being opened, in
// every store sharing st's budget, fill MaxLiveSessions; the caller has
// not changed anything yet. The count only grows here, under the budget's
// lock, so two stores never both take the last place.
func (st *Store) takeSlot(op, id string) (slot, error) {
	b := st.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, o := range b.stores {
		o.mu.Lock()
		n += len(o.live) + o.opening
		o.mu.Unlock()
	}
	if n >= b.maxLive {
		return slot{}, &sdk.Error{Code: sdk.CodeTooManyLiveSessions, Op: op, SessionID: id,
			Detail: fmt.Sprintf("%d sessions are live or opening, the cap max_live_sessions = %d; release a session and retry, or raise max_live_sessions", n, b.maxLive),
			Meta:   map[string]string{"limit": strconv.Itoa(b.maxLive)}}
	}
	st.mu.Lock()
	st.opening++
	st.mu.Unlock()
	return slot{st}, nil
}

// done gives the place back: the session is live (st.live counts it now)
// or was never made live.
func (sl slot) done() {
	sl.st.mu.Lock()
	sl.st.opening--
	sl.st.mu.Unlock()
}
