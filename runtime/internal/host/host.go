// Package host holds the sessions a running logbook serves: the live
// sessions it made live (and so owns for write until they are released or
// the process stops), the reads of sessions it does not hold, and the tail
// of a session's log. The logic of every session operation is written
// here, once: create, resume if not live, borrow, the one append path and
// its partial-failure report, flush, release, the idle release, fork,
// compaction, the views, delete and hold.
//
// A running logbook has one Host, so one table of live sessions. The
// session service (runtime/service) opens it and is its public face for
// package logbook and the CLI; the servers the service starts (the /v1
// JSON API of package httpapi and the Connect service of package server)
// serve the same Host, translating their wire formats onto its methods.
package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sync/singleflight"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ErrStopping is returned by Tail when the host stops while it follows.
var ErrStopping = errors.New("the server is shutting down")

// Host is the set of sessions one server holds over one engine's store.
// Its methods are safe for concurrent use.
type Host struct {
	e   *engine.Engine
	st  *store.Store
	log hclog.Logger

	readOnly  bool               // NewReadOnly: every write is refused
	opens     singleflight.Group // concurrent opens of one session share one Store.Open
	mu        sync.Mutex
	held      map[string]*holding      // sessions this host made live, by id
	idled     idledSet                 // sessions ReleaseIdle released cleanly
	releasing map[string]chan struct{} // sessions ReleaseIdle is releasing, by id; closed when done
	borrowed  map[string]*borrowed     // sessions made live for requests that may still fail (Borrow), by id
	stop      chan struct{}            // closed by Stop
	stopOnce  sync.Once
}

// New returns a host of e's store that holds nothing yet; log receives its
// debug and release logs.
func New(e *engine.Engine, log hclog.Logger) *Host {
	return &Host{e: e, st: e.Store, log: log, held: map[string]*holding{}, releasing: map[string]chan struct{}{}, borrowed: map[string]*borrowed{}, stop: make(chan struct{})}
}

// NewReadOnly returns a host of e's store that only reads: Create,
// Acquire, Fork, Live and Release refuse with SESSION_READ_ONLY, so it
// never takes the write ownership of a session, and every read (View, At,
// Inspect, List, Tail, which follows a session another process writes)
// sees the stored logs as they are.
func NewReadOnly(e *engine.Engine, log hclog.Logger) *Host {
	h := New(e, log)
	h.readOnly = true
	return h
}

// ReadOnly reports whether the host only reads (NewReadOnly).
func (h *Host) ReadOnly() bool { return h.readOnly }

// refuseWrite returns the error of a write (op) a read-only host refuses,
// or nil when the host writes.
func (h *Host) refuseWrite(op, id string) error {
	if !h.readOnly {
		return nil
	}
	return &sdk.Error{Code: sdk.CodeSessionReadOnly, Op: op, SessionID: id,
		Detail: "this server is read-only: it shows stored sessions and never writes; write with logbook serve or the logbook CLI"}
}

// Engine returns the engine the host serves.
func (h *Host) Engine() *engine.Engine { return h.e }

// Stop marks the host as stopping: tails end with ErrStopping. It does not
// release anything (ReleaseAll does); calling it again does nothing.
func (h *Host) Stop() { h.stopOnce.Do(func() { close(h.stop) }) }

// Stopping reports whether Stop was called.
func (h *Host) Stopping() bool {
	select {
	case <-h.stop:
		return true
	default:
		return false
	}
}

// hold records a session the host made live, used by ctx's request.
func (h *Host) hold(ctx context.Context, sess *session.Session) {
	h.mu.Lock()
	h.held[sess.ID()] = &holding{sess: sess, last: time.Now()}
	h.forgetLocked(sess.ID()) // live again: its own flushes answer now
	h.useLocked(ctx, sess)
	h.mu.Unlock()
}

// unhold forgets a session the host released.
func (h *Host) unhold(sess *session.Session) {
	h.mu.Lock()
	if hd := h.held[sess.ID()]; hd != nil && hd.sess == sess {
		delete(h.held, sess.ID())
	}
	h.mu.Unlock()
}

// Create makes a new live session and holds it; it reaches the backends
// within the write window (a flush makes it stored). A read-only host
// refuses it with SESSION_READ_ONLY.
func (h *Host) Create(ctx context.Context, o store.CreateOptions) (*session.Session, error) {
	if err := h.refuseWrite("create", o.ID); err != nil {
		return nil, err
	}
	sess, err := h.st.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	h.hold(ctx, sess)
	return sess, nil
}

// CreateStored is Create, then a flush before it returns, as the servers'
// create does: a session whose CreateStored succeeded is stored, so it
// survives a crash and every other process sees it. When the flush fails
// the session stays live and held (a Flush or Release retries) and it is
// returned with the flush's error.
func (h *Host) CreateStored(ctx context.Context, o store.CreateOptions) (*session.Session, error) {
	sess, err := h.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	if _, err := h.st.Flush(ctx, sess); err != nil {
		return sess, err
	}
	return sess, nil
}

// Resume makes the stored session id live (Store.Open: repair, then live)
// and holds it. Unlike Acquire it does not share a live session: one live
// in the store is ALREADY_OWNED.
func (h *Host) Resume(ctx context.Context, id string) (*session.Session, store.RepairReport, error) {
	if err := h.refuseWrite("open", id); err != nil {
		return nil, store.RepairReport{}, err
	}
	sess, rep, err := h.st.Open(ctx, id)
	if err != nil {
		return nil, rep, err
	}
	h.hold(ctx, sess)
	return sess, rep, nil
}

// Opened is the result of Acquire.
type Opened struct {
	Session     *session.Session
	Repair      store.RepairReport // what the resume repaired; zero when AlreadyLive
	AlreadyLive bool               // the session was live before the call
}

// Acquire returns the live session id, resuming it (Store.Open: repair,
// then live) when it is not live; concurrent calls for one id share one
// open. A session it opens is held until Release, ReleaseAll or
// ReleaseIdle, and so is one a failed request (Borrow) would have
// released; ctx's request (Visit) keeps it from ReleaseIdle.
func (h *Host) Acquire(ctx context.Context, id string) (Opened, error) {
	o, _, err := h.take(ctx, id, false)
	return o, err
}

// open returns the live session id, resuming it when it is not live. A
// session it resumes is held and tracked as borrowed until take decides.
func (h *Host) open(ctx context.Context, id string) (Opened, error) {
	if err := h.refuseWrite("open", id); err != nil {
		return Opened{}, err
	}
	for {
		if sess, ok := h.liveUse(ctx, id); ok {
			return Opened{Session: sess, AlreadyLive: true}, nil
		}
		if err := ctx.Err(); err != nil {
			return Opened{}, err
		}
		v, err, _ := h.opens.Do(id, func() (any, error) {
			if sess, ok := h.st.Get(id); ok {
				return Opened{Session: sess, AlreadyLive: true}, nil
			}
			sess, rep, err := h.st.Open(ctx, id)
			if err != nil {
				return nil, err
			}
			h.hold(context.Background(), sess)
			h.mu.Lock()
			h.borrowed[id] = &borrowed{sess: sess}
			h.mu.Unlock()
			h.log.Debug("session opened", "session", id, "torn_bytes", rep.Torn.Bytes, "closers", rep.Closers)
			return Opened{Session: sess, Repair: rep}, nil
		})
		if err != nil {
			return Opened{}, err
		}
		o := v.(Opened)
		// Each caller sharing the open notes its own use; a session
		// released in between is resumed again.
		h.mu.Lock()
		cur, live := h.st.Get(id)
		if live && cur == o.Session {
			h.useLocked(ctx, cur)
		}
		h.mu.Unlock()
		if live && cur == o.Session {
			return o, nil
		}
	}
}

// Repaired returns the session/recovered event and the closers the resume
// appended (none when AlreadyLive): with any of them the resume batch ends
// with the lifecycle marker (docs/architecture.md), so they are the events
// before it at the end of what the resume wrote.
func (o Opened) Repaired() []session.Event {
	n := o.Repair.Closers
	if o.Repair.Torn.Bytes > 0 {
		n++
	}
	if o.AlreadyLive || n == 0 {
		return nil
	}
	end := o.Session.FirstLiveSeq() - 1 // the marker
	return o.Session.Events().Range(end-sdk.Offset(n), end).Slice()
}

// Live returns the session id when it is live, else SESSION_NOT_LIVE (with
// op as the error's Op), for a write (op) to it by ctx's request (Visit):
// a read-only host refuses it with SESSION_READ_ONLY.
func (h *Host) Live(ctx context.Context, id, op string) (*session.Session, error) {
	if err := h.refuseWrite(op, id); err != nil {
		return nil, err
	}
	if sess, ok := h.liveUse(ctx, id); ok {
		return sess, nil
	}
	return nil, &sdk.Error{Code: sdk.CodeSessionNotLive, Op: op, SessionID: id,
		Detail: "the session is not live in this server; Open it (or Append to it) first"}
}

// Fork creates a live child of a live or stored session and holds it.
func (h *Host) Fork(ctx context.Context, r store.ForkRequest) (*session.Session, error) {
	if err := h.refuseWrite("fork", r.SourceID); err != nil {
		return nil, err
	}
	child, err := h.st.Fork(ctx, r)
	if err != nil {
		return nil, err
	}
	h.hold(ctx, child)
	return child, nil
}

// Flush flushes the live session id on every backend for ctx's request
// and returns it with the result; a flush error comes with the session.
// A session ReleaseIdle released (and the host still remembers) answers
// its final flush, with no session; any other session that is not live
// is SESSION_NOT_LIVE.
func (h *Host) Flush(ctx context.Context, id string) (*session.Session, store.FlushResult, error) {
	sess, err := h.Live(ctx, id, "flush")
	if err != nil {
		if res, ok := h.idledAfter(id, err); ok {
			return nil, res, nil
		}
		return nil, store.FlushResult{}, err
	}
	res, err := h.st.Flush(ctx, sess)
	return sess, res, err
}

// Release flushes and releases the live session id and stops holding it.
// A session ReleaseIdle released (and the host still remembers) is
// released already: nil, however often it is asked. Any other session
// that is not live is SESSION_NOT_LIVE, a second Release included: the
// client released it itself, and a flush or release after that is its
// mistake to hear of.
func (h *Host) Release(ctx context.Context, id string) error {
	sess, err := h.Live(ctx, id, "release")
	if err != nil {
		if _, ok := h.idledAfter(id, err); ok {
			return nil
		}
		return err
	}
	return h.ReleaseSession(ctx, sess)
}

// ReleaseSession flushes and releases sess, a live session, and stops
// holding it once it is released (possibly with mirror errors); when the
// primary cannot take its queued events it stays live and held.
func (h *Host) ReleaseSession(ctx context.Context, sess *session.Session) error {
	err := h.st.Release(ctx, sess)
	if cur, ok := h.st.Get(sess.ID()); !ok || cur != sess {
		h.unhold(sess) // released, possibly with mirror errors
	}
	return err
}

// ReleaseAll flushes and releases, concurrently, every session the host
// still holds, within ctx, and returns the joined errors.
func (h *Host) ReleaseAll(ctx context.Context) error {
	h.mu.Lock()
	held := h.held
	h.held = map[string]*holding{}
	h.mu.Unlock()
	var (
		wg   sync.WaitGroup
		emu  sync.Mutex
		errs []error
	)
	for id, hd := range held {
		sess := hd.sess
		if cur, ok := h.st.Get(id); !ok || cur != sess {
			continue // released already
		}
		wg.Go(func() {
			if err := h.st.Release(ctx, sess); err != nil {
				h.log.Error("releasing a session at shutdown failed", "session", id, "error", err)
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		})
	}
	wg.Wait()
	h.log.Info("shut down", "sessions_released", len(held)-len(errs), "failed", len(errs))
	return errors.Join(errs...)
}

// View returns a session and its log for reads: the live session's, or the
// stored log as it is (read-only, beside any writer, without the closers a
// resume would add).
func (h *Host) View(ctx context.Context, id string) (*session.Session, session.EventList, error) {
	if sess, ok := h.liveUse(ctx, id); ok {
		return sess, sess.Events(), nil
	}
	sess, _, err := h.st.Inspect(ctx, id)
	if err != nil {
		return nil, session.EventList{}, err
	}
	return sess, sess.Events().Range(0, sess.Len()-sdk.Offset(sess.PendingRepair())), nil
}

// At returns the session id for the derived views: with at nil, the live
// session, or a read-only view of its stored log as it stands (without the
// closers a resume would add); with at, a read-only view right after event
// *at. Views are restored by store.View with the store's plugin types and
// projections.
func (h *Host) At(ctx context.Context, id string, at *sdk.Seq) (*session.Session, error) {
	if at == nil {
		if sess, ok := h.liveUse(ctx, id); ok {
			return sess, nil
		}
	}
	sess, _, err := h.st.View(ctx, id, at)
	return sess, err
}

// Inspection is what Inspect reports of a session.
type Inspection struct {
	Session *session.Session
	// Stored is the log as stored (a live session's whole log), without the
	// closers a resume would add.
	Stored session.EventList
	// Closers are the events a resume would append to close an open turn.
	Closers []session.Event
	// Torn is the torn tail a write open would cut; zero for a live
	// session or when there is none.
	Torn sdk.Torn
	// Live reports whether the session is live in this store.
	Live bool
}

// OpenTurn returns the turn the closers close, or false when the log ends
// outside a turn.
func (in Inspection) OpenTurn() (int64, bool) {
	for _, e := range in.Closers {
		if e.Type() == session.TypeTurnEnd {
			if turn, ok := e.DataView().Get("turn").Int(); ok {
				return turn, true
			}
		}
	}
	return 0, false
}

// Inspect reports the log, the closers a resume would append and the torn
// bytes a write open would cut; it never writes. A live session is read as
// it is (Store.Inspect would restore a copy of its whole log); a stored one
// through Store.Inspect, read-only.
func (h *Host) Inspect(ctx context.Context, id string) (Inspection, error) {
	var rep store.InspectReport
	sess, live := h.liveUse(ctx, id)
	if !live {
		var err error
		if sess, rep, err = h.st.Inspect(ctx, id); err != nil {
			return Inspection{}, err
		}
	}
	stored := sess.Events().Range(0, sess.Len()-sdk.Offset(sess.PendingRepair()))
	return Inspection{Session: sess, Stored: stored, Closers: session.InterruptedTurnClosers(stored.Slice()), Torn: rep.Torn, Live: live || rep.Live}, nil
}

// List lists the live and stored sessions, sorted by id.
func (h *Host) List(ctx context.Context) ([]store.ListEntry, error) {
	entries, err := h.st.List(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b store.ListEntry) int { return strings.Compare(a.ID, b.ID) })
	return entries, nil
}

// Status is what Stat reports of a session.
type Status struct {
	Header sdk.Header
	// Length is the log's length: the live session's, else the stored
	// log's.
	Length sdk.Offset
	Live   bool
	// Torn is the torn tail the stored log ends in, which the next write
	// open cuts; zero when none or when the session is live.
	Torn sdk.Torn
}

// Stat reports a session's header, length, whether it is live here, and
// the torn tail a write open would cut; it never writes.
func (h *Host) Stat(ctx context.Context, id string) (Status, error) {
	if sess, live := h.liveUse(ctx, id); live {
		return Status{Header: sess.Header(), Length: sess.Len(), Live: true}, nil
	}
	sess, torn, err := h.st.View(ctx, id, nil)
	if err != nil {
		return Status{}, err
	}
	return Status{Header: sess.Header(), Length: sess.Len(), Torn: torn}, nil
}

// Compact runs a manual compaction (docs/compaction.md) of session id with
// the engine's compactor, resuming the session when it is not live (and
// releasing it again when the compaction fails: Borrow), and returns the
// events it appended. Without a compaction block in the configuration it
// is CONFIG_INVALID, checked before the session is resumed.
func (h *Host) Compact(ctx context.Context, id string, start, end *sdk.Seq, sourceCommandID string) ([]events.Event, error) {
	if err := h.e.CheckCompact(start, end); err != nil {
		return nil, err
	}
	o, done, err := h.Borrow(ctx, id)
	if err != nil {
		return nil, err
	}
	out, err := h.CompactSession(ctx, o.Session, start, end, sourceCommandID)
	done(err == nil)
	return out, err
}

// CompactSession is Compact of sess, a live session the caller holds.
func (h *Host) CompactSession(ctx context.Context, sess *session.Session, start, end *sdk.Seq, sourceCommandID string) ([]events.Event, error) {
	out, err := h.e.Compact(ctx, sess, start, end, sourceCommandID)
	if err != nil {
		return nil, err
	}
	return Shared(sess.Events().Range(sdk.Offset(out.StartSeq), sdk.Offset(out.EndSeq)+1).Slice()), nil
}
