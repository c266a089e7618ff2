package jsonl

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

const (
	op = "jsonl"
	// A Read chunk ends after readChunkEvents events or once it holds
	// readChunkBytes bytes, whichever comes first (always ≥ 1 event).
	readChunkEvents = 512
	readChunkBytes  = 1 << 20

	lockName = "session.lock"
	dirPerm  = 0o700
	filePerm = 0o600
)

// Backend is the JSONL backend: an sdk.Persistence over one root directory
// (docs/storage.md). Every method is safe for concurrent use. Calls on one handle
// are serialized; calls on different handles and sessions run in parallel.
//
// The Backend New returns is the implicit tenant, whose sessions are the
// root's; Tenant returns the view of a named tenant (tenant.go), a
// Backend of its own over <root>/.tenants/<name> that shares the
// configuration, codecs and file system with it.
type Backend struct {
	*shared
	tenant  string                  // Header.Tenant of this view's sessions: "" for the implicit tenant
	handles *handles.Table[handle]  // this view's open handles: another view's are unknown here
	claims  *handles.Claims[handle] // the in-process claim table: session id → pending create or write handle
	// synced is set once the directories holding this named tenant's
	// directory were fsynced after it existed (syncTenantDir); Configure
	// clears it.
	synced atomic.Bool
}

// shared is what every tenant view of one backend has in common.
type shared struct {
	fs  vfs.FS
	now func() int64 // epoch ms, for torn-<ms>.bin

	mu         sync.Mutex
	cfg        Config
	configured bool
	enc        *zstd.Encoder       // made on first use for cfg.ZstdLevel
	fastEnc    *zstd.Encoder       // made on first use at the fastest level (CopyPrefix's split frames)
	dec        *zstd.Decoder       // made on first use
	base       *Backend            // the implicit tenant; never changes
	views      map[string]*Backend // the named tenants' views made so far, by name
}

// Option tunes New.
type Option func(*options)

type options struct {
	fs  vfs.FS
	now func() int64
}

// WithFS makes the backend reach its files through fsys instead of vfs.OS();
// tests pass a *faultfs.FS.
func WithFS(fsys vfs.FS) Option { return func(o *options) { o.fs = fsys } }

// WithClock sets the clock (epoch milliseconds) that names torn-<ms>.bin
// artifacts; default time.Now.
func WithClock(nowMillis func() int64) Option { return func(o *options) { o.now = nowMillis } }

// New returns a backend over cfg.Root. cfg is checked as ParseConfig checks
// it (CONFIG_INVALID), and an existing root must be a readable directory.
// Nothing is written until the first Create.
func New(cfg Config, opts ...Option) (*Backend, error) {
	o := options{fs: vfs.OS()}
	for _, opt := range opts {
		opt(&o)
	}
	c, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if err := checkRoot(o.fs, c.Root); err != nil {
		return nil, err
	}
	b := newBackend(o)
	b.cfg, b.configured = c, true
	return b, nil
}

// newBackend returns an unconfigured backend.
func newBackend(o options) *Backend {
	if o.fs == nil {
		o.fs = vfs.OS()
	}
	if o.now == nil {
		o.now = func() int64 { return time.Now().UnixMilli() }
	}
	sh := &shared{fs: o.fs, now: o.now, views: map[string]*Backend{}}
	sh.base = newView(sh, "")
	return sh.base
}

// newView returns the view of the tenant whose Header.Tenant is tenant.
func newView(sh *shared, tenant string) *Backend {
	return &Backend{shared: sh, tenant: tenant, handles: handles.NewTable[handle](op), claims: handles.NewClaims[handle]()}
}

// handle is one open handle. Its fields after mu are guarded by mu; name,
// id, write and dir never change.
type handle struct {
	name  string
	id    string
	write bool
	dir   string

	mu      sync.Mutex
	closed  bool
	pending bool         // a create not yet materialized; written under both mu and Backend.mu
	header  sdk.Header   // the create's header; never changes
	zst     bool         // the log is zstd
	path    string       // the events file
	f       vfs.File     // the events file, read-write for write handles
	lock    vfs.File     // session.lock, flocked (write handles once materialized or opened)
	info    vfs.FileInfo // the log as last seen: its revision, and for read handles what was scanned
	ix      index        // the committed prefix
	floor   int64        // most events this handle has shown (Read, Append)
	broken  error        // a failed rollback: every later call is HANDLE_BROKEN
	retired []vfs.File   // files of a replaced log, closed with the handle
	chk     checker      // guarded by mu
	helper  checker      // the Append check's helper goroutine's (sharedCheck); guarded by mu
	buf     []byte       // append scratch: the batch's lines
	frame   []byte       // append scratch: the batch's frame
	// opened is the log's committed bytes [0, ix.end) as the open read
	// them, so that a resume reads the file once: the first Read or
	// ReadFrames (whatever its range) takes them, a rescan or Close drops
	// them. nil when the log is larger than holdOpened.
	opened []byte
	// ck is the session's checkpoint as this handle last read it (the open
	// reads it with the log), its binding checked against the log's bytes:
	// nil when there was none or it did not match. ckInfo is the
	// checkpoint file's metadata then (zero when none was read), so that
	// ReadCheckpoint reads the file again only when it changed since.
	ck     *checkpointFile
	ckInfo vfs.FileInfo
}

// holdOpened bounds hd.opened: an open holds at most this many bytes of
// the log for the first read.
const holdOpened = 256 << 20

// Describe reports the name "jsonl", format version 1, the configured
// compression ("" before Configure) and 2 descriptors per session open
// for writing: its log file and its claim's lock file.
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion, Compression: b.cfg.Compression, DescriptorsPerSession: 2}, nil
}

// Flush materializes a pending create and reports the stored next seq and
// revision. Every acknowledged Append is already durable, so there is
// nothing else to sync. On a read handle it reports what the log holds now.
func (b *Backend) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	hd, err := b.lock(ctx, "flush", handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	defer hd.mu.Unlock()
	switch {
	case hd.pending:
		if err := b.materialize(hd, nil, nil); err != nil {
			return sdk.Durable{}, err
		}
	case hd.write:
		fi, err := hd.f.Stat()
		if err != nil {
			return sdk.Durable{}, handles.IOError(op, hd.id, "fstat "+hd.path, err)
		}
		hd.info = fi
	default:
		if err := b.refresh(hd); err != nil {
			return sdk.Durable{}, err
		}
	}
	d := hd.durable()
	return d, nil
}

// Close releases the handle: its files, its lock and its claim. It is
// idempotent, never deletes data, and runs even when ctx has ended. Closing
// an unmaterialized create abandons it.
func (b *Backend) Close(_ context.Context, handle string) error {
	hd, ok := b.handles.Remove(handle)
	if !ok {
		return nil
	}
	hd.mu.Lock()
	hd.closed = true
	hd.opened, hd.ck = nil, nil
	hd.closeFiles()
	hd.mu.Unlock()
	b.claims.Release(hd.id, hd)
	return nil
}

// config returns the configuration as this view sees it, its Root the
// view's tenant root (tenantRoot), or CONFIG_INVALID before Configure.
func (b *Backend) config() (Config, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.configured {
		return Config{}, configInvalid(`the jsonl backend is not configured: its plugin block needs config { root = "<directory>" }`)
	}
	c := b.cfg
	c.Root = tenantRoot(c.Root, b.tenant)
	return c, nil
}

// newHandle makes a handle with a name never used by this instance; Put
// registers it once it is ready.
func (b *Backend) newHandle(id string, write bool, dir string) *handle {
	hd := &handle{name: b.handles.NewName(), id: id, write: write, dir: dir}
	hd.chk.tenant = b.tenant
	return hd
}

// lock resolves the open handle name for a call (what) while ctx is live,
// and returns it with its mu held once it is usable.
func (b *Backend) lock(ctx context.Context, what, name string) (*handle, error) {
	if err := handles.Ended(ctx, op, what); err != nil {
		return nil, err
	}
	hd, err := b.handles.Get(name)
	if err != nil {
		return nil, err
	}
	hd.mu.Lock()
	if err := hd.usable(); err != nil {
		hd.mu.Unlock()
		return nil, err
	}
	return hd, nil
}

// usable refuses a handle closed meanwhile, or broken; hd.mu is held.
func (hd *handle) usable() error {
	if hd.closed {
		return sdk.Errorf(sdk.CodeHandleClosed, op, "handle %s is closed", strconv.Quote(hd.name)).WithSession(hd.id)
	}
	if hd.broken != nil {
		return hd.brokenError()
	}
	return nil
}

func (hd *handle) brokenError() error {
	return &sdk.Error{Code: sdk.CodeHandleBroken, Op: op, SessionID: hd.id,
		Detail: fmt.Sprintf("handle %s is broken: an append to %s failed and cutting it back to %d bytes failed too, so the file's tail is unknown; close the handle and open the session again (the open cuts the torn tail)", strconv.Quote(hd.name), hd.path, hd.ix.end),
		Err:    hd.broken}
}

// durable is hd's stored next seq and revision; hd.mu is held.
func (hd *handle) durable() sdk.Durable {
	if hd.pending {
		return sdk.Durable{}
	}
	return sdk.Durable{NextSeq: sdk.Offset(hd.ix.next), Revision: revision(hd.info)}
}

// revision is dev:ino:size:mtimeNs:ctimeNs (docs/storage.md).
func revision(fi vfs.FileInfo) string {
	return fmt.Sprintf("%d:%d:%d:%d:%d", fi.Dev, fi.Ino, fi.Size, fi.MtimeNs, fi.CtimeNs)
}

func corruptAt(id, path, detail string) error {
	e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s: %s", path, detail)
	e.SessionID = id
	return e
}
