package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Name is what Describe reports.
const Name = "memory"

const (
	op = "memory"
	// artifact names the storage in format-gate and header messages.
	artifact = "memory"
	// A Read chunk ends after readChunkEvents events or once it holds
	// readChunkBytes bytes, whichever comes first (always ≥ 1 event).
	readChunkEvents = 512
	readChunkBytes  = 1 << 20
)

// Backend is one instance of the in-memory backend. The zero value is not
// usable; call New or Peer. All methods are safe for concurrent use.
type Backend struct {
	st *store

	// Guarded by st.mu.
	handles map[string]*handle // open handles of this instance
}

// store is what the instances of one storage share.
type store struct {
	mu       sync.Mutex
	name     string // random; the first part of every revision
	sessions map[string]*session
	// creating holds the write claim of every unmaterialized create of
	// every instance: session id → its create handle (an instance's own
	// are those among its handles, see created).
	creating map[string]*handle
	handleN  uint64 // handle names are "h" + handleN, never reused
}

type session struct {
	header []byte   // canonical header JSON (headerjson.Encode)
	events [][]byte // append-only; a published element is never written again
	size   int64    // len(header) + Σ len(event)
	gen    uint64   // changes of the session; ≥ 1 once stored
	owner  *handle  // the write claim; nil when free
	damage *damage  // set by Hooks.Damage
}

type handle struct {
	name    string
	id      string
	write   bool
	pending []byte // canonical header of a create not yet materialized; nil otherwise
	lost    bool   // the claim was dropped (DropOwnership)
	floor   int    // most events this handle has seen (read or appended)
}

// New returns an instance over a fresh, empty store.
func New() *Backend {
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return newInstance(&store{name: hex.EncodeToString(r[:]), sessions: map[string]*session{}, creating: map[string]*handle{}})
}

// Peer returns a second instance over b's store, as another process over
// the same data directory would open it: it sees the stored sessions and
// competes for the same write claims, but has its own handles and its own
// unmaterialized creates.
func (b *Backend) Peer() *Backend { return newInstance(b.st) }

func newInstance(st *store) *Backend {
	return &Backend{st: st, handles: map[string]*handle{}}
}

// Describe reports the name "memory", format version 1 and no compression.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := ended(ctx, "describe"); err != nil {
		return sdk.Description{}, err
	}
	return sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion}, nil
}

// Create reserves h.ID in every instance of the store and returns its write
// handle: until the handle closes, a Create of the id in any instance is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. See the package
// documentation for when the session materializes.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := ended(ctx, "create"); err != nil {
		return sdk.Opened{}, err
	}
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return sdk.Opened{}, err
	}
	if h.FormatVersion != 0 && h.FormatVersion != sdk.FormatVersion {
		return sdk.Opened{}, withSession(sdk.Errorf(sdk.CodeFormatUnsupported, op, "this backend writes logbook format v%d; the header asks for v%d", sdk.FormatVersion, h.FormatVersion), h.ID)
	}
	hdr := headerjson.Encode(h)
	// Never store a header that could not be read back.
	if _, err := headerjson.Decode(hdr, h.ID, artifact); err != nil {
		return sdk.Opened{}, &sdk.Error{Code: sdk.CodeHeaderInvalid, Op: op, SessionID: h.ID, Seq: -1, Index: -1,
			Detail: "the session header would not read back", Err: err}
	}
	h.FormatVersion = sdk.FormatVersion

	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if _, ok := b.st.sessions[h.ID]; ok {
		return sdk.Opened{}, alreadyExists(h.ID, "it is stored")
	}
	if _, ok := b.created(h.ID); ok {
		return sdk.Opened{}, alreadyExists(h.ID, "it was created in this instance and is not stored yet")
	}
	if _, ok := b.st.creating[h.ID]; ok {
		return sdk.Opened{}, alreadyExists(h.ID, "another instance created it and holds its write claim")
	}
	hd := b.newHandle(h.ID, true)
	hd.pending = hdr
	b.st.creating[h.ID] = hd
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: 0, Revision: ""}, nil
}

// Open opens a stored session. AccessWrite takes the session's write claim
// (ALREADY_OWNED when any instance of the store holds it); AccessRead takes
// none. There is never a torn tail in memory, so Torn is always zero.
func (b *Backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := ended(ctx, "open"); err != nil {
		return sdk.Opened{}, err
	}
	if access != sdk.AccessRead && access != sdk.AccessWrite {
		return sdk.Opened{}, withSession(sdk.Errorf(sdk.CodeUsage, op, "access must be read (1) or write (2); got %d", access), id)
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Opened{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, ok := b.st.sessions[id]
	if !ok {
		if _, creating := b.st.creating[id]; creating && access == sdk.AccessWrite {
			return sdk.Opened{}, withSession(sdk.Errorf(sdk.CodeAlreadyOwned, op, "session %s is already open for writing: a create handle holds it, and it is not stored yet; close that handle first", strconv.Quote(id)), id)
		}
		return sdk.Opened{}, notFound(id)
	}
	h, err := headerjson.Decode(s.header, id, artifact)
	if err != nil {
		return sdk.Opened{}, err
	}
	if s.damage != nil {
		return sdk.Opened{}, s.damage.corrupt(id)
	}
	if access == sdk.AccessWrite && s.owner != nil {
		return sdk.Opened{}, withSession(sdk.Errorf(sdk.CodeAlreadyOwned, op, "session %s is already open for writing by another handle; close that handle first", strconv.Quote(id)), id)
	}
	hd := b.newHandle(id, access == sdk.AccessWrite)
	if hd.write {
		s.owner = hd
	}
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: sdk.Offset(len(s.events)), Revision: b.st.revision(s)}, nil
}

// Append stores events at firstSeq onwards under compare-and-set, all or
// nothing. The events are copied; the caller may reuse its buffers.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := ended(ctx, "append"); err != nil {
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
	if _, err := sdk.NewSeq("firstSeq", int64(firstSeq)); err != nil {
		return sdk.Durable{}, withSession(err.(*sdk.Error), hd.id)
	}
	if err := checkBatch(firstSeq, events); err != nil {
		return sdk.Durable{}, withSession(err, hd.id)
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
		e := sdk.Errorf(sdk.CodeSeqConflict, op, "compare-and-set failed: firstSeq %d but the stored next seq is %d", firstSeq, next)
		e.SessionID, e.Seq = hd.id, int64(firstSeq)
		return sdk.Durable{}, e
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
	hd.floor = len(s.events)
	return b.durable(hd), nil
}

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. Each chunk is a
// fresh copy fn may keep.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := ended(ctx, "read"); err != nil {
		return err
	}
	b.st.mu.Lock()
	hd, err := b.open(handle)
	if err != nil {
		b.st.mu.Unlock()
		return err
	}
	if _, err := sdk.NewOffset("offset", int64(offset)); err != nil {
		b.st.mu.Unlock()
		return withSession(err.(*sdk.Error), hd.id)
	}
	if length != -1 {
		if _, err := sdk.NewOffset("length", length); err != nil {
			b.st.mu.Unlock()
			return withSession(err.(*sdk.Error), hd.id)
		}
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
	end := int64(len(stored))
	if length != -1 && int64(offset) < end && length < end-int64(offset) {
		end = int64(offset) + length
	}
	return emit(ctx, stored, int64(offset), end, fn)
}

// emit calls fn with fresh copies of stored[from:end] in chunks of at most
// readChunkEvents events or about readChunkBytes bytes, checking ctx
// before each.
func emit(ctx context.Context, stored [][]byte, from, end int64, fn func(events [][]byte) error) error {
	for i := from; i < end; {
		if err := ended(ctx, "read"); err != nil {
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
	if err := ended(ctx, "flush"); err != nil {
		return sdk.Durable{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	hd, err := b.open(handle)
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
	hd, ok := b.handles[handle]
	if !ok {
		return nil
	}
	delete(b.handles, handle)
	if hd.pending != nil {
		b.abandon(hd)
	}
	if s := b.st.sessions[hd.id]; s != nil && s.owner == hd {
		s.owner = nil
	}
	return nil
}

// Stat describes a stored session. An unmaterialized create is
// SESSION_NOT_FOUND.
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := ended(ctx, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, ok := b.st.sessions[id]
	if !ok {
		return sdk.Stat{}, notFound(id)
	}
	h, err := headerjson.Decode(s.header, id, artifact)
	if err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: h, Revision: b.st.revision(s), FormatVersion: h.FormatVersion, EventCount: int64(len(s.events)), SizeBytes: s.size}, nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this instance. A session whose header does not
// pass the format gate yields an entry with Err set. fn runs without any
// lock held and may call b; an error from fn ends the listing and is
// returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := ended(ctx, "list"); err != nil {
		return err
	}
	type item struct {
		id, rev string
		header  []byte
	}
	b.st.mu.Lock()
	items := make([]item, 0, len(b.st.sessions)+len(b.st.creating))
	for id, s := range b.st.sessions {
		items = append(items, item{id, b.st.revision(s), s.header})
	}
	for id := range b.st.creating {
		if hd, own := b.created(id); own {
			if _, stored := b.st.sessions[id]; !stored {
				items = append(items, item{id, "", hd.pending})
			}
		}
	}
	b.st.mu.Unlock()
	slices.SortFunc(items, func(x, y item) int {
		switch {
		case x.id < y.id:
			return -1
		case x.id > y.id:
			return 1
		}
		return 0
	})
	for _, it := range items {
		if err := ended(ctx, "list"); err != nil {
			return err
		}
		e := sdk.ListEntry{ID: it.id}
		if h, err := headerjson.Decode(it.header, it.id, artifact); err != nil {
			e.Err = err
		} else {
			e.Header, e.Revision = h, it.rev
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// newHandle registers a handle; b.st.mu is held.
func (b *Backend) newHandle(id string, write bool) *handle {
	b.st.handleN++
	hd := &handle{name: "h" + strconv.FormatUint(b.st.handleN, 10), id: id, write: write}
	b.handles[hd.name] = hd
	return hd
}

// open resolves an open handle of this instance; b.st.mu is held.
func (b *Backend) open(name string) (*handle, error) {
	hd, ok := b.handles[name]
	if !ok {
		return nil, sdk.Errorf(sdk.CodeHandleClosed, op, "handle %s is closed or was never opened by this instance", strconv.Quote(name))
	}
	return hd, nil
}

// writable resolves an open write handle that still holds its claim;
// b.st.mu is held.
func (b *Backend) writable(name string) (*handle, error) {
	hd, err := b.open(name)
	if err != nil {
		return nil, err
	}
	if !hd.write {
		return nil, withSession(sdk.Errorf(sdk.CodeReadOnlyHandle, op, "handle %s was opened for reading; open the session for writing to append", strconv.Quote(name)), hd.id)
	}
	if hd.lost {
		return nil, withSession(sdk.Errorf(sdk.CodeOwnershipLost, op, "handle %s no longer holds the write claim on session %s", strconv.Quote(name), strconv.Quote(hd.id)), hd.id)
	}
	return hd, nil
}

// materialize stores hd's pending create with no events and hands it the
// write claim; b.st.mu is held.
func (b *Backend) materialize(hd *handle) (*session, error) {
	if _, ok := b.st.sessions[hd.id]; ok {
		return nil, alreadyExists(hd.id, "another instance stored it first")
	}
	s := &session{header: hd.pending, size: int64(len(hd.pending)), gen: 1, owner: hd}
	b.st.sessions[hd.id] = s
	b.abandon(hd)
	hd.pending = nil
	return s, nil
}

// abandon drops hd's pending create and its claim; b.st.mu is held.
func (b *Backend) abandon(hd *handle) {
	if b.st.creating[hd.id] == hd {
		delete(b.st.creating, hd.id)
	}
}

// created returns the unmaterialized create of id that this instance
// holds, if any; b.st.mu is held.
func (b *Backend) created(id string) (*handle, bool) {
	hd, ok := b.st.creating[id]
	return hd, ok && b.handles[hd.name] == hd
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

// ended reports a context that has ended as IO_ERROR wrapping ctx.Err(),
// the code a gRPC client gives a cancelled call (docs/errors.md).
func ended(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: op, Seq: -1, Index: -1, Detail: what + " not done: the context ended", Err: err}
	}
	return nil
}

func withSession(e *sdk.Error, id string) *sdk.Error {
	c := *e
	c.SessionID = id
	return &c
}

func notFound(id string) error {
	return withSession(sdk.Errorf(sdk.CodeSessionNotFound, op, "no stored session %s", strconv.Quote(id)), id)
}

func alreadyExists(id, why string) error {
	return withSession(sdk.Errorf(sdk.CodeSessionAlreadyExists, op, "session %s already exists: %s", strconv.Quote(id), why), id)
}
