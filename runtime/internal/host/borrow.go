package host

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// borrowed is a session the host resumed for requests that may still fail:
// when the last of them ends and none succeeded, and no Acquire claimed
// it, the host releases it again (Borrow).
type borrowed struct {
	sess  *session.Session
	users int  // Borrow calls that have not called their done yet
	keep  bool // a borrower succeeded, or an Acquire claimed the session
	// gone is set when the last borrower failed and the host releases the
	// session, and closed once it is released: a take that finds it waits,
	// then opens the session anew. The entry stays in Host.borrowed until
	// then, so no take mistakes the session being released for a live one.
	gone chan struct{}
}

// Borrow is Acquire for one request that writes to the session (an
// append, a compaction): it returns the live session and done, which the
// caller must call once with whether the request succeeded. When every
// request that borrowed a session the host resumed for them failed, and
// no Acquire claimed it meanwhile, done flushes and releases the session
// again, so a failed request leaves a session that was not live as it
// was, not live (the repair the resume wrote stays: any later open would
// write it). A session that was live already stays live either way.
func (h *Host) Borrow(ctx context.Context, id string) (Opened, func(ok bool), error) {
	o, b, err := h.take(ctx, id, true)
	if err != nil {
		return o, nil, err
	}
	return o, func(ok bool) { h.giveBack(ctx, b, ok) }, nil
}

// take opens id (open) and settles its borrowed entry: a borrower (borrow)
// counts itself in; an Acquire claims it for good. A session released by
// a failed borrower between the open and the settling is opened again.
func (h *Host) take(ctx context.Context, id string, borrow bool) (Opened, *borrowed, error) {
	for {
		o, err := h.open(ctx, id)
		if err != nil {
			return o, nil, err
		}
		h.mu.Lock()
		b := h.borrowed[id]
		if b == nil || b.sess != o.Session {
			h.mu.Unlock()
			return o, nil, nil // live before any borrower: nothing to undo
		}
		if gone := b.gone; gone != nil {
			h.mu.Unlock()
			select {
			case <-gone:
				continue
			case <-ctx.Done():
				return Opened{}, nil, ctx.Err()
			}
		}
		if borrow {
			b.users++
		} else {
			b.keep = true
			h.settle(b)
		}
		h.mu.Unlock()
		return o, b, nil
	}
}

// settle forgets a borrowed entry no request uses any more, unless it is
// being released. h.mu is held.
func (h *Host) settle(b *borrowed) {
	if b.users == 0 && b.gone == nil && h.borrowed[b.sess.ID()] == b {
		delete(h.borrowed, b.sess.ID())
	}
}

// giveBack ends one borrower's use of b (nil: nothing to undo), releasing
// the session when it was the last and nobody kept it.
func (h *Host) giveBack(ctx context.Context, b *borrowed, ok bool) {
	if b == nil {
		return
	}
	h.mu.Lock()
	b.users--
	if ok {
		b.keep = true
	}
	if b.users > 0 || b.keep {
		h.settle(b)
		h.mu.Unlock()
		return
	}
	b.gone = make(chan struct{})
	h.mu.Unlock()
	if cur, live := h.st.Get(b.sess.ID()); live && cur == b.sess { // else released already (Release, shutdown)
		if err := h.st.Release(context.WithoutCancel(ctx), b.sess); err != nil {
			h.log.Warn("releasing a session a failed request resumed failed", "session", b.sess.ID(), "error", err)
		}
		if cur, live := h.st.Get(b.sess.ID()); !live || cur != b.sess {
			h.unhold(b.sess) // released, possibly with mirror errors
		}
	}
	h.mu.Lock()
	if h.borrowed[b.sess.ID()] == b {
		delete(h.borrowed, b.sess.ID())
	}
	h.mu.Unlock()
	close(b.gone)
}
