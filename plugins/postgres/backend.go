package postgres

import (
	"context"
	"sync"

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

// Shutdown closes every handle of b, releases its write claims (by
// closing the ownership connection) and closes its pool. Later calls fail
// with CONFIG_INVALID. Shutdown is idempotent.
func (b *Backend) Shutdown() error {
	b.mu.Lock()
	st := b.st
	if b.shut || st == nil {
		b.shut = true
		b.mu.Unlock()
		return nil
	}
	b.shut = true
	for _, hd := range b.handles.Drain() {
		hd.closed = true
	}
	b.claims, b.pending = handles.NewClaims[handle](), handles.NewClaims[handle]()
	lis := b.lis
	b.mu.Unlock()
	if lis != nil {
		lis.close()
	}
	b.own.close()
	st.close()
	return nil
}

// store returns b's database, or CONFIG_INVALID before Configure and after
// Shutdown.
func (b *Backend) store() (*store, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.shut:
		return nil, configErr("this postgres backend was shut down")
	case b.st == nil:
		return nil, configErr("this postgres backend is not configured; Configure it with its dsn first")
	}
	return b.st, nil
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
