package host

import (
	"context"
	"slices"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// maxIdled caps the sessions a host remembers releasing for idleness
// (ReleaseIdle); past it, the one released longest ago is forgotten.
const maxIdled = 4096

// idledSet is what the host remembers of the sessions ReleaseIdle
// released: their final flush, by id, so that a client's Flush or Release
// of one answers as it would have had the session stayed live. A session
// is forgotten when it is made live in this host again, deleted through
// it, or pushed out by maxIdled newer ones; a restart forgets them all.
type idledSet struct {
	byID  map[string]idled
	order []idledKey // in release order; keys forgotten since are stale
	next  uint64
}

type idled struct {
	res store.FlushResult
	n   uint64 // its key's n in order
}

type idledKey struct {
	id string
	n  uint64
}

// rememberLocked notes that ReleaseIdle released id with res. h.mu is held.
func (h *Host) rememberLocked(id string, res store.FlushResult) {
	set := &h.idled
	if set.byID == nil {
		set.byID = map[string]idled{}
	}
	set.next++
	set.byID[id] = idled{res: res, n: set.next}
	set.order = append(set.order, idledKey{id: id, n: set.next})
	for len(set.byID) > maxIdled {
		k := set.order[0]
		set.order = set.order[1:]
		if cur, ok := set.byID[k.id]; ok && cur.n == k.n {
			delete(set.byID, k.id)
		}
	}
	if len(set.order) > 2*maxIdled { // drop the stale keys
		set.order = slices.DeleteFunc(set.order, func(k idledKey) bool { return set.byID[k.id].n != k.n })
	}
}

// forgetLocked forgets that ReleaseIdle released id. h.mu is held.
func (h *Host) forgetLocked(id string) { delete(h.idled.byID, id) }

// forget is forgetLocked, taking h.mu.
func (h *Host) forget(id string) {
	h.mu.Lock()
	h.forgetLocked(id)
	h.mu.Unlock()
}

// idledAfter returns the final flush of id when err, a write's refusal of
// it, is SESSION_NOT_LIVE and ReleaseIdle released it.
func (h *Host) idledAfter(id string, err error) (store.FlushResult, bool) {
	if sdk.CodeOf(err) != sdk.CodeSessionNotLive {
		return store.FlushResult{}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.idled.byID[id]
	if !ok {
		return store.FlushResult{}, false
	}
	res := d.res
	res.Backends = slices.Clone(res.Backends)
	return res, true
}

// holding is a session the host made live, and who uses it.
type holding struct {
	sess *session.Session
	// users counts the requests in flight (Visit) that use the session;
	// ReleaseIdle never releases a session with users.
	users int
	// last is when the session was made live or a request last used it.
	last time.Time
}

// visit is the sessions one request used, in its context (Visit).
type visit struct{ used []*holding }

type visitKey struct{}

// Visit returns ctx marked as one request's: every held session a call of
// the host with that context uses (Acquire, Live, Create, Fork and the
// reads of a live session) is kept from ReleaseIdle until done is called,
// and counts as used at that moment. Call done once, when the request
// ends.
func (h *Host) Visit(ctx context.Context) (_ context.Context, done func()) {
	v := &visit{}
	return context.WithValue(ctx, visitKey{}, v), func() {
		now := time.Now()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, hd := range v.used {
			hd.users--
			hd.last = now
		}
		v.used = nil
	}
}

// useLocked notes that ctx's request uses the held session sess (nothing
// when the host does not hold it). h.mu is held.
func (h *Host) useLocked(ctx context.Context, sess *session.Session) {
	hd := h.held[sess.ID()]
	if hd == nil || hd.sess != sess {
		return
	}
	hd.last = time.Now()
	v, _ := ctx.Value(visitKey{}).(*visit)
	if v == nil {
		return
	}
	for _, u := range v.used {
		if u == hd {
			return
		}
	}
	hd.users++
	v.used = append(v.used, hd)
}

// use is useLocked, taking h.mu.
func (h *Host) use(ctx context.Context, sess *session.Session) {
	h.mu.Lock()
	h.useLocked(ctx, sess)
	h.mu.Unlock()
}

// liveUse returns the session id when it is live in the store, noting its
// use by ctx's request. While ReleaseIdle releases it, it waits for the
// release to end (or ctx), and then reports it not live.
func (h *Host) liveUse(ctx context.Context, id string) (*session.Session, bool) {
	for {
		h.mu.Lock()
		if ch, releasing := h.releasing[id]; releasing {
			h.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, false
			}
		}
		sess, ok := h.st.Get(id)
		if ok {
			h.useLocked(ctx, sess)
		}
		h.mu.Unlock()
		return sess, ok
	}
}

// ReleaseIdle flushes and releases every held session that no request
// uses and none used for at least idle, and returns how many it released.
// A request that asks for such a session while it is being released waits
// for the release and then resumes it; one in flight keeps it. A session
// whose release fails stays held and is tried again at a later call. Each
// release is logged at debug.
//
// The host remembers each session it released cleanly (every backend
// flushed) and its final flush, up to maxIdled of them: until the session
// is made live here again or deleted here, Flush of it answers that flush
// and Release of it succeeds, as they would have had it stayed live, for
// everything appended to it here is durable.
func (h *Host) ReleaseIdle(ctx context.Context, idle time.Duration) int {
	now := time.Now()
	type due struct {
		id   string
		sess *session.Session
		done chan struct{}
	}
	var dues []due
	h.mu.Lock()
	for id, hd := range h.held {
		if hd.users == 0 && now.Sub(hd.last) >= idle {
			delete(h.held, id)
			d := due{id: id, sess: hd.sess, done: make(chan struct{})}
			h.releasing[id] = d.done
			dues = append(dues, d)
		}
	}
	h.mu.Unlock()
	released := 0
	for _, d := range dues {
		res, err := h.st.ReleaseFlushed(ctx, d.sess)
		h.mu.Lock()
		if cur, ok := h.st.Get(d.id); ok && cur == d.sess {
			h.held[d.id] = &holding{sess: d.sess, last: time.Now()} // still live: the flush failed
		} else {
			released++
			if err == nil {
				h.rememberLocked(d.id, res)
			}
		}
		delete(h.releasing, d.id)
		close(d.done)
		h.mu.Unlock()
		if err != nil {
			h.log.Warn("releasing an idle session failed", "session", d.id, "error", err)
			continue
		}
		h.log.Debug("idle session released", "session", d.id, "idle_release", idle)
	}
	return released
}
