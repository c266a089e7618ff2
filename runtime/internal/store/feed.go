package store

import (
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Listener observes live sessions (docs/architecture.md). Calls for one subscription
// come from one goroutine, in order.
type Listener interface {
	SessionLive(s *session.Session)            // before the first Event of s
	Event(s *session.Session, e session.Event) // every event with seq ≥ FirstLiveSeq, in order, once
	SessionReleased(s *session.Session)        // after the last Event of s
}

// feed fans commits out to subscriptions.
type feed struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (f *feed) init() { f.subs = map[*Subscription]struct{}{} }

// Subscription is one listener's cursor over the live sessions; each runs on
// its own goroutine. Delivery never blocks Append: a slow listener only lags.
type Subscription struct {
	st   *Store
	l    Listener
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	cursors []*cursor
}

type cursor struct {
	s         *session.Session
	next      sdk.Offset
	announced bool
	released  bool
}

// Subscribe starts delivering to l: every event of sessions that go live
// from now on (from their FirstLiveSeq), and of sessions already live from
// their current length.
func (st *Store) Subscribe(l Listener) *Subscription {
	sub := &Subscription{st: st, l: l, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	st.mu.Lock()
	for _, ls := range st.live {
		sub.cursors = append(sub.cursors, &cursor{s: ls.s, next: ls.s.Len()})
	}
	st.feed.mu.Lock()
	st.feed.subs[sub] = struct{}{}
	st.feed.mu.Unlock()
	st.mu.Unlock()
	go sub.run()
	sub.poke()
	return sub
}

// Close stops delivery after the current callback and waits for it.
func (sub *Subscription) Close() {
	sub.st.feed.mu.Lock()
	delete(sub.st.feed.subs, sub)
	sub.st.feed.mu.Unlock()
	select {
	case <-sub.stop:
	default:
		close(sub.stop)
	}
	<-sub.done
}

func (sub *Subscription) poke() {
	select {
	case sub.wake <- struct{}{}:
	default:
	}
}

func (f *feed) each(fn func(*Subscription)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for sub := range f.subs {
		fn(sub)
	}
}

func (f *feed) notify() { f.each((*Subscription).poke) }

func (f *feed) sessionLive(s *session.Session) {
	f.each(func(sub *Subscription) {
		sub.mu.Lock()
		sub.cursors = append(sub.cursors, &cursor{s: s, next: s.FirstLiveSeq()})
		sub.mu.Unlock()
		sub.poke()
	})
}

func (f *feed) sessionReleased(s *session.Session) {
	f.each(func(sub *Subscription) {
		sub.mu.Lock()
		for _, c := range sub.cursors {
			if c.s == s {
				c.released = true
			}
		}
		sub.mu.Unlock()
		sub.poke()
	})
}

func (f *feed) close() {
	f.mu.Lock()
	subs := make([]*Subscription, 0, len(f.subs))
	for sub := range f.subs {
		subs = append(subs, sub)
	}
	f.mu.Unlock()
	for _, sub := range subs {
		sub.Close()
	}
}

func (sub *Subscription) run() {
	defer close(sub.done)
	for {
		select {
		case <-sub.stop:
			return
		case <-sub.wake:
		}
		sub.mu.Lock()
		cs := append([]*cursor(nil), sub.cursors...)
		sub.mu.Unlock()
		for _, c := range cs {
			if !sub.deliver(c) {
				return
			}
		}
	}
}

// deliver brings one cursor up to date; false when the subscription stopped.
func (sub *Subscription) deliver(c *cursor) bool {
	if !c.announced {
		c.announced = true
		sub.call(func() { sub.l.SessionLive(c.s) })
	}
	sub.mu.Lock()
	released := c.released
	sub.mu.Unlock()
	for c.next < c.s.Len() {
		select {
		case <-sub.stop:
			return false
		default:
		}
		e, _ := c.s.Event(sdk.Seq(c.next))
		sub.call(func() { sub.l.Event(c.s, e) })
		c.next++
	}
	if released {
		sub.call(func() { sub.l.SessionReleased(c.s) })
		sub.mu.Lock()
		for i, x := range sub.cursors {
			if x == c {
				sub.cursors = append(sub.cursors[:i], sub.cursors[i+1:]...)
				break
			}
		}
		sub.mu.Unlock()
	}
	return true
}

// call runs a listener callback, recovering and logging a panic.
func (sub *Subscription) call(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			sub.st.log.Error("event listener panicked; delivery continues", "panic", r)
		}
	}()
	fn()
}
