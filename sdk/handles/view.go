package handles

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// View is what reads through one handle of a row or file backend may see:
// the most events the handle has seen or written (a read never shows
// fewer, else LOG_SHRANK), and, for a read handle opened on a torn log,
// the end of the valid prefix while the stored revision is still the one
// it was opened at. The zero View has seen nothing and clamps nothing. A
// View is not safe for concurrent use; the backend's lock guards it.
type View struct {
	floor    int64
	clamped  bool
	clampEnd int64
	clampRev string
}

// Saw records that the handle has seen or written n events.
func (v *View) Saw(n int64) { v.floor = max(v.floor, n) }

// Clamp limits reads to end events while the revision is rev: a read open
// of a torn log, which reports the tail and leaves it in place.
func (v *View) Clamp(end int64, rev string) {
	v.clamped, v.clampEnd, v.clampRev = true, end, rev
}

// End returns how far the handle may read when the stored log holds
// stored events at revision rev: stored, clamped while the revision is the
// clamp's (a later revision means a write open has cut the tail since).
// With advance, a stored log shorter than what the handle has seen is
// LOG_SHRANK (op, session id), and the end is recorded as seen.
func (v *View) End(op, id string, stored int64, rev string, advance bool) (int64, error) {
	end := stored
	if v.clamped {
		if rev == v.clampRev {
			end = min(end, v.clampEnd)
		} else {
			v.clamped = false
		}
	}
	if !advance {
		return end, nil
	}
	if end < v.floor {
		return 0, sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; the stored log now has %d", v.floor, end).WithSession(id)
	}
	v.floor = end
	return end, nil
}

// Gone is the error for a session no longer stored: LOG_SHRANK when the
// handle has seen events of it, else SESSION_NOT_FOUND.
func (v *View) Gone(op, id string) error {
	if v.floor > 0 {
		return sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; the session is no longer stored", v.floor).WithSession(id)
	}
	return NotFound(op, id)
}

// Lister merges a backend instance's unmaterialized creates into its
// listing of stored sessions, both in id order, so each id is listed once
// (a create stored meanwhile as stored) and the creates of this instance
// show with the stored sessions.
type Lister struct {
	ctx  context.Context
	op   string
	pend []sdk.ListEntry
	fn   func(sdk.ListEntry) error
}

// NewLister returns a Lister that passes entries to fn, checking ctx
// before each; pending are the instance's creates (Claims.Pending).
func NewLister(ctx context.Context, op string, pending []sdk.ListEntry, fn func(sdk.ListEntry) error) *Lister {
	return &Lister{ctx: ctx, op: op, pend: pending, fn: fn}
}

// Stored lists a stored session, after the creates whose ids come before
// it. Stored sessions must come in id order.
func (l *Lister) Stored(e sdk.ListEntry) error {
	for len(l.pend) > 0 && l.pend[0].ID <= e.ID {
		if l.pend[0].ID < e.ID {
			if err := l.emit(l.pend[0]); err != nil {
				return err
			}
		}
		l.pend = l.pend[1:]
	}
	return l.emit(e)
}

// Done lists the creates after the last stored session.
func (l *Lister) Done() error {
	for _, e := range l.pend {
		if err := l.emit(e); err != nil {
			return err
		}
	}
	l.pend = nil
	return nil
}

func (l *Lister) emit(e sdk.ListEntry) error {
	if err := Ended(l.ctx, l.op, "list"); err != nil {
		return err
	}
	return l.fn(e)
}
