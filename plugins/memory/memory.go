package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Name is what Describe reports.
const Name = "memory"

// Capabilities returns the optional capabilities a Backend implements, as
// the memory plugin declares them in its sdk.Info.
func Capabilities() []string {
	return []string{sdk.CapabilityWatch, sdk.CapabilityDelete, sdk.CapabilityImport, sdk.CapabilityTenants}
}

const (
	op = "memory"
	// artifact names the storage in format-gate and header messages.
	artifact = "memory"
	// A Read chunk ends after readChunkEvents events or once it holds
	// readChunkBytes bytes, whichever comes first (always ≥ 1 event).
	readChunkEvents = 512
	readChunkBytes  = 1 << 20
)

// Backend is one instance of the in-memory backend, or one tenant's view
// of an instance (Tenant). The zero value is not usable; call New or Peer.
// All methods are safe for concurrent use.
type Backend struct {
	st *store

	handles *handles.Table[handle] // open handles of this view of this instance
	inst    *instance
}

// store is what the instances of one storage share about one tenant's
// sessions.
type store struct {
	mu       sync.Mutex
	name     string // random; the first part of every revision
	tenant   string // the Header.Tenant of every session stored here
	all      *tenants
	sessions map[string]*session
	// claims holds the write claim of every session of every instance:
	// its write handle, or its create handle while it is not stored (an
	// instance's own creates are those among its handles, see created).
	claims *handles.Claims[handle]
	// grown is closed, and replaced, whenever a stored session grows: the
	// wake-up of every Watch (see watch.go).
	grown chan struct{}
	// held holds the ids of the stored sessions under a legal hold, and
	// audit the audit log (delete.go).
	held  map[string]bool
	audit []sdk.AuditRecord
}

type session struct {
	header []byte   // canonical header JSON (headerjson.Encode)
	events [][]byte // append-only; a published element is never written again
	size   int64    // len(header) + Σ len(event)
	gen    uint64   // changes of the session; ≥ 1 once stored
	damage *damage  // set by Hooks.Damage
	// written is when the session was last written (stored, appended to),
	// in Unix milliseconds.
	written int64
}

// lastActivity is the LastActivity of session s with header h: when it
// was last written, and never before its creation.
func lastActivity(s *session, h sdk.Header) int64 { return max(s.written, h.CreatedAt) }

// handle is an open handle; its fields after write are guarded by
// store.mu.
type handle struct {
	name    string
	id      string
	write   bool
	pending []byte     // canonical header of a create not yet materialized; nil otherwise
	header  sdk.Header // the create's header, while pending
	lost    bool       // the claim was dropped (DropOwnership)
	floor   int        // most events this handle has seen (read or appended)
}

// New returns an instance over a fresh, empty store.
func New() *Backend {
	all := &tenants{named: map[string]*store{}}
	all.implicit = newStore("", all)
	return newInstance(all.implicit)
}

// newStore returns the empty store of the tenant whose Header.Tenant is
// tenant.
func newStore(tenant string, all *tenants) *store {
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return &store{name: hex.EncodeToString(r[:]), tenant: tenant, all: all, sessions: map[string]*session{},
		claims: handles.NewClaims[handle](), grown: make(chan struct{}), held: map[string]bool{}}
}

// Peer returns a second instance over b's store, as another process over
// the same data directory would open it: it sees the stored sessions of
// every tenant and competes for the same write claims, but has its own
// handles and its own unmaterialized creates. The peer of a tenant view is
// the same tenant's view of the new instance.
func (b *Backend) Peer() *Backend { return newInstance(b.st) }

// newInstance returns the view of a new instance over st: the implicit
// tenant's, or a named tenant's (then the instance's view of that tenant).
func newInstance(st *store) *Backend {
	in := &instance{views: map[string]*Backend{}}
	b := &Backend{st: st, handles: handles.NewTable[handle](op), inst: in}
	if st.tenant != "" {
		in.views[st.tenant] = b
	}
	return b
}

// Describe reports the name "memory", format version 1 and no compression.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	return sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion}, nil
}

// Create reserves h.ID in every instance of the store and returns its write
// handle: until the handle closes, a Create of the id in any instance is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. See the package
// documentation for when the session materializes.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	return b.create(ctx, h, false)
}

// create is Create; a hidden create (an Import's) is left out of List
// while it is not stored.
func (b *Backend) create(ctx context.Context, h sdk.Header, hidden bool) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "create"); err != nil {
		return sdk.Opened{}, err
	}
	h, hdr, err := handles.CheckCreate(op, h, artifact)
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckTenant(op, h, b.st.tenant); err != nil {
		return sdk.Opened{}, err
	}

	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if _, ok := b.st.sessions[h.ID]; ok {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored")
	}
	hd := &handle{id: h.ID, write: true, pending: hdr, header: h}
	take := b.st.claims.Take
	if hidden {
		take = b.st.claims.TakeHidden
	}
	if holder, ok := take(h.ID, hd); !ok {
		if b.handles.Has(holder.name, holder) {
			return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
		}
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "another instance created it and holds its write claim")
	}
	b.register(hd)
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: 0, Revision: ""}, nil
}

// Open opens a stored session. AccessWrite takes the session's write claim
// (ALREADY_OWNED when any instance of the store holds it); AccessRead takes
// none. There is never a torn tail in memory, so Torn is always zero.
func (b *Backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "open"); err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckOpen(op, id, access); err != nil {
		return sdk.Opened{}, err
	}
	write := access == sdk.AccessWrite
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, ok := b.st.sessions[id]
	if !ok {
		if write && b.st.claims.Holder(id) != nil {
			return sdk.Opened{}, handles.AlreadyOwned(op, id, "a create handle holds it, and it is not stored yet")
		}
		return sdk.Opened{}, handles.NotFound(op, id)
	}
	h, err := b.st.decode(s, id)
	if err != nil {
		return sdk.Opened{}, err
	}
	if s.damage != nil {
		return sdk.Opened{}, s.damage.corrupt(id)
	}
	h, raw, err := headerjson.Migrate(h, s.header, artifact)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd := &handle{id: id, write: write}
	if write {
		if _, ok := b.st.claims.Take(id, hd); !ok {
			return sdk.Opened{}, handles.AlreadyOwned(op, id, "another handle holds it")
		}
		if len(raw) != len(s.header) || string(raw) != string(s.header) {
			// A migration (docs/format.md "Format versions"): the write open
			// stores the new version, the events as they are.
			s.size += int64(len(raw) - len(s.header))
			s.header = raw
			s.gen++
		}
	}
	b.register(hd)
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: sdk.Offset(len(s.events)), Revision: b.st.revision(s)}, nil
}

// Append stores events at firstSeq onwards under compare-and-set, all or
// nothing. The events are copied; the caller may reuse its buffers.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "append"); err != nil {
		return sdk.Durable{}, err
	}

	// Check and copy the batch before taking the lock: neither depends on
	// the stored state.
	b.st.mu.Lock()
	hd, err := b.writable(handle)
	b.st.mu.Unlock()
	if err != nil {
		return sdk.Durable{}, err
	}
	if err := handles.CheckAppend(hd.id, firstSeq); err != nil {
		return sdk.Durable{}, err
	}
	if err := checkBatch(firstSeq, events); err != nil {
		return sdk.Durable{}, err.WithSession(hd.id)
	}
	batch := copyBatch(events)

	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	// The handle may have been closed or lost its claim meanwhile.
	if hd, err = b.writable(handle); err != nil {
		return sdk.Durable{}, err
	}
	s := b.st.sessions[hd.id]
	next := 0
	if hd.pending == nil {
		next = len(s.events)
	}
	if int64(firstSeq) != int64(next) {
		return sdk.Durable{}, handles.SeqConflict(op, hd.id, int64(firstSeq), int64(next))
	}
	if len(batch) == 0 {
		return b.durable(hd), nil
	}
	if hd.pending != nil {
		if s, err = b.materialize(hd); err != nil {
			return sdk.Durable{}, err
		}
	}
	s.events = append(s.events, batch...)
	for _, ev := range batch {
		s.size += int64(len(ev))
	}
	s.gen++
	s.written = time.Now().UnixMilli()
	hd.floor = len(s.events)
	b.st.signalGrowth()
	return b.durable(hd), nil
}

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. Each chunk is a
// fresh copy fn may keep.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return err
	}
	b.st.mu.Lock()
	hd, err := b.handles.Get(handle)
	if err != nil {
		b.st.mu.Unlock()
		return err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		b.st.mu.Unlock()
		return err
	}
	var stored [][]byte
	if s := b.st.sessions[hd.id]; s != nil && hd.pending == nil {
		stored = s.events[:len(s.events):len(s.events)]
	}
	if len(stored) < hd.floor {
		b.st.mu.Unlock()
		e := sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; the stored log now has %d", hd.floor, len(stored))
		e.SessionID = hd.id
		return e
	}
	hd.floor = len(stored)
	b.st.mu.Unlock()

	// Stored events are never written again, so they are copied out
	// without the lock.
	return emit(ctx, stored, int64(offset), handles.ReadEnd(offset, length, int64(len(stored))), fn)
}

// emit calls fn with fresh copies of stored[from:end] in chunks of at most
// readChunkEvents events or about readChunkBytes bytes, checking ctx
// before each.
func emit(ctx context.Context, stored [][]byte, from, end int64, fn func(events [][]byte) error) error {
	for i := from; i < end; {
		if err := handles.Ended(ctx, op, "read"); err != nil {
			return err
		}
		j, n := i, 0
		for j < end && j-i < readChunkEvents && (j == i || n+len(stored[j]) <= readChunkBytes) {
			n += len(stored[j])
			j++
		}
		if err := fn(copyBatch(stored[i:j])); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Flush materializes a pending create and reports the stored next seq; in
// memory everything acknowledged is already as durable as it gets.
func (b *Backend) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "flush"); err != nil {
		return sdk.Durable{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	hd, err := b.handles.Get(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	if hd.write {
		if hd, err = b.writable(handle); err != nil {
			return sdk.Durable{}, err
		}
		if hd.pending != nil {
			if _, err := b.materialize(hd); err != nil {
				return sdk.Durable{}, err
			}
		}
	}
	return b.durable(hd), nil
}

// Close releases the handle and its write claim. It is idempotent, never
// deletes stored data, and runs even when ctx has ended.
func (b *Backend) Close(_ context.Context, handle string) error {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if hd, ok := b.handles.Remove(handle); ok {
		b.st.claims.Release(hd.id, hd)
	}
	return nil
}

// Stat describes a stored session. An unmaterialized create is
// SESSION_NOT_FOUND.
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := handles.Ended(ctx, op, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, err := b.st.stored(id)
	if err != nil {
		return sdk.Stat{}, err
	}
	h, err := b.st.decode(s, id)
	if err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: h, Revision: b.st.revision(s), FormatVersion: h.FormatVersion, EventCount: int64(len(s.events)), SizeBytes: s.size,
		LastActivity: lastActivity(s, h)}, nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this instance. A session whose header does not
// pass the format gate yields an entry with Err set. fn runs without any
// lock held and may call b; an error from fn ends the listing and is
// returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	b.st.mu.Lock()
	entries := b.st.claims.Pending(func(id string, hd *handle) (sdk.Header, bool) {
		_, stored := b.st.sessions[id]
		return hd.header, hd.pending != nil && !stored && b.handles.Has(hd.name, hd)
	})
	for id, s := range b.st.sessions {
		e := sdk.ListEntry{ID: id, EventCount: int64(len(s.events))}
		if h, err := b.st.decode(s, id); err != nil {
			e.Err = err
		} else {
			e.Header, e.Revision, e.LastActivity = h, b.st.revision(s), lastActivity(s, h)
		}
		entries = append(entries, e)
	}
	b.st.mu.Unlock()
	slices.SortFunc(entries, func(x, y sdk.ListEntry) int { return strings.Compare(x.ID, y.ID) })
	for _, e := range entries {
		if err := handles.Ended(ctx, op, "list"); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// register names hd and makes it an open handle of this instance.
func (b *Backend) register(hd *handle) {
	hd.name = b.handles.NewName()
	b.handles.Put(hd.name, hd)
}

// writable resolves an open write handle that still holds its claim;
// b.st.mu is held.
func (b *Backend) writable(name string) (*handle, error) {
	hd, err := b.handles.Get(name)
	if err != nil {
		return nil, err
	}
	if !hd.write {
		return nil, handles.ReadOnly(op, hd.id, name)
	}
	if hd.lost {
		return nil, sdk.Errorf(sdk.CodeOwnershipLost, op, "handle %s no longer holds the write claim on session %s", strconv.Quote(name), strconv.Quote(hd.id)).WithSession(hd.id)
	}
	return hd, nil
}

// materialize stores hd's pending create with no events and hands it the
// write claim; b.st.mu is held.
func (b *Backend) materialize(hd *handle) (*session, error) {
	if _, ok := b.st.sessions[hd.id]; ok {
		return nil, handles.AlreadyExists(op, hd.id, "another instance stored it first")
	}
	s := &session{header: hd.pending, size: int64(len(hd.pending)), gen: 1, written: time.Now().UnixMilli()}
	b.st.sessions[hd.id] = s
	hd.pending, hd.header = nil, sdk.Header{}
	return s, nil
}

// created returns the unmaterialized create of id that this instance
// holds, if any; b.st.mu is held.
func (b *Backend) created(id string) (*handle, bool) {
	hd := b.st.claims.Holder(id)
	return hd, hd != nil && hd.pending != nil && b.handles.Has(hd.name, hd)
}

// durable is the stored next seq and revision of hd's session; b.st.mu is
// held.
func (b *Backend) durable(hd *handle) sdk.Durable {
	s := b.st.sessions[hd.id]
	if hd.pending != nil || s == nil {
		return sdk.Durable{}
	}
	return sdk.Durable{NextSeq: sdk.Offset(len(s.events)), Revision: b.st.revision(s)}
}

// stored returns the stored session id, or SESSION_NOT_FOUND; st.mu is
// held.
func (st *store) stored(id string) (*session, error) {
	s, ok := st.sessions[id]
	if !ok {
		return nil, handles.NotFound(op, id)
	}
	return s, nil
}

func (st *store) revision(s *session) string {
	return st.name + ":" + strconv.FormatUint(s.gen, 10)
}

// copyBatch copies events into one new buffer, each element a
// capacity-clipped view of it.
func copyBatch(events [][]byte) [][]byte {
	n := 0
	for _, ev := range events {
		n += len(ev)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(events))
	for i, ev := range events {
		start := len(buf)
		buf = append(buf, ev...)
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out
}
