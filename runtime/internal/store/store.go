package store

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Backend is a persistence backend attached to the store, under the name
// the configuration gives it. The first backend is the primary.
type Backend struct {
	Name        string
	Persistence sdk.Persistence
}

// Options configure a Store. Every zero field takes the default of docs/operations.md.
type Options struct {
	// Backends in configuration order; the first is the primary (reads,
	// listing, existence, ownership). None: sessions live only in memory.
	Backends []Backend
	// Clock drives event times, the write window and retry backoff;
	// default SystemClock.
	Clock Clock
	// NewID generates session ids; default lowercase UUIDv7.
	NewID func() string
	// WriteWindow is the write-behind window; default 200 ms.
	WriteWindow time.Duration
	// RetryMaxBackoff caps the retry backoff; default 5 s.
	RetryMaxBackoff time.Duration
	// MaxPendingBytes bounds each session × backend queue; appends block
	// while a queue holds at least this much. Default 64 MiB.
	MaxPendingBytes int64
	// MaxPendingBytesTotal bounds the write-behind queues of every live
	// session together: the envelope bytes queued for every backend, an
	// event counting once per backend. An append whose events do not fit
	// waits, behind earlier waiters, up to WriteBackpressureTimeout, then
	// fails with BACKEND_BUSY and commits nothing. Default 512 MiB; at
	// least MaxPendingBytes.
	MaxPendingBytesTotal int64
	// WriteBackpressureTimeout is how long an append waits for room under
	// MaxPendingBytesTotal; default 10 s.
	WriteBackpressureTimeout time.Duration
	// MaxEventBytes caps one canonical envelope; default 16 MiB.
	MaxEventBytes int
	// EagerBytes writes a queue at once, without waiting for the window, when
	// it holds at least this many bytes, so large ingest overlaps with the
	// backend's work; default 1 MiB. The window still bounds the delay of
	// everything smaller.
	EagerBytes int64
	// RPCMaxBytes bounds one backend request; batches are split below it.
	// Default 32 MiB.
	RPCMaxBytes int
	// CallTimeout bounds each backend call made in the background; default 60 s.
	CallTimeout time.Duration
	// MaxLiveSessions caps the sessions live in the store at once, those
	// being created, opened, forked or salvaged included: one more is
	// refused with TOO_MANY_LIVE_SESSIONS before anything is created or
	// claimed. Default DefaultMaxLiveSessions (1000).
	MaxLiveSessions int
	// PluginTypes, Plugins and Projections are handed to every session (see
	// session.Options).
	PluginTypes map[string]bool
	Plugins     map[string]bool
	Projections session.Projections
	// Relational validators for every live session (step A11 of Append, docs/format.md); a function
	// so each session gets its own.
	Relational func() []session.Relational
	// SalvageDir is the directory Salvage writes its artifacts to (the
	// damaged bytes a salvaged child leaves out); "" refuses Salvage.
	SalvageDir string
	// Logger; default a null logger.
	Logger hclog.Logger
	// Observer, when set, receives the store's measurements (Observer);
	// default nil, which costs nothing.
	Observer Observer
	// Tenant is the Header.Tenant of every session the store creates,
	// forks, salvages or imports (sdk.HeaderTenant of the tenant's name):
	// "" for the implicit tenant, the default. The backends are that
	// tenant's views (sdk.Tenancy).
	Tenant string
	// Budget, when set, is the limits this store shares with the stores of
	// the other tenants (Store.Budget of one of them): MaxLiveSessions,
	// MaxPendingBytesTotal and WriteBackpressureTimeout are then the
	// budget's and this store's are ignored. Default nil: a budget of the
	// store's own.
	Budget *Budget
}

func (o Options) withDefaults() (Options, error) {
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.NewID == nil {
		o.NewID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	if o.WriteWindow == 0 {
		o.WriteWindow = 200 * time.Millisecond
	}
	if o.RetryMaxBackoff == 0 {
		o.RetryMaxBackoff = 5 * time.Second
	}
	if o.MaxEventBytes == 0 {
		o.MaxEventBytes = sdk.DefaultMaxEventBytes
	}
	if o.MaxPendingBytes == 0 {
		o.MaxPendingBytes = 64 << 20
	}
	if o.MaxPendingBytesTotal == 0 {
		o.MaxPendingBytesTotal = 512 << 20
	}
	if o.WriteBackpressureTimeout == 0 {
		o.WriteBackpressureTimeout = 10 * time.Second
	}
	if o.RPCMaxBytes == 0 {
		o.RPCMaxBytes = sdk.DefaultRPCMaxBytes
	}
	if o.EagerBytes == 0 {
		o.EagerBytes = 1 << 20
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.MaxLiveSessions == 0 {
		o.MaxLiveSessions = DefaultMaxLiveSessions
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	bad := func(format string, args ...any) (Options, error) {
		return o, sdk.Errorf(sdk.CodeConfigInvalid, "store", format, args...)
	}
	switch {
	case o.WriteWindow < time.Millisecond || o.WriteWindow > time.Minute:
		return bad("write window %v is outside 1ms – 60s", o.WriteWindow)
	case o.RetryMaxBackoff < o.WriteWindow:
		return bad("retry max backoff %v is below the write window %v", o.RetryMaxBackoff, o.WriteWindow)
	case o.MaxPendingBytes < int64(o.MaxEventBytes):
		return bad("max pending bytes %d is below max event bytes %d", o.MaxPendingBytes, o.MaxEventBytes)
	case o.MaxPendingBytesTotal < o.MaxPendingBytes:
		return bad("max pending bytes total %d is below max pending bytes %d", o.MaxPendingBytesTotal, o.MaxPendingBytes)
	case o.WriteBackpressureTimeout < 0:
		return bad("write backpressure timeout %v is negative", o.WriteBackpressureTimeout)
	case o.RPCMaxBytes < sdk.MinRPCMaxBytes(o.MaxEventBytes):
		return bad("rpc max bytes %d is below max event bytes + 1 MiB", o.RPCMaxBytes)
	case o.MaxLiveSessions < 0:
		return bad("max live sessions %d is negative", o.MaxLiveSessions)
	}
	names := map[string]bool{}
	for _, b := range o.Backends {
		if b.Name == "" || names[b.Name] || b.Persistence == nil {
			return bad("backend names must be unique and non-empty, each with a persistence: %q", b.Name)
		}
		names[b.Name] = true
	}
	return o, nil
}

// Store owns live sessions: their lifecycle, write-behind to every backend,
// flush fan-out and the event feed (docs/architecture.md). Safe for concurrent use.
type Store struct {
	opts  Options
	clock Clock
	log   hclog.Logger

	mu   sync.Mutex
	live map[string]*live
	// releasing holds the sessions a release took out of live and whose
	// backend handles it has not closed yet, each with a channel closed
	// once it has: an open of one waits for it, since the backends still
	// hold its write claim.
	releasing map[string]chan struct{}
	opening   int // places taken by takeSlot and not yet given back
	closed    bool
	feed      feed

	budget  *Budget       // the limits shared with the other tenants' stores
	pending *pendingBound // the queues' bytes, process-wide (budget.pending)
}

// live is a live session and its backends' queues.
type live struct {
	s      *session.Session
	ctl    session.Control // the store's hold on s: close at release, fence at a final failure, extend at open
	queues []*queue        // configuration order
	// releasing is held by a release of the session from its start, so a
	// release that fails and reopens the session never races another.
	releasing sync.Mutex

	spaceMu sync.Mutex
	space   chan struct{} // closed when a queue frees space

	// checkpointed is the length the last checkpoint covered (at open or
	// written since); 0 when none. checkpointing is held while one is
	// written.
	checkpointed  atomic.Int64
	checkpointing sync.Mutex
	// inherited is a fork child's inherited prefix length (its header's
	// inheritedEventCount), 0 for any other session: a flush checkpoints
	// the child once it has doubled that, not on its first flush.
	inherited int64
}

// backends returns the session's backends, in configuration order.
func (ls *live) backends() []*backend {
	bs := make([]*backend, len(ls.queues))
	for i, q := range ls.queues {
		bs[i] = q.b
	}
	return bs
}

// New returns a store over the given backends. A store made with
// Options.Budget counts against that budget from now on.
func New(opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	b := o.Budget
	if b == nil {
		b = newBudget(o)
	}
	st := &Store{opts: o, clock: o.Clock, log: o.Logger, live: map[string]*live{}, releasing: map[string]chan struct{}{},
		budget: b, pending: b.pending}
	st.feed.init()
	b.join(st)
	return st, nil
}

func (st *Store) primary() (Backend, bool) {
	if len(st.opts.Backends) == 0 {
		return Backend{}, false
	}
	return st.opts.Backends[0], true
}

func (st *Store) now() int64 { return st.clock.NowMillis() }

// sessionOptions builds a session's options; the hooks reach ls once it is
// filled in, and ls.ctl is bound to the session built with them.
func (st *Store) sessionOptions(h sdk.Header, ls *live) session.Options {
	o := session.Options{
		Header:        h,
		Clock:         st.clock,
		MaxEventBytes: st.opts.MaxEventBytes,
		PluginTypes:   st.opts.PluginTypes,
		Plugins:       st.opts.Plugins,
		Projections:   st.opts.Projections,
	}
	if st.opts.Relational != nil {
		o.Relational = st.opts.Relational()
	}
	if ls != nil {
		o.Control = &ls.ctl
		o.Backpressure = ls.waitForSpace(st.opts.MaxPendingBytes)
		o.Admit = func(ctx context.Context, bytes int64) error {
			// Each queue takes the unit; OnCommit queues what this reserves.
			n := bytes * int64(len(ls.queues))
			if err := st.pending.reserve(ctx, n, h.ID, ls); err != nil {
				return err
			}
			if ls.s.Closed() {
				// Released while the append waited: nothing commits after
				// the release closed the session for its final flush.
				st.pending.release(n)
				return closedWhileWaiting(h.ID, "max_pending_bytes_total")
			}
			return nil
		}
		o.OnCommit = func(evs []session.Event) {
			for _, q := range ls.queues {
				q.enqueue(evs, true)
			}
			st.feed.notify()
			if st.opts.Observer != nil {
				st.observeAppended(evs)
			}
		}
	}
	return o
}

// waitForSpace returns the back-pressure hook (step A4 of
// Append, docs/format.md): block while any queue of the session
// holds MaxPendingBytes or more.
func (ls *live) waitForSpace(limit int64) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			if ls.s.Closed() { // a release woke it (spaceFreed)
				return closedWhileWaiting(ls.s.ID(), "max_pending_bytes")
			}
			ls.spaceMu.Lock()
			ch := ls.space
			ls.spaceMu.Unlock()
			full := false
			for _, q := range ls.queues {
				q.mu.Lock()
				full = full || q.bytes >= limit
				q.mu.Unlock()
			}
			if !full {
				return nil
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// closedWhileWaiting is the error of an append to session id that waited
// for room under limit while the session was released.
func closedWhileWaiting(id, limit string) error {
	return &sdk.Error{Code: sdk.CodeSessionClosed, Op: "append", SessionID: id,
		Detail: "the session was released while the append waited for room in " + limit + "; nothing was appended"}
}

func (ls *live) spaceFreed() {
	ls.spaceMu.Lock()
	close(ls.space)
	ls.space = make(chan struct{})
	ls.spaceMu.Unlock()
}

// CreateOptions are the caller's part of a new session's header, and an
// optional replay seed (docs/architecture.md).
type CreateOptions struct {
	ID              string // "" = generated (lowercase UUIDv7)
	CWD             string // "" or absolute
	Origin          string // "" or "subagent"
	DelegationDepth int64
	AgentPreset     string
	ParentSession   string
	// Protocol is "" or sdk.ProtocolStrict (the default, stored as no
	// header member) or sdk.ProtocolLenient (appends skip the agent-loop
	// rules); anything else is USAGE naming the allowed values.
	Protocol string
	// Labels are the header's labels (sdk.ValidateLabels: anything else is
	// USAGE naming the rule, nothing created); nil or empty means none.
	Labels map[string]string
	// Seed nil = fresh, no events; non-nil (even empty) = a replay seed,
	// validated like a restore, without {inherited: true} markers (use Fork).
	Seed []session.Event
}

// Create makes a new live session on every backend (docs/architecture.md).
func (st *Store) Create(ctx context.Context, opts CreateOptions) (*session.Session, error) {
	id := opts.ID
	if id == "" {
		id = st.opts.NewID()
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, err
	}
	switch {
	case opts.CWD != "" && opts.CWD[0] != '/':
		return nil, sdk.Errorf(sdk.CodeSeedInvalid, "create", "cwd %q must be absolute", opts.CWD)
	case opts.Origin != "" && opts.Origin != "subagent":
		return nil, sdk.Errorf(sdk.CodeSeedInvalid, "create", `origin must be "" or "subagent"; got %q`, opts.Origin)
	case opts.DelegationDepth < 0:
		return nil, sdk.Errorf(sdk.CodeSeedInvalid, "create", "delegation depth %d is negative", opts.DelegationDepth)
	}
	protocol, err := sdk.ParseProtocol(opts.Protocol)
	if err != nil {
		return nil, err
	}
	if err := sdk.ValidateLabels("create", opts.Labels); err != nil {
		return nil, err
	}
	var labels map[string]string
	if len(opts.Labels) > 0 {
		labels = maps.Clone(opts.Labels) // the header's own: the caller's map may change
	}
	if err := st.checkFree(ctx, id); err != nil {
		return nil, err
	}
	sl, err := st.takeSlot("create", id)
	if err != nil {
		return nil, err
	}
	defer sl.done()
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: st.now(), CWD: opts.CWD, ParentSession: opts.ParentSession,
		Origin: opts.Origin, DelegationDepth: opts.DelegationDepth, AgentPreset: opts.AgentPreset, Protocol: protocol, Labels: labels}
	var seed []session.Event
	if opts.Seed != nil {
		if seed, err = session.SeedWithMarker(opts.Seed, st.now()); err != nil {
			return nil, err
		}
	}
	return st.createWith(ctx, h, seed)
}

// checkFree refuses an id that is live here or stored in the primary,
// also when its stored log is damaged (a Stat that answers CORRUPT_LOG).
func (st *Store) checkFree(ctx context.Context, id string) error {
	st.mu.Lock()
	_, isLive := st.live[id]
	st.mu.Unlock()
	if isLive {
		return sdk.Errorf(sdk.CodeSessionAlreadyExists, "create", "session %q is live in this store", id)
	}
	if p, ok := st.primary(); ok {
		_, err := p.Persistence.Stat(ctx, id)
		switch {
		case err == nil:
			return sdk.Errorf(sdk.CodeSessionAlreadyExists, "create", "session %q is stored in %s", id, p.Name)
		case errors.Is(err, sdk.CodeCorruptLog):
			return &sdk.Error{Code: sdk.CodeSessionAlreadyExists, Op: "create", SessionID: id,
				Detail: "session " + strconv.Quote(id) + " is stored in " + p.Name + ", with a damaged log", Err: err}
		case !errors.Is(err, sdk.CodeSessionNotFound):
			return err
		}
	}
	return nil
}

// createWith builds a session from a seed (nil = fresh), creates it on every
// backend, queues the seed and makes it live.
func (st *Store) createWith(ctx context.Context, h sdk.Header, seed []session.Event) (*session.Session, error) {
	return st.createFrom(ctx, h, nil, func(o session.Options) (*session.Session, error) {
		if seed == nil {
			return session.New(o)
		}
		return session.RestoreEvents(ctx, o, session.RestoreOptions{Source: session.FromSeed}, seed)
	})
}

// createFrom builds a session with build from the store's session options
// for h, creates it on every backend — by copying pc's prefix inside the
// backends that can (nil: none) — queues every event a backend does not
// hold yet and makes it live.
func (st *Store) createFrom(ctx context.Context, h sdk.Header, pc *prefixSource, build func(session.Options) (*session.Session, error)) (*session.Session, error) {
	h.Tenant = st.opts.Tenant
	ls := &live{space: make(chan struct{}), inherited: h.InheritedEventCount}
	s, err := build(st.sessionOptions(h, ls))
	if err != nil {
		return nil, err
	}
	backends := make([]*backend, 0, len(st.opts.Backends))
	held := make([]sdk.Cursor, len(st.opts.Backends)) // per backend, the last event it stores already
	stored := make([]bool, len(st.opts.Backends))     // per backend, whether it stores the session already (a copied prefix)
	for i, b := range st.opts.Backends {
		o, copied, err := st.copyPrefix(ctx, pc, i, b, h)
		held[i] = sdk.NoEvent
		if copied {
			held[i], stored[i] = sdk.Cursor(pc.boundary), true
		}
		if err != nil {
			st.closeBackends(backends)
			if i == 0 && errors.Is(err, sdk.CodeSessionAlreadyExists) {
				return nil, err
			}
			return nil, wrapBackend(err, "create", b.Name, h.ID)
		}
		backends = append(backends, &backend{name: b.Name, p: b.Persistence, primary: i == 0, handle: o.Handle})
	}
	ls.s = s
	for i, b := range backends {
		ls.queues = append(ls.queues, newQueue(st, ls, b, held[i], stored[i]))
	}
	if err := st.goLive(ls); err != nil {
		st.stopQueues(ls)
		st.closeBackends(backends)
		return nil, err
	}
	for i, q := range ls.queues {
		if rest := s.Events().Range(sdk.Offset(held[i]+1), s.Len()); rest.Len() > 0 {
			evs := rest.Slice()
			st.pending.add(envelopeBytes(evs))
			q.enqueue(evs, false)
		}
	}
	return s, nil
}

func (st *Store) goLive(ls *live) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return sdk.Errorf(sdk.CodeSessionClosed, "store", "the store is closed")
	}
	if _, dup := st.live[ls.s.ID()]; dup {
		return sdk.Errorf(sdk.CodeSessionAlreadyExists, "create", "session %q is live in this store", ls.s.ID())
	}
	st.live[ls.s.ID()] = ls
	st.feed.sessionLive(ls.s)
	return nil
}

func (st *Store) closeBackends(bs []*backend) {
	ctx, cancel := context.WithTimeout(context.Background(), st.opts.CallTimeout)
	defer cancel()
	for _, b := range bs {
		_ = b.p.Close(ctx, b.handle)
	}
}

func (st *Store) stopQueues(ls *live) {
	for _, q := range ls.queues {
		q.shutdown()
	}
}

func wrapBackend(err error, op, name, id string) error {
	var e *sdk.Error
	if errors.As(err, &e) {
		return err
	}
	return &sdk.Error{Code: sdk.CodeIOError, Op: op, SessionID: id, Detail: "backend " + name, Err: err}
}

// liveEntry returns the live entry of the session with this id.
func (st *Store) liveEntry(id string) (*live, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ls, ok := st.live[id]
	return ls, ok
}

// Get returns the live session with this id.
func (st *Store) Get(id string) (*session.Session, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	ls, ok := st.live[id]
	if !ok {
		return nil, false
	}
	return ls.s, true
}

// liveOf returns the live entry of s, or SESSION_NOT_LIVE.
func (st *Store) liveOf(s *session.Session, op string) (*live, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if s != nil {
		if ls, ok := st.live[s.ID()]; ok && ls.s == s {
			return ls, nil
		}
	}
	id := ""
	if s != nil {
		id = s.ID()
	}
	return nil, &sdk.Error{Code: sdk.CodeSessionNotLive, Op: op, SessionID: id, Detail: "the session is not the live instance of this store"}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
