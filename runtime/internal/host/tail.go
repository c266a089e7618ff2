package host

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// TailRequest says what Tail reads.
type TailRequest struct {
	ID string
	// From is the first seq to send; End the seq to stop before (exclusive).
	From, End int64
	// Follow keeps the tail open after the log's end: it sends the events
	// appended later, until ctx ends, End is reached or the host stops.
	Follow bool
}

// Sink receives the events of a tail.
type Sink interface {
	// Event queues one event; events come once each, in seq order.
	Event(e session.Event) error
	// Flush sends what is queued: the tail has caught up for now.
	Flush() error
}

// Tail sends the log of r.ID from r.From to sink (without r.Follow, the
// window Window reads), and with r.Follow the events appended later. A session live here is followed through the
// store's feed (subscribed before the log is read, so no event committed
// after a read goes unnoticed); one this host does not hold, when the
// primary backend can watch it, through store.FollowStored, so events
// another host writes arrive too. Tail returns nil at End, or at the log's
// end without Follow; a read's or sink's error, ctx's error, or
// ErrStopping otherwise.
func (h *Host) Tail(ctx context.Context, r TailRequest, sink Sink) error {
	if r.Follow && h.st.CanFollowStored() {
		next, err := h.followStored(ctx, r, sink)
		if !errors.Is(err, errWentLive) {
			return err
		}
		r.From = next // live here now: follow its feed from where the stored follow stopped
	}
	if !r.Follow {
		if err := h.Window(ctx, r.ID, r.From, r.End, func(int64) {}, sink); err != nil {
			return err
		}
		return sink.Flush()
	}
	wake := make(chan struct{}, 1)
	sub := h.st.Subscribe(wakeOn{id: r.ID, wake: wake})
	defer sub.Close()
	next := r.From
	for {
		_, events, err := h.View(ctx, r.ID)
		if err != nil {
			return err
		}
		for stop := min(r.End, int64(events.Len())); next < stop; next++ {
			if err := sink.Event(events.At(int(next))); err != nil {
				return err
			}
		}
		if err := sink.Flush(); err != nil {
			return err
		}
		if next >= r.End {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.stop:
			return ErrStopping
		case <-wake:
		}
	}
}

// Window calls begin with the length of session id's log, then sends sink
// the events [from, end) of it that exist: a live session's from memory, a
// stored one's read from the primary without restoring the session
// (store.ReadStored), so a page of a long stored log costs the page.
func (h *Host) Window(ctx context.Context, id string, from, end int64, begin func(length int64), sink Sink) error {
	if sess, ok := h.st.Get(id); ok {
		events := sess.Events()
		begin(int64(events.Len()))
		for seq := from; seq < min(end, int64(events.Len())); seq++ {
			if err := sink.Event(events.At(int(seq))); err != nil {
				return err
			}
		}
		return nil
	}
	return h.st.ReadStored(ctx, id, sdk.Offset(from), sdk.Offset(end), func(n sdk.Offset) { begin(int64(n)) }, func(events []session.Event) error {
		for _, e := range events {
			if err := sink.Event(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// errFollowDone ends a stored follow that reached its End.
var errFollowDone = errors.New("the follow reached its end")

// errWentLive ends a stored follow whose session went live on this host:
// its events then reach the store's feed before they are stored.
var errWentLive = errors.New("the session went live on this host")

// followStored tails a session this host does not hold from the primary
// (store.FollowStored): what is stored from r.From, then each growth the
// backend reports. It returns the next seq it owes the sink and
// errWentLive, at once or later, when the session is or goes live here, so
// that Tail follows the live session instead (a write-behind writer here
// would otherwise be seen only once it flushes).
func (h *Host) followStored(ctx context.Context, r TailRequest, sink Sink) (int64, error) {
	next := r.From
	if next >= r.End {
		return next, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sub := h.st.Subscribe(goneLive{id: r.ID, cancel: cancel})
	defer sub.Close()
	if _, live := h.st.Get(r.ID); live {
		return next, errWentLive
	}
	go func() {
		select {
		case <-h.stop:
			cancel(nil)
		case <-ctx.Done():
		}
	}()
	err := h.st.FollowStored(ctx, r.ID, sdk.Offset(r.From), func(events []session.Event) error {
		for _, e := range events {
			if int64(e.Seq()) >= r.End {
				break
			}
			if err := sink.Event(e); err != nil {
				return err
			}
			next = int64(e.Seq()) + 1
		}
		if err := sink.Flush(); err != nil || len(events) == 0 {
			return err
		}
		if next >= r.End {
			return errFollowDone
		}
		return nil
	})
	switch {
	case errors.Is(err, errFollowDone):
		return next, nil
	case errors.Is(context.Cause(ctx), errWentLive):
		return next, errWentLive
	case h.Stopping():
		return next, ErrStopping
	}
	return next, err
}

// goneLive is the feed listener of a stored follow: it ends the follow
// with errWentLive when its session goes live on this host.
type goneLive struct {
	id     string
	cancel context.CancelCauseFunc
}

// SessionLive ends the follow when its session goes live.
func (g goneLive) SessionLive(s *session.Session) {
	if s.ID() == g.id {
		g.cancel(errWentLive)
	}
}

// Event does nothing: SessionLive came first.
func (goneLive) Event(*session.Session, session.Event) {}

// SessionReleased does nothing.
func (goneLive) SessionReleased(*session.Session) {}

// wakeOn is the feed listener of a tail: it wakes the tail on any news of
// its session.
type wakeOn struct {
	id   string
	wake chan struct{}
}

// SessionLive wakes the tail when its session goes live.
func (w wakeOn) SessionLive(s *session.Session) { w.poke(s) }

// Event wakes the tail on an event of its session.
func (w wakeOn) Event(s *session.Session, _ session.Event) { w.poke(s) }

// SessionReleased wakes the tail when its session is released.
func (w wakeOn) SessionReleased(s *session.Session) { w.poke(s) }

func (w wakeOn) poke(s *session.Session) {
	if s.ID() == w.id {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}
