package session

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Clock supplies epoch-millisecond times, the time of each appended event;
// tests inject a fake one. The store's Clock (store.Clock) adds timers to it.
type Clock interface{ NowMillis() int64 }

// ClockFunc adapts a function to Clock.
type ClockFunc func() int64

// NowMillis calls f.
func (f ClockFunc) NowMillis() int64 { return f() }

// systemClock is the wall clock, the default.
type systemClock struct{}

func (systemClock) NowMillis() int64 { return time.Now().UnixMilli() }

// Relational is a host component's relational validator, run at step A11 of
// Append (docs/format.md, The order of checks; never on restore). events is
// the log before e.
type Relational interface {
	CheckAppend(events EventList, e Event) error
}

// Options configure a Session. The zero value is usable: system clock,
// 16 MiB events, no plugins.
type Options struct {
	// Header is the session's identity and lineage; Restore checks the
	// lineage rules of docs/architecture.md against it.
	Header sdk.Header
	// Clock stamps appended events; nil means the wall clock.
	Clock Clock
	// MaxEventBytes caps a canonical envelope; 0 means sdk.DefaultMaxEventBytes.
	MaxEventBytes int
	// PluginTypes are the log-only types declared by loaded plugins (class P),
	// each mapped to its declared ignorable flag.
	PluginTypes map[string]bool
	// Plugins names the loaded plugins; a restored plugin record whose owner
	// is not loaded is retained as opaque (docs/format.md).
	Plugins map[string]bool
	// Projections resolves message-projection definitions (class J); nil
	// means none are registered.
	Projections Projections
	// Relational validators run at step A11.
	Relational []Relational
	// Backpressure, when set, is called at step A4 under the append lock;
	// it blocks while storage is behind and returns ctx.Err() when ctx ends.
	Backpressure func(ctx context.Context) error
	// Control, when set, is bound to the new session: its owner's handle
	// on the operations no other holder of the *Session may perform. A
	// Control binds one session; nil means the session has no owner.
	Control *Control
	// Admit, when set, is called at step A12 under the append lock, once
	// every member of the unit passed A5–A11 and before any is committed,
	// with the bytes of their canonical envelopes; it may wait (the store
	// reserves room in its write-behind bound). An error refuses the unit:
	// nothing is committed and the error is returned as it is. Once it
	// returns nil the unit is committed and handed to OnCommit.
	Admit func(ctx context.Context, bytes int64) error
	// OnCommit, when set, is called at step A12 under the append lock with the
	// events just committed, in seq order (the store enqueues them for
	// write-behind and wakes the feed). One call carries one atomic unit: the
	// event of an Append, or every member of an AppendGroup, which storage
	// must persist all or none (docs/compaction.md). It must not block or call back
	// into the session's append path.
	OnCommit func(events []Event)
}

func (o Options) withDefaults() (Options, error) {
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = sdk.DefaultMaxEventBytes
	}
	if o.MaxEventBytes < sdk.MinMaxEventBytes || o.MaxEventBytes > sdk.MaxMaxEventBytes {
		return o, sdk.Errorf(sdk.CodeConfigInvalid, "session", "MaxEventBytes = %d is outside 1 KiB – 1 GiB", o.MaxEventBytes)
	}
	return o, nil
}

// Session is one session's log and everything derived from it. It is safe
// for concurrent use: appends are serialized by a per-session lock; readers
// take immutable snapshots and never wait for an append beyond the short
// commit section in which the new state is linked in and published.
type Session struct {
	opts Options
	id   string

	appendMu sync.Mutex // serializes appends: held from A4 to A12
	stateMu  sync.Mutex // guards the mutable structures below during commit and lazy snapshot rebuilds

	readOnly      bool
	closed        atomic.Bool
	fenced        atomic.Pointer[error]
	firstLive     sdk.Offset
	pendingRepair int

	// Written only by the appender (under appendMu, and stateMu while
	// committing); read by the appender freely and by readers under stateMu.
	records      []*record
	surf         surfaceList
	flat         []sdk.Seq // nodes in order while flatValid
	flatValid    bool
	replaceGen   uint64
	contentGen   uint64
	replacements []Replacement
	projected    map[sdk.Seq]*msgRec
	usedProj     map[string]string // projection type → definition identity; copy on write
	transcript   []TranscriptEntry
	folds        folds
	pending      []*record                // validated members of the group being appended (appender only)
	loop         loopState                // the agent-loop state as of the last committed event (appender only)
	ops          map[string]heldOperation // the operation ids the log holds (appender only; see operation.go)

	pub       atomic.Pointer[published]
	msgCache  atomic.Pointer[msgSnapshot]
	surfCache atomic.Pointer[surfSnapshot]
}

// published is the state readers see: replaced wholesale at each commit.
type published struct {
	records      []*record // clipped: s[:n:n]
	replaceGen   uint64
	contentGen   uint64
	replacements []Replacement
	transcript   []TranscriptEntry
	header       *record // last request/header
	context      *record // last request/context
	tools        *ToolHistory
	inherited    int64 // seq of the last {inherited: true} marker, -1 when none
	usedProj     map[string]string
}

// New returns an empty live session.
func New(opts Options) (*Session, error) {
	return newSession(opts, 0)
}

func newSession(opts Options, base sdk.Seq) (*Session, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if o.Control != nil && o.Control.s != nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "session", "Options.Control is bound to session %q already; a Control binds one session", o.Control.s.id)
	}
	s := &Session{opts: o, id: o.Header.ID, surf: newSurfaceList(base), flatValid: true}
	if o.Control != nil {
		o.Control.s = s
	}
	s.folds.init()
	s.loop = newLoopState()
	s.publish()
	return s, nil
}

// ID returns the session id of the header it was created with.
func (s *Session) ID() string { return s.id }

// Header returns the session header it was created with.
func (s *Session) Header() sdk.Header { return s.opts.Header }

// Len returns the number of events in the log.
func (s *Session) Len() sdk.Offset {
	return sdk.Offset(len(s.pub.Load().records)) + sdk.Offset(s.surf.base)
}

// nextSeq is the seq of the next event, for the appender (and restore, which
// publishes only at the end).
func (s *Session) nextSeq() sdk.Seq { return s.surf.base + sdk.Seq(len(s.records)) }

// FirstLiveSeq returns the log length after the events written by the
// operation that built the session (restore, seed, repair), which are not
// delivered as live events.
func (s *Session) FirstLiveSeq() sdk.Offset { return s.firstLive }

// PendingRepair counts the events of a read-only inspect view that exist only
// in memory (closers a resume would append).
func (s *Session) PendingRepair() int { return s.pendingRepair }

// InheritedEventCount returns the seq of the last {inherited: true}
// session/end-seed marker, or 0 when the log has none.
func (s *Session) InheritedEventCount() int64 {
	if n := s.pub.Load().inherited; n >= 0 {
		return n
	}
	return 0
}

// IsOwnSeq reports whether seq was written by this session rather than
// inherited from a fork source: InheritedEventCount() ≤ seq < Len().
func (s *Session) IsOwnSeq(seq sdk.Seq) bool {
	return int64(seq) >= s.InheritedEventCount() && sdk.Offset(seq) < s.Len()
}

// ReadOnly reports whether the session is a read-only inspect view.
func (s *Session) ReadOnly() bool { return s.readOnly }

// Closed reports whether the session's owner closed it (Control.Close).
func (s *Session) Closed() bool { return s.closed.Load() }

// Fenced returns the fencing cause, or nil.
func (s *Session) Fenced() error {
	if p := s.fenced.Load(); p != nil {
		return *p
	}
	return nil
}

// Event returns the event with the given seq.
func (s *Session) Event(seq sdk.Seq) (Event, bool) {
	p := s.pub.Load()
	i := int64(seq) - int64(s.surf.base)
	if i < 0 || i >= int64(len(p.records)) {
		return Event{}, false
	}
	return Event{p.records[i]}, true
}

// Events returns an O(1) immutable snapshot of the log.
func (s *Session) Events() EventList {
	p := s.pub.Load()
	return EventList{base: s.surf.base, records: p.records}
}

// publish swaps in a new published state. Called under stateMu (or before
// the session is shared).
func (s *Session) publish() {
	n := len(s.records)
	t := len(s.transcript)
	s.pub.Store(&published{
		records:      s.records[:n:n],
		replaceGen:   s.replaceGen,
		contentGen:   s.contentGen,
		replacements: s.replacements[:len(s.replacements):len(s.replacements)],
		transcript:   s.transcript[:t:t],
		header:       s.folds.header,
		context:      s.folds.context,
		tools:        s.folds.tools.snapshot,
		inherited:    s.folds.inherited,
		usedProj:     s.usedProj,
	})
}

// writeError enriches a pipeline error with the session id and the seq the
// event would have had.
func (s *Session) writeError(err error, seq sdk.Seq) error {
	if e, ok := err.(*sdk.Error); ok {
		c := *e
		if c.SessionID == "" {
			c.SessionID = s.id
		}
		if c.Seq == nil {
			c.Seq = new(int64(seq))
		}
		if c.Op == "" || c.Op == "json" {
			c.Op = "session"
		}
		return &c
	}
	return err
}
