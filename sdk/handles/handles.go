// Package handles is the bookkeeping every persistence backend does the
// same way, so that a backend implements its storage and nothing else: the
// table of its open handles, the in-process write claims (which also hold
// the creates not stored yet), the checks of the arguments of Create, Open
// and Read, and the errors docs/plugins.md gives for them.
//
// A backend keeps one Table per instance and one Claims per instance or per
// storage shared by instances (whatever must exclude a second writer in
// this process); a claim across processes (flock) stays the backend's
// business. Every error is an *sdk.Error whose Op is the op the caller
// passes, so a backend's errors all carry its own name.
package handles

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Table is the open handles of one backend instance, by name. A name is
// "<tag>-h<n>": the tag is random per Table and n counts up, so a name is
// never reused and never names a handle of another instance, in this
// process or another. The zero value is not usable; call NewTable. All
// methods are safe for concurrent use.
type Table[H any] struct {
	op  string
	tag string

	mu   sync.Mutex
	n    uint64
	open map[string]*H
}

// NewTable returns an empty table whose errors carry op.
func NewTable[H any](op string) *Table[H] {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return &Table[H]{op: op, tag: hex.EncodeToString(r[:]), open: map[string]*H{}}
}

// NewName returns a name that no handle of t had or will have. It
// registers nothing: Put does, once the handle is ready to be used.
func (t *Table[H]) NewName() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	return t.tag + "-h" + strconv.FormatUint(t.n, 10)
}

// Put registers h under name, which NewName returned.
func (t *Table[H]) Put(name string, h *H) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open[name] = h
}

// Get returns the open handle name, or HANDLE_CLOSED when it was closed
// or never opened by this instance.
func (t *Table[H]) Get(name string) (*H, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.open[name]
	if !ok {
		return nil, HandleClosed(t.op, name)
	}
	return h, nil
}

// Has reports whether h is open under name.
func (t *Table[H]) Has(name string, h *H) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.open[name] == h
}

// Remove unregisters name and returns its handle; false when it was not
// open, which makes a Close of a closed handle a no-op.
func (t *Table[H]) Remove(name string) (*H, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.open[name]
	delete(t.open, name)
	return h, ok
}

// Len is the number of open handles.
func (t *Table[H]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Drain unregisters every handle and returns them, in no order.
func (t *Table[H]) Drain() []*H {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := make([]*H, 0, len(t.open))
	for _, h := range t.open {
		hs = append(hs, h)
	}
	clear(t.open)
	return hs
}

// Claims is an in-process write-claim table: session id → the handle that
// holds the session's write claim, a write handle or a create not stored
// yet. The zero value is not usable; call NewClaims. All methods are safe
// for concurrent use; none calls back into the backend.
type Claims[H any] struct {
	mu     sync.Mutex
	held   map[string]*H
	hidden map[string]bool // claims Pending never lists (an import's)
}

// NewClaims returns a table with no claim held.
func NewClaims[H any]() *Claims[H] {
	return &Claims[H]{held: map[string]*H{}, hidden: map[string]bool{}}
}

// Take gives the claim on id to h when no handle holds it, and returns
// (nil, true); otherwise it changes nothing and returns the holder and
// false.
func (c *Claims[H]) Take(id string, h *H) (holder *H, ok bool) {
	return c.take(id, h, false)
}

// TakeHidden is Take for a claim that Pending never lists until it is
// released: the create of an import (sdk.Importer), which no List may
// show before it is stored whole.
func (c *Claims[H]) TakeHidden(id string, h *H) (holder *H, ok bool) {
	return c.take(id, h, true)
}

func (c *Claims[H]) take(id string, h *H, hidden bool) (*H, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if holder := c.held[id]; holder != nil {
		return holder, false
	}
	c.held[id] = h
	if hidden {
		c.hidden[id] = true
	}
	return nil, true
}

// Holder returns the handle that holds the claim on id, or nil.
func (c *Claims[H]) Holder(id string) *H {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[id]
}

// Release drops the claim on id when h holds it, and reports whether it
// did; a claim another handle holds stays.
func (c *Claims[H]) Release(id string, h *H) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[id] != h {
		return false
	}
	delete(c.held, id)
	delete(c.hidden, id)
	return true
}

// Pending returns, in id order, the List entries of the claims that keep
// accepts (no event stored, last active when created): keep returns the header of a create not stored yet, and false
// for a claim List must not show (a stored session, another instance's
// create); a claim taken with TakeHidden is never kept. keep runs with the table locked and must not call c.
func (c *Claims[H]) Pending(keep func(id string, h *H) (sdk.Header, bool)) []sdk.ListEntry {
	c.mu.Lock()
	var out []sdk.ListEntry
	for id, h := range c.held {
		if c.hidden[id] {
			continue
		}
		if hdr, ok := keep(id, h); ok {
			out = append(out, sdk.ListEntry{ID: id, Header: hdr, LastActivity: hdr.CreatedAt})
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(x, y sdk.ListEntry) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// Ended returns nil while ctx is live, and once it has ended an IO_ERROR
// wrapping ctx.Err(), the code a gRPC client gives a cancelled call
// (docs/errors.md): "<what> not done: the context ended".
func Ended(ctx context.Context, op, what string) error {
	if err := ctx.Err(); err != nil {
		return sdk.Wrapf(sdk.CodeIOError, op, err, "%s not done: the context ended", what)
	}
	return nil
}
