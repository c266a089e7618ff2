package sqlite

import (
	"context"
	"sync"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Name is the name Describe reports and the plugin's name.
const Name = "sqlite"

const (
	// prepareMin is the fewest events for which Append prepares a batch on
	// other goroutines while inserting it.
	prepareMin = 128
)

// Backend is one instance of the SQLite backend: an sdk.Persistence and an
// sdk.Configurable. Every Backend configured with one database file in a
// process shares that database's connection and write claims; each has its
// own handles and its own unmaterialized creates (see the package
// documentation). All methods are safe for concurrent use.
type Backend struct {
	mu sync.Mutex
	st *store // nil until configured
	// compressMin is the data size from which Append stores a zstd
	// frame when smaller (Config.CompressMinBytes); 0 when compression is
	// off.
	compressMin int
	handles     *handles.Table[handle]
	pending     *handles.Claims[handle] // session id → create handle, until materialized
	shut        bool
	// tenant is the tenant whose view b is: "" for the implicit tenant,
	// the configured Backend (Tenant).
	tenant string
	// root is the configured Backend of a tenant's view; nil on the
	// configured Backend, which holds the views.
	root  *Backend
	views sqlstore.Views[*Backend]
}

// handle is an open handle of a Backend.
type handle struct {
	name  string
	id    string
	write bool
	ops   sync.Mutex // serializes Append and Flush on the handle

	// Guarded by Backend.mu.
	closed      bool
	pending     []byte       // canonical header of a create not yet stored; nil once stored
	header      sdk.Header   // of a pending create
	incarnation string       // of the stored session a write handle owns
	view        handles.View // what reads through the handle may see
	cache       [][]byte     // envelopes [0, len) the Open scan decoded, for the first Read; nil none
	cacheRev    string       // the revision cache belongs to
	cacheData   int64        // the PRAGMA data_version cache belongs to
}

// New returns an unconfigured Backend, as a plugin process serves it: the
// host calls Configure first, and every other call fails with
// CONFIG_INVALID until it has succeeded.
func New() *Backend {
	return &Backend{handles: handles.NewTable[handle](op), pending: handles.NewClaims[handle]()}
}

// Open returns a Backend over the database cfg names, opened and checked
// as docs/storage.md says (file safety, pragmas, schema). Release it with
// Shutdown.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	b := New()
	if err := b.configure(ctx, cfg); err != nil {
		return nil, err
	}
	return b, nil
}

// Configure implements sdk.Configurable: it parses config (ParseConfig)
// and opens the database. It may succeed once.
func (b *Backend) Configure(ctx context.Context, config []byte) error {
	cfg, err := ParseConfig(config)
	if err != nil {
		return err
	}
	return b.configure(ctx, cfg)
}

func (b *Backend) configure(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.st != nil || b.shut {
		return configErr("this sqlite backend is already configured (or shut down); Configure may succeed once")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	b.st = st
	if cfg.CompressData {
		b.compressMin = cfg.CompressMinBytes
	}
	return nil
}

// Peer returns a second Backend over b's database, as another configuration
// of the same file in this process would be: it shares the connection and
// the write claims, and has its own handles and creates. For an in-memory
// database it is the only way to reach the same data twice. Release it
// with Shutdown. The peer of a tenant's view is a view of that tenant.
func (b *Backend) Peer() (*Backend, error) {
	st, err := b.store()
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.refs++
	st.mu.Unlock()
	p := New()
	p.st, p.compressMin, p.tenant = st.store, b.compressMin, b.tenant
	return p, nil
}

// Shutdown closes every handle of b and of its tenants' views (releasing
// their claims) and, when b was the last configured Backend over its
// database in this process, closes the database. Later calls fail with
// CONFIG_INVALID. Shutdown is idempotent. On a tenant's view it closes
// the view's handles only.
func (b *Backend) Shutdown() error {
	if b.root != nil {
		b.closeHandles()
		return nil
	}
	for _, v := range b.views.All() {
		v.closeHandles()
	}
	if st := b.closeHandles(); st != nil {
		return st.unref()
	}
	return nil
}

// closeHandles closes every handle of b, releasing their claims, and
// marks b shut down; it returns b's store when b was configured and not
// shut down before.
func (b *Backend) closeHandles() *store {
	b.mu.Lock()
	st := b.st
	if b.shut || st == nil {
		b.shut = true
		b.mu.Unlock()
		return nil
	}
	b.shut = true
	hs := b.handles.Drain()
	for _, hd := range hs {
		hd.closed = true
	}
	b.pending = handles.NewClaims[handle]()
	b.mu.Unlock()
	sp := space{st, b.tenant}
	for _, hd := range hs {
		if hd.write {
			sp.release(hd.id, hd)
		}
	}
	return st
}

// store returns b's tenant's part of its database, or CONFIG_INVALID
// before Configure and after Shutdown.
func (b *Backend) store() (space, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.shut:
		return space{}, configErr("this sqlite backend was shut down")
	case b.st == nil:
		return space{}, configErr("this sqlite backend is not configured; Configure it with its path first")
	}
	return space{b.st, b.tenant}, nil
}

// Describe reports the name "sqlite", format version 1, compression
// "zstd" when this Backend compresses data, and 1 descriptor per session
// open for writing: its claim's lock file (the database's own files are
// shared by every session).
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	if _, err := b.store(); err != nil {
		return sdk.Description{}, err
	}
	d := sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion, DescriptorsPerSession: 1}
	if b.compressMin > 0 {
		d.Compression = "zstd"
	}
	return d, nil
}

// Close releases the handle and its write claim. It is idempotent, never
// deletes stored data, and runs even when ctx has ended. Closing a write
// handle also checkpoints the WAL and truncates it, when no other
// connection is in the way (store.shrinkWAL).
func (b *Backend) Close(_ context.Context, handle string) error {
	b.mu.Lock()
	hd, ok := b.handles.Remove(handle)
	if !ok {
		b.mu.Unlock()
		return nil
	}
	hd.closed = true
	b.pending.Release(hd.id, hd)
	st := space{b.st, b.tenant}
	b.mu.Unlock()
	if hd.write {
		st.release(hd.id, hd)
		st.shrinkWAL()
	}
	return nil
}

// writable resolves an open write handle.
func (b *Backend) writable(name string) (*handle, error) {
	hd, err := b.handles.Get(name)
	if err != nil {
		return nil, err
	}
	if !hd.write {
		return nil, handles.ReadOnly(op, hd.id, name)
	}
	return hd, nil
}
