package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// followRetry is how long FollowStored waits before it watches again after
// the primary's plugin went away (it restarts on its own).
const followRetry = 200 * time.Millisecond

// CanFollowStored reports whether the primary backend can report the
// growth of a session that another host writes (sdk.Watcher), so that
// FollowStored works.
func (st *Store) CanFollowStored() bool {
	p, ok := st.primary()
	if !ok {
		return false
	}
	_, ok = capability(p.Persistence, watcherAccessor.Watcher)
	return ok
}

// FollowStored calls fn with the stored events of session id from seq
// `from` on, in order and each once: first the ones stored now, then, each
// time the primary reports that the log grew (sdk.Watcher), the new ones.
// It is how a host follows a session it does not hold, typically one that
// another host writes: it reads the primary read-only, claims nothing, and
// sees what is stored — an event is there once its writer's flush or
// write-behind has made it durable. Each envelope is parsed and must carry
// the seq it is stored at. When the primary's first report finds nothing
// stored from `from` on, fn is called once with no events: the follow has
// caught up (a server sends its stream's headers then). FollowStored
// returns ctx's error once ctx ends,
// and fn's error when fn fails; a plugin that restarts meanwhile is watched
// again, from where it stopped. A primary that cannot watch is
// CONFIG_INVALID (see CanFollowStored).
func (st *Store) FollowStored(ctx context.Context, id string, from sdk.Offset, fn func(events []session.Event) error) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	p, ok := st.primary()
	w, watches := capability(p.Persistence, watcherAccessor.Watcher)
	if !ok || !watches {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "follow", SessionID: id, Detail: "the primary persistence backend cannot watch a session (no " + sdk.CapabilityWatch + " capability)"}
	}
	f := &storedFollower{st: st, p: p.Persistence, op: "follow", id: id, next: from, fn: fn}
	for {
		err := w.Watch(ctx, id, f.next, f.grew)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !errors.Is(err, sdk.CodePluginUnavailable) || f.failed {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followRetry):
		}
	}
}

// storedFollower is one FollowStored: the next seq it owes fn.
type storedFollower struct {
	st     *Store
	p      sdk.Persistence
	op     string // the operation its errors name
	id     string
	next   sdk.Offset
	fn     func(events []session.Event) error
	parser session.StoredParser
	failed bool // fn or a check failed: the follow ends with that error
	caught bool // fn has been called: the follow has caught up once
}

// grew reads the events [next, length) from a read handle opened for it,
// so the read sees what the watch reported, and hands them to fn.
func (f *storedFollower) grew(length sdk.Offset) error {
	if length <= f.next {
		if f.caught {
			return nil
		}
		f.caught = true
		if err := f.fn(nil); err != nil {
			f.failed = true
			return err
		}
		return nil
	}
	f.caught = true
	ctx, cancel := context.WithTimeout(context.Background(), f.st.opts.CallTimeout)
	defer cancel()
	o, err := f.p.Open(ctx, f.id, sdk.AccessRead)
	if err != nil {
		return err
	}
	defer f.st.closeBackends([]*backend{{p: f.p, handle: o.Handle}})
	return f.read(ctx, o.Handle, length)
}

// read hands fn the stored events [next, length) of the read handle, each
// parsed and checked to carry the seq it is stored at.
func (f *storedFollower) read(ctx context.Context, handle string, length sdk.Offset) error {
	err := f.p.Read(ctx, handle, f.next, int64(length-f.next), func(envelopes [][]byte) error {
		events := make([]session.Event, len(envelopes))
		for i, b := range envelopes {
			e, err := f.parser.Parse(b, f.st.opts.MaxEventBytes)
			if err == nil && e.Seq() != sdk.Seq(f.next)+sdk.Seq(i) {
				err = &sdk.Error{Code: sdk.CodeCorruptLog, Op: f.op, SessionID: f.id,
					Detail: "the event stored at seq " + strconv.FormatInt(int64(f.next)+int64(i), 10) + " carries seq " + strconv.FormatInt(int64(e.Seq()), 10)}
			}
			if err != nil {
				f.failed = true
				return err
			}
			events[i] = e
		}
		if err := f.fn(events); err != nil {
			f.failed = true
			return err
		}
		f.next += sdk.Offset(len(events))
		return nil
	})
	if err == nil && f.next < length {
		f.failed = true
		err = &sdk.Error{Code: sdk.CodeIOError, Op: f.op, SessionID: f.id,
			Detail: "the backend reported " + strconv.FormatInt(int64(length), 10) + " stored events but read only " + strconv.FormatInt(int64(f.next), 10)}
	}
	return err
}

// ReadStored calls begin with the stored length of session id in the
// primary (the seq its next stored event gets), then fn with the stored
// events [from, min(end, length)), in order. It reads a window of the log without
// restoring the session (each envelope is parsed and must carry the seq it
// is stored at, but the log is not folded), read-only beside any writer,
// so a reader pages a long stored log at the cost of the page. A torn
// tail is not part of the stored length. A missing session is
// SESSION_NOT_FOUND; from past the length reads nothing.
func (st *Store) ReadStored(ctx context.Context, id string, from, end sdk.Offset, begin func(length sdk.Offset), fn func(events []session.Event) error) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	p, ok := st.primary()
	if !ok {
		return &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "read", SessionID: id, Detail: "no persistence backend is configured"}
	}
	o, err := p.Persistence.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return err
	}
	defer st.closeBackends([]*backend{{name: p.Name, p: p.Persistence, handle: o.Handle}})
	begin(o.NextSeq)
	if end = min(end, o.NextSeq); from >= end {
		return nil
	}
	f := &storedFollower{st: st, p: p.Persistence, op: "read", id: id, next: from, fn: fn}
	return f.read(ctx, o.Handle, end)
}
