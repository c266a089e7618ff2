package postgres

import (
	"context"
	"sync"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Name is the name Describe reports and the plugin's name.
const Name = "postgres"

const (
	// readQueryEvents is how many rows one read query fetches.
	readQueryEvents = 4096
)

// Backend is one instance of the PostgreSQL backend: an sdk.Persistence
// and an sdk.Configurable, and one host in the ownership rules of the
// package documentation: two Backends over one schema claim sessions
// against each other exactly as two processes on two machines do. All
// methods are safe for concurrent use.
type Backend struct {
	mu  sync.Mutex
	st  *store  // nil until configured
	own *owners // the write claims' connection
	// compressMin is the envelope size from which Append stores a zstd
	// frame when smaller; 0 when compression is off.
	compressMin int
	handles     *handles.Table[handle]
	claims      *handles.Claims[handle] // session id → write handle of this instance
	pending     *handles.Claims[handle] // session id → create handle, until materialized
	shut        bool
	lis         *listener // the watches' LISTEN connection; nil until the first Watch
	// beforeCAS, when set (tests), runs in an append transaction just
	// before its compare-and-set.
	beforeCAS func()
	// tenant is the tenant whose view b is: "" for the implicit tenant,
	// the configured Backend (Tenant).
	tenant string
	// root is the configured Backend of a tenant's view, whose st, own
	// and listener the view shares; nil on the configured Backend, which
	// holds the views.
	root  *Backend
	views sqlstore.Views[*Backend]
}

// handle is an open handle of a Backend.
type handle struct {
	name  string
	id    string
	write bool
	key   int64      // the advisory lock key of id
	ops   sync.Mutex // serializes Append and Flush on the handle

	// Guarded by Backend.mu.
	closed      bool
	pending     []byte       // canonical header of a create not yet stored; nil once stored
	header      sdk.Header   // of a pending create
	oc          *ownerConn   // the connection holding the write claim
	epoch       int64        // the owner epoch the write claim set
	incarnation string       // of the stored session a write handle owns
	view        handles.View // what reads through the handle may see
	cache       [][]byte     // envelopes [0, len) the Open scan checked, for the first Read; nil none
	cacheRev    string       // the revision cache belongs to
}

// New returns an unconfigured Backend, as a plugin process serves it: the
// host calls Configure first, and every other call fails with
// CONFIG_INVALID until it has succeeded.
func New() *Backend {
	return &Backend{handles: handles.NewTable[handle](op), claims: handles.NewClaims[handle](), pending: handles.NewClaims[handle]()}
}

// Open returns a Backend over the database and schema cfg names, the
// schema created or migrated as docs/storage.md says. Release it with
// Shutdown.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	b := New()
	if err := b.configure(ctx, cfg); err != nil {
		return nil, err
	}
	return b, nil
}

// Configure implements sdk.Configurable: it parses config (ParseConfig)
// and connects. It may succeed once.
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
		return configErr("this postgres backend is already configured (or shut down); Configure may succeed once")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	b.st, b.own = st, &owners{s: st}
	if cfg.CompressData {
		b.compressMin = cfg.CompressMinBytes
	}
	return nil
}

// Shutdown closes every handle of b and of its tenants' views, releases
// their write claims (by closing the ownership connection) and closes its
// pool. Later calls fail with CONFIG_INVALID. Shutdown is idempotent. On
// a tenant's view it closes the view's handles and releases their claims
// only.
func (b *Backend) Shutdown() error {
	if b.root != nil {
		hs, _ := b.closeHandles()
		for _, hd := range hs {
			if hd.write && hd.oc != nil {
				b.own.unlock(hd.oc, hd.key)
			}
		}
		return nil
	}
	for _, v := range b.views.All() {
		v.closeHandles()
	}
	if _, ok := b.closeHandles(); !ok {
		return nil
	}
	b.mu.Lock()
	st, lis := b.st, b.lis
	b.mu.Unlock()
	if lis != nil {
		lis.close()
	}
	b.own.close()
	st.close()
	return nil
}

// closeHandles closes every handle of b and marks b shut down; it returns
// the handles, and false when b was not configured or shut down before.
func (b *Backend) closeHandles() ([]*handle, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut || b.st == nil {
		b.shut = true
		return nil, false
	}
	b.shut = true
	hs := b.handles.Drain()
	for _, hd := range hs {
		hd.closed = true
	}
	b.claims, b.pending = handles.NewClaims[handle](), handles.NewClaims[handle]()
	return hs, true
}

// store returns b's tenant's part of its database, or CONFIG_INVALID
// before Configure and after Shutdown.
func (b *Backend) store() (space, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.shut:
		return space{}, configErr("this postgres backend was shut down")
	case b.st == nil:
		return space{}, configErr("this postgres backend is not configured; Configure it with its dsn first")
	}
	return space{b.st, b.tenant}, nil
}

// Describe reports the name "postgres", format version 1, and compression
// "zstd" when this Backend compresses envelopes.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	if _, err := b.store(); err != nil {
		return sdk.Description{}, err
	}
	d := sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion}
	if b.compressMin > 0 {
		d.Compression = "zstd"
	}
	return d, nil
}

// Close releases the handle and its write claim (the advisory lock). It
// is idempotent, never deletes stored data, and runs even when ctx has
// ended.
func (b *Backend) Close(_ context.Context, name string) error {
	b.mu.Lock()
	hd, ok := b.handles.Remove(name)
	if !ok {
		b.mu.Unlock()
		return nil
	}
	hd.closed = true
	b.pending.Release(hd.id, hd)
	released := hd.write && b.claims.Release(hd.id, hd)
	oc := hd.oc
	b.mu.Unlock()
	if released && oc != nil {
		b.own.unlock(oc, hd.key)
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

// release gives up a write claim taken for hd that no handle will hold.
func (b *Backend) release(hd *handle, oc *ownerConn) {
	b.mu.Lock()
	b.claims.Release(hd.id, hd)
	b.mu.Unlock()
	if oc != nil {
		b.own.unlock(oc, hd.key)
	}
}
