package store

import (
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// DefaultMaxLiveSessions is Options.MaxLiveSessions by default.
const DefaultMaxLiveSessions = 1000

// slot is a place among the store's MaxLiveSessions taken by a Create,
// Open, Fork or Salvage while it builds its session: the session counts
// against the cap from before it claims anything until it is live (then
// st.live counts it) or has failed.
type slot struct{ st *Store }

// takeSlot takes a place for one more live session, or refuses with
// TOO_MANY_LIVE_SESSIONS when the live sessions and those being opened
// fill MaxLiveSessions; the caller has not changed anything yet.
func (st *Store) takeSlot(op, id string) (slot, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if n := len(st.live) + st.opening; n >= st.opts.MaxLiveSessions {
		return slot{}, &sdk.Error{Code: sdk.CodeTooManyLiveSessions, Op: op, SessionID: id,
			Detail: fmt.Sprintf("%d sessions are live or opening, the cap max_live_sessions = %d; release a session and retry, or raise max_live_sessions", n, st.opts.MaxLiveSessions),
			Meta:   map[string]string{"limit": strconv.Itoa(st.opts.MaxLiveSessions)}}
	}
	st.opening++
	return slot{st}, nil
}

// done gives the place back: the session is live (st.live counts it now)
// or was never made live.
func (sl slot) done() {
	sl.st.mu.Lock()
	sl.st.opening--
	sl.st.mu.Unlock()
}
