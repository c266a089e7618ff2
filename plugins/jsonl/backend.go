package jsonl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/flockclaim"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
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
type Backend struct {
	fs      vfs.FS
	now     func() int64 // epoch ms, for torn-<ms>.bin
	handles *handles.Table[handle]
	claims  *handles.Claims[handle] // the in-process claim table: session id → pending create or write handle

	mu         sync.Mutex
	cfg        Config
	configured bool
	enc        *zstd.Encoder // made on first use for cfg.ZstdLevel
	dec        *zstd.Decoder // made on first use
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
	return &Backend{fs: o.fs, now: o.now, handles: handles.NewTable[handle](op), claims: handles.NewClaims[handle]()}
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
	// kept is the decoded content of ix.frames[:len(kept)] as the open's
	// scan checked it, so that the first Read serves those frames without
	// reading and decoding them again; that Read (whatever its range), a
	// rescan or Close drops it.
	kept [][]byte
}

// retainDecoded bounds hd.kept: an open keeps at most this many decoded
// bytes of the frames it scanned.
const retainDecoded = 128 << 20

// Describe reports the name "jsonl", format version 1 and the configured
// compression ("" before Configure).
func (b *Backend) Describe(ctx context.Context) (sdk.Description, error) {
	if err := handles.Ended(ctx, op, "describe"); err != nil {
		return sdk.Description{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return sdk.Description{Name: Name, FormatVersion: sdk.FormatVersion, Compression: b.cfg.Compression}, nil
}

// Create claims h.ID and returns its write handle. Before it returns it
// takes the write claim every process respects: the root and session
// directories are created (0700, parents fsynced) and session.lock is
// flocked, so until the handle closes a Create of the id in any process is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The session
// materializes, header and first batch in one new file, at the first
// non-empty Append or at Flush; until then no log exists, and other
// processes do not see the session.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "create"); err != nil {
		return sdk.Opened{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.Opened{}, err
	}
	h, _, err = handles.CheckCreate(op, h, "")
	if err != nil {
		return sdk.Opened{}, err
	}
	hd := b.newHandle(h.ID, true, filepath.Join(cfg.Root, EncodeID(h.ID)))
	hd.pending, hd.header, hd.zst = true, h, cfg.Compression == CompressionZstd
	if c, ok := b.claims.Take(h.ID, hd); !ok {
		b.mu.Lock()
		pending := c.pending
		b.mu.Unlock()
		if pending {
			return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
		}
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored and open for writing in this instance")
	}
	if err := b.claimNew(hd, cfg); err != nil {
		b.release(hd)
		return sdk.Opened{}, err
	}
	b.handles.Put(hd.name, hd)
	return sdk.Opened{Handle: hd.name, Header: h}, nil
}

// claimNew takes the cross-process claim for the create hd, which holds
// the in-process claim: the session directory (made when missing), the
// flock on its session.lock, and, under the lock, the check that no log is
// stored there. hd holds the lock file afterwards.
func (b *Backend) claimNew(hd *handle, cfg Config) error {
	if err := b.checkSessionDir(hd.id, hd.dir); err != nil && !errors.Is(err, sdk.ErrSessionNotFound) {
		return err
	}
	// A log stored already answers without the lock: taking it, even for
	// a moment, would refuse a write open of that session elsewhere.
	if _, _, err := b.findLog(hd.id, hd.dir, cfg); err == nil || errors.Is(err, sdk.ErrCompressionMismatch) || errors.Is(err, sdk.ErrCorruptLog) {
		return handles.AlreadyExists(op, hd.id, "it is stored in "+hd.dir)
	}
	if err := b.mkdirs(cfg.Root, hd.dir); err != nil {
		return handles.IOError(op, hd.id, "creating "+hd.dir, err)
	}
	lock, err := b.lockSession(hd.id, hd.dir)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return handles.AlreadyExists(op, hd.id, "another process holds "+filepath.Join(hd.dir, lockName)+": it has it open for writing or is creating it")
		}
		return handles.IOError(op, hd.id, "taking the write lock", err)
	}
	if _, _, err := b.findLog(hd.id, hd.dir, cfg); err == nil || !errors.Is(err, sdk.ErrSessionNotFound) {
		lock.Unlock()
		lock.Close()
		if err == nil || errors.Is(err, sdk.ErrCompressionMismatch) || errors.Is(err, sdk.ErrCorruptLog) {
			return handles.AlreadyExists(op, hd.id, "it is stored in "+hd.dir)
		}
		return err
	}
	hd.mu.Lock()
	hd.lock = lock
	hd.mu.Unlock()
	return nil
}

// Open opens a stored session (docs/plugins.md, docs/storage.md): the format gate
// and identity check on the header first; then, for AccessWrite, the claim
// (the in-process table, then flock on session.lock; ALREADY_OWNED when
// held), stale temp files removed, and a torn tail cut into
// torn-<ms>.bin. AccessRead takes no claim and changes nothing; its Torn
// reports what a write open would cut, with no artifact.
func (b *Backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "open"); err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckOpen(op, id, access); err != nil {
		return sdk.Opened{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.Opened{}, err
	}
	dir := filepath.Join(cfg.Root, EncodeID(id))
	write := access == sdk.AccessWrite
	hd := b.newHandle(id, write, dir)

	// The gate and the identity check come before the claim, so a refused
	// open never claims anything.
	if _, err := b.statHeader(id, dir, cfg); err != nil {
		if write && errors.Is(err, sdk.ErrSessionNotFound) {
			if owned := b.createdElsewhere(id, dir); owned != nil {
				return sdk.Opened{}, owned
			}
		}
		return sdk.Opened{}, err
	}
	if write {
		if err := b.claim(hd); err != nil {
			return sdk.Opened{}, err
		}
	}
	o, err := b.openLog(hd, cfg)
	if err != nil {
		b.release(hd)
		return sdk.Opened{}, err
	}
	b.handles.Put(hd.name, hd)
	return o, nil
}

// createdElsewhere returns ALREADY_OWNED when id, which has no log, is
// claimed by a create that is not stored yet: a pending create of this
// instance, or a flock held on its session.lock by another. It creates
// nothing: without a lock file nobody holds the claim.
func (b *Backend) createdElsewhere(id, dir string) error {
	if b.claims.Holder(id) != nil {
		return handles.AlreadyOwned(op, id, "a create handle of this instance holds it, and it is not stored yet")
	}
	path := filepath.Join(dir, lockName)
	lock, err := b.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer lock.Close()
	// Shared: a look must not pass for a claim (flockclaim).
	if err := flockclaim.Take(lock.LockShared, nil); errors.Is(err, syscall.EWOULDBLOCK) {
		return handles.AlreadyOwned(op, id, "another process holds "+path+" and is creating it (it is not stored yet)")
	}
	return nil
}

// claim takes the write claim for hd: the in-process table first, then
// flock on session.lock. hd holds the lock file afterwards.
func (b *Backend) claim(hd *handle) error {
	if _, ok := b.claims.Take(hd.id, hd); !ok {
		return handles.AlreadyOwned(op, hd.id, "another handle of this instance holds it")
	}
	lock, err := b.lockSession(hd.id, hd.dir)
	if err != nil {
		b.claims.Release(hd.id, hd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return handles.AlreadyOwned(op, hd.id, "another process holds "+filepath.Join(hd.dir, lockName))
		}
		return handles.IOError(op, hd.id, "taking the write lock", err)
	}
	hd.lock = lock
	return nil
}

// lockSession opens session.lock in dir (creating it) and flocks it
// exclusively. It fails with EWOULDBLOCK only when another open file holds
// it exclusively beyond an instant, never for a write open's shared look
// at whether a create is pending (flockclaim).
func (b *Backend) lockSession(id, dir string) (vfs.File, error) {
	path := filepath.Join(dir, lockName)
	lock, err := b.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	onlyShared := func() bool {
		f, err := b.fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		return f.LockShared() == nil
	}
	if err := flockclaim.Take(lock.Lock, onlyShared); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// release undoes a failed open or materialization: the files hd holds and
// its claim.
func (b *Backend) release(hd *handle) {
	hd.mu.Lock()
	hd.closeFiles()
	hd.mu.Unlock()
	b.claims.Release(hd.id, hd)
}

// closeFiles closes every file hd holds; hd.mu is held.
func (hd *handle) closeFiles() {
	if hd.f != nil {
		hd.f.Close()
		hd.f = nil
	}
	for _, f := range hd.retired {
		f.Close()
	}
	hd.retired = nil
	if hd.lock != nil {
		hd.lock.Unlock()
		hd.lock.Close()
		hd.lock = nil
	}
}

// openLog opens hd's log, scans it and, for a write handle (which holds
// the lock), removes stale temp files and cuts a torn tail.
func (b *Backend) openLog(hd *handle, cfg Config) (sdk.Opened, error) {
	path, zst, err := b.findLog(hd.id, hd.dir, cfg)
	if err != nil {
		return sdk.Opened{}, err
	}
	flag := os.O_RDONLY
	if hd.write {
		flag = os.O_RDWR
		b.removeStaleTemps(hd.dir)
	}
	f, err := b.fs.OpenFile(path, flag, 0)
	if err != nil {
		return sdk.Opened{}, handles.IOError(op, hd.id, "opening "+path, err)
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	hd.f, hd.path, hd.zst = f, path, zst
	dec, err := b.decoder(zst)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd.chk.dec = dec
	h, data, err := hd.scanAll(retainDecoded)
	if err != nil {
		return sdk.Opened{}, err
	}
	var torn sdk.Torn
	if cut := int64(len(data)) - hd.ix.end; cut > 0 {
		torn = sdk.Torn{Bytes: cut, FromSeq: sdk.Seq(hd.ix.next)}
		if hd.write {
			if torn.Artifact, err = b.cutTail(hd, data[hd.ix.end:]); err != nil {
				return sdk.Opened{}, err
			}
		}
	}
	if hd.write {
		if hd.info, err = f.Stat(); err != nil {
			return sdk.Opened{}, handles.IOError(op, hd.id, "fstat "+path, err)
		}
	}
	hd.floor = hd.ix.next
	rev := revision(hd.info)
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: sdk.Offset(hd.ix.next), Revision: rev, Torn: torn}, nil
}

// scanAll reads hd.f from offset 0 to its current size and scans it,
// replacing hd.ix; hd.info becomes what was scanned, and hd.kept up to
// retain bytes of the decoded frames (zstd). hd.mu is held.
func (hd *handle) scanAll(retain int64) (sdk.Header, []byte, error) {
	hd.kept = nil
	fi, err := hd.f.Stat()
	if err != nil {
		return sdk.Header{}, nil, handles.IOError(op, hd.id, "fstat "+hd.path, err)
	}
	data := make([]byte, fi.Size)
	if err := readFull(hd.f, data, 0); err != nil {
		return sdk.Header{}, nil, handles.IOError(op, hd.id, "reading "+hd.path, err)
	}
	hd.chk.retain, hd.chk.scanning = retain, true
	h, ix, err := hd.chk.scanLog(data, hd.zst, hd.id, hd.path)
	kept := hd.chk.kept
	hd.chk.retain, hd.chk.kept, hd.chk.keptBytes = 0, nil, 0
	hd.chk.endScan()
	if err != nil {
		return sdk.Header{}, nil, err
	}
	hd.ix, hd.info, hd.kept = *ix, fi, kept
	return h, data, nil
}

// cutTail keeps the torn bytes in torn-<ms>.bin (fsynced, with its
// directory entry), then truncates the log to the committed end and
// fsyncs it. It returns the artifact's path. A failure before the
// truncate leaves no artifact. hd.mu is held.
func (b *Backend) cutTail(hd *handle, torn []byte) (string, error) {
	ms := b.now()
	var art vfs.File
	var name string
	for range 1000 {
		name = filepath.Join(hd.dir, "torn-"+strconv.FormatInt(ms, 10)+".bin")
		f, err := b.fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if err == nil {
			art = f
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", handles.IOError(op, hd.id, "creating the torn-tail artifact "+name, err)
		}
		ms++
	}
	if art == nil {
		return "", handles.IOError(op, hd.id, "creating a torn-tail artifact in "+hd.dir, fs.ErrExist)
	}
	// Until the truncate succeeds nothing is cut and the log still holds
	// the torn bytes, so a failure before it removes the artifact (best
	// effort): a full disk must not leave an empty or partial copy behind.
	_, err := art.WriteAt(torn, 0)
	if err == nil {
		err = art.Sync()
	}
	if cerr := art.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = b.fs.SyncDir(hd.dir)
	}
	if err != nil {
		_ = b.fs.Remove(name)
		return "", handles.IOError(op, hd.id, "keeping the torn tail in "+name+" (removed again; nothing was cut)", err)
	}
	if err := hd.f.Truncate(hd.ix.end); err != nil {
		_ = b.fs.Remove(name)
		return "", handles.IOError(op, hd.id, "cutting the torn tail of "+hd.path+" (nothing was cut)", err)
	}
	if err := hd.f.Sync(); err != nil {
		return "", handles.IOError(op, hd.id, "fdatasync "+hd.path+" after cutting its torn tail", err)
	}
	return name, nil
}

// removeStaleTemps removes the temp files a crashed materialization left
// (best effort); the caller holds the session lock.
func (b *Backend) removeStaleTemps(dir string) {
	names, err := b.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, "events.") && strings.HasSuffix(n, ".tmp") {
			_ = b.fs.Remove(filepath.Join(dir, n))
		}
	}
}

// Append stores events at firstSeq onwards under compare-and-set, all or
// nothing (docs/storage.md): one write (one frame for zstd) and one fdatasync;
// on failure the file is cut back to its previous size and fsynced, and
// the call is IO_ERROR; when that rollback fails too the handle is broken
// and this and every later call is HANDLE_BROKEN. The first non-empty
// Append of a create materializes the session. An empty batch is a
// compare-and-set probe that stores nothing.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "append"); err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if err := hd.usable(); err != nil {
		return sdk.Durable{}, err
	}
	if !hd.write {
		return sdk.Durable{}, handles.ReadOnly(op, hd.id, handle)
	}
	if err := handles.CheckAppend(hd.id, firstSeq); err != nil {
		return sdk.Durable{}, err
	}
	payload, err := b.checkAndEncode(hd, firstSeq, events)
	if err != nil {
		return sdk.Durable{}, err
	}
	if len(events) == 0 {
		return hd.durable(), nil
	}
	if hd.pending {
		if err := b.materialize(hd, payload, events); err != nil {
			return sdk.Durable{}, err
		}
	} else if err := hd.writeBatch(payload, len(events), events); err != nil {
		return sdk.Durable{}, err
	}
	hd.floor = hd.ix.next
	if cap(hd.buf) > keepScratch || cap(hd.frame) > keepScratch {
		hd.buf, hd.frame = nil, nil // do not pin one huge batch's size
	}
	return hd.durable(), nil
}

// parallelEncodeMin is the batch size from which a zstd batch's envelopes
// are checked on another goroutine while it is compressed.
const parallelEncodeMin = 64 << 10

// checkAndEncode checks an Append batch (every element a canonical
// envelope with the next seq, then the compare-and-set on the stored next
// seq) and renders it as lines, and for zstd as one frame; the payload is
// one of hd's scratch buffers. A large zstd batch is compressed while it is
// checked; a bad batch still fails with the check's error and nothing is
// kept. hd.mu is held.
func (b *Backend) checkAndEncode(hd *handle, firstSeq sdk.Seq, events [][]byte) ([]byte, error) {
	n := 0
	for _, ev := range events {
		n += len(ev) + 1
	}
	buf := slices.Grow(hd.buf[:0], n)
	for _, ev := range events {
		buf = append(buf, ev...)
		buf = append(buf, '\n')
	}
	hd.buf = buf
	if !hd.zst || len(events) == 0 {
		return buf, hd.checkCAS(firstSeq, hd.chk.checkBatch(firstSeq, events))
	}
	enc, err := b.encoder()
	if err != nil {
		return nil, err
	}
	if n < parallelEncodeMin || runtime.GOMAXPROCS(0) < 2 {
		if err := hd.checkCAS(firstSeq, hd.chk.checkBatch(firstSeq, events)); err != nil {
			return nil, err
		}
		hd.frame = enc.EncodeAll(buf, hd.frame[:0])
		return hd.frame, nil
	}
	// Compression is the longer task, so it starts at once on this
	// goroutine, and a helper starts checking; the helper may take a while
	// to be scheduled, so this goroutine checks what is left once the frame
	// is done.
	check := newSharedCheck(events, int64(firstSeq))
	go check.run(&hd.helper)
	frame := enc.EncodeAll(buf, hd.frame[:0])
	check.run(&hd.chk)
	var checkErr *sdk.Error
	if f, ok := check.result(); !ok {
		checkErr = batchFault(firstSeq, f)
	}
	if err := hd.checkCAS(firstSeq, checkErr); err != nil {
		return nil, err
	}
	hd.frame = frame
	return frame, nil
}

// checkCAS returns the batch check's error, else SEQ_CONFLICT when firstSeq
// is not the stored next seq, else nil. hd.mu is held.
func (hd *handle) checkCAS(firstSeq sdk.Seq, check *sdk.Error) error {
	if check != nil {
		return check.WithSession(hd.id)
	}
	if int64(firstSeq) != hd.ix.next {
		return handles.SeqConflict(op, hd.id, int64(firstSeq), hd.ix.next)
	}
	return nil
}

// writeBatch appends payload at the committed end, fdatasyncs, and
// extends the index; on failure it rolls back (docs/storage.md). hd.mu is held.
func (hd *handle) writeBatch(payload []byte, count int, events [][]byte) error {
	off := hd.ix.end
	_, err := hd.f.WriteAt(payload, off)
	if err == nil {
		err = hd.f.Sync()
	}
	if err != nil {
		rb := hd.f.Truncate(off)
		if rb == nil {
			rb = hd.f.Sync()
		}
		if rb != nil {
			hd.broken = errors.Join(err, rb)
			return hd.brokenError()
		}
		return &sdk.Error{Code: sdk.CodeIOError, Op: op, SessionID: hd.id,
			Detail: fmt.Sprintf("appending %d events at seq %d to %s failed and was rolled back to %d bytes; nothing of the batch is stored", count, hd.ix.next, hd.path, off), Err: err}
	}
	hd.ix.addBatch(off, payload, events, hd.zst)
	fi, err := hd.f.Stat()
	if err != nil {
		// The batch is durable; only its revision is unknown. The host
		// treats the failure as ambiguous (docs/plugins.md) and re-reads.
		return handles.IOError(op, hd.id, "fstat "+hd.path+" after a durable append", err)
	}
	hd.info = fi
	return nil
}

// addBatch records a batch written at off: its lines, or its frame.
func (ix *index) addBatch(off int64, payload []byte, events [][]byte, zst bool) {
	if zst {
		ix.frames = append(ix.frames, frameRef{off: off, size: int64(len(payload)), first: ix.next, count: int64(len(events))})
	} else {
		p := off
		for _, ev := range events {
			ix.starts = append(ix.starts, p)
			p += int64(len(ev)) + 1
		}
	}
	ix.next += int64(len(events))
	ix.end = off + int64(len(payload))
}

// materialize stores a pending create, whose directory and lock Create
// made: a temp file created O_EXCL with the header unit and
// the first batch, fdatasync, a link to the final name that never
// overwrites, an fsync of the directory, and the temp name removed. hd.mu
// is held. On failure nothing is stored, hd stays pending (and keeps its
// claim) and may retry.
func (b *Backend) materialize(hd *handle, batch []byte, events [][]byte) error {
	dec, err := b.decoder(hd.zst)
	if err != nil {
		return err
	}
	b.removeStaleTemps(hd.dir)

	hdr := headerjson.Encode(hd.header)
	hdr = append(hdr, '\n')
	final := filepath.Join(hd.dir, logName(1, hd.zst))
	unit := hdr
	if hd.zst {
		enc, err := b.encoder()
		if err != nil {
			return err
		}
		unit = enc.EncodeAll(hdr, nil)
	}
	content := make([]byte, 0, len(unit)+len(batch))
	content = append(append(content, unit...), batch...)

	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := final + "." + hex.EncodeToString(r[:]) + ".tmp"
	f, err := b.fs.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return handles.IOError(op, hd.id, "creating "+tmp, err)
	}
	fail := func(what string, err error) error {
		f.Close()
		_ = b.fs.Remove(tmp)
		return handles.IOError(op, hd.id, what, err)
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return fail("writing "+tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fail("fdatasync "+tmp, err)
	}
	if err := b.fs.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			f.Close()
			_ = b.fs.Remove(tmp)
			return handles.AlreadyExists(op, hd.id, final+" appeared meanwhile; it is never overwritten")
		}
		return fail("linking "+final, err)
	}
	if err := b.fs.SyncDir(hd.dir); err != nil {
		// The link may not be durable: undo it, so that success means
		// durable and failure means nothing stored.
		_ = b.fs.Remove(final)
		return fail("fsync of "+hd.dir, err)
	}
	_ = b.fs.Remove(tmp) // best effort; a stale temp is removed at the next write open
	// Go on through the final name, so that the file's name (in errors,
	// and for faultfs rules) is the log's; the temp descriptor is the same
	// file and stays the fallback.
	if f2, err := b.fs.OpenFile(final, os.O_RDWR, 0); err == nil {
		f.Close()
		f = f2
	}

	// Stored: from here on the handle owns the log.
	hd.f, hd.path, hd.chk.dec = f, final, dec
	b.mu.Lock() // pending is read under either lock, so it changes under both
	hd.pending = false
	b.mu.Unlock()
	hd.ix = index{hdrEnd: int64(len(unit)), end: int64(len(unit))}
	if len(events) > 0 {
		hd.ix.addBatch(int64(len(unit)), batch, events, hd.zst)
	}
	if hd.info, err = f.Stat(); err != nil {
		// Durable, but its revision is unknown: an ambiguous failure the
		// host resolves by reading back (docs/plugins.md).
		return handles.IOError(op, hd.id, "fstat "+final+" after storing it", err)
	}
	return nil
}

// mkdirs creates root (and missing ancestors) and the session directory
// dir, 0700, fsyncing the parent of each directory it creates.
func (b *Backend) mkdirs(root, dir string) error {
	var missing []string
	for p := root; ; p = filepath.Dir(p) {
		_, err := b.fs.Stat(p)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	slices.Reverse(missing)
	if _, err := b.fs.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		missing = append(missing, dir)
	} else if err != nil {
		return err
	}
	for _, p := range missing {
		if err := b.fs.Mkdir(p, dirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := b.fs.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. A read takes the
// log's size at its start and reads only below it; a read handle rescans
// from 0 only when the file was replaced or cut below what it had seen
// (LOG_SHRANK when that leaves fewer events than it showed). Chunks hold
// at most 512 events or about 1 MiB and are fresh buffers fn may keep.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return err
	}
	hd.mu.Lock()
	if err := hd.usable(); err != nil {
		hd.mu.Unlock()
		return err
	}
	if !hd.write && !hd.pending {
		if err := b.refresh(hd); err != nil {
			hd.mu.Unlock()
			return err
		}
	}
	if hd.ix.next < hd.floor {
		e := sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; %s now holds %d", hd.floor, hd.path, hd.ix.next)
		e.SessionID = hd.id
		hd.mu.Unlock()
		return e
	}
	hd.floor = hd.ix.next
	ix, f, zst, path, kept := hd.ix.snapshot(), hd.f, hd.zst, hd.path, hd.kept
	hd.kept = nil
	hd.mu.Unlock()

	end := handles.ReadEnd(offset, length, ix.next)
	if int64(offset) >= end {
		return nil
	}
	r := reader{ctx: ctx, id: hd.id, path: path, f: f, ix: &ix, fn: fn}
	if zst {
		dec, err := b.decoder(true)
		if err != nil {
			return err
		}
		r.dec, r.kept = dec, kept
		return r.frames(int64(offset), end)
	}
	return r.lines(int64(offset), end)
}

// refresh brings a read handle's index up to the log's current size
// (docs/storage.md): nothing to do while the file is unchanged; a scan of the
// new bytes from the committed end when it grew; a full rescan when it was
// replaced (dev/ino) or cut below the committed end. hd.mu is held.
func (b *Backend) refresh(hd *handle) error {
	fi, err := b.fs.Stat(hd.path)
	if err != nil {
		return handles.IOError(op, hd.id, "stat "+hd.path, err)
	}
	switch {
	case fi == hd.info && hd.ix.end == fi.Size:
		return nil // unchanged, and scanned to its end
	case fi.Dev != hd.info.Dev || fi.Ino != hd.info.Ino || fi.Size < hd.ix.end:
		f, err := b.fs.OpenFile(hd.path, os.O_RDONLY, 0)
		if err != nil {
			return handles.IOError(op, hd.id, "reopening "+hd.path, err)
		}
		hd.retired = append(hd.retired, hd.f)
		hd.f = f
		if _, _, err := hd.scanAll(0); err != nil {
			return err
		}
	default:
		data := make([]byte, fi.Size-hd.ix.end)
		if err := readFull(hd.f, data, hd.ix.end); err != nil {
			return handles.IOError(op, hd.id, "reading "+hd.path, err)
		}
		ix := hd.ix // a scan only appends, so the published elements stay
		var d *damage
		if hd.zst {
			d = hd.chk.scanFrames(data, ix.end, &ix)
		} else {
			d = hd.chk.scanLines(data, ix.end, &ix)
		}
		if d != nil {
			return d.error(hd.id, hd.path)
		}
		hd.ix, hd.info = ix, fi
	}
	return nil
}

// reader emits the chunks of one Read without holding any lock: it reads
// only committed bytes, which are never written again.
type reader struct {
	ctx  context.Context
	id   string
	path string
	f    vfs.File
	ix   *index
	dec  *zstd.Decoder
	kept [][]byte // the decoded content of ix.frames[:len(kept)], owned by this read
	fn   func([][]byte) error
}

func (r *reader) emit(chunk [][]byte) error {
	if err := handles.Ended(r.ctx, op, "read"); err != nil {
		return err
	}
	return r.fn(chunk)
}

// lines emits events [from, to) of a plain log.
func (r *reader) lines(from, to int64) error {
	for i := from; i < to; {
		j := i + 1
		for j < to && j-i < readChunkEvents && r.ix.lineEnd(j)+1-r.ix.starts[i] <= readChunkBytes {
			j++
		}
		base := r.ix.starts[i]
		buf := make([]byte, r.ix.lineEnd(j-1)+1-base)
		if err := readFull(r.f, buf, base); err != nil {
			return handles.IOError(op, r.id, "reading "+r.path, err)
		}
		chunk := make([][]byte, 0, j-i)
		for k := i; k < j; k++ {
			s, e := r.ix.starts[k]-base, r.ix.lineEnd(k)-base
			if buf[e] != '\n' {
				return corruptAt(r.id, r.path, fmt.Sprintf("line %d changed after it was read (no newline at byte offset %d)", k+2, r.ix.lineEnd(k)))
			}
			chunk = append(chunk, buf[s:e:e])
		}
		if err := r.emit(chunk); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// frames emits events [from, to) of a zstd log, decoding the frames that
// hold them.
func (r *reader) frames(from, to int64) error {
	fi, _ := slices.BinarySearchFunc(r.ix.frames, from, func(f frameRef, seq int64) int {
		switch {
		case f.first+f.count <= seq:
			return -1
		case f.first > seq:
			return 1
		}
		return 0
	})
	var chunk [][]byte
	var cbuf []byte
	var raw, decoded []byte
	var nbytes int // bytes of the lines in chunk
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		c := chunk
		chunk, cbuf, nbytes = nil, nil, 0
		return r.emit(c)
	}
	for seq := from; seq < to; fi++ {
		fr := r.ix.frames[fi]
		// A kept frame's content was checked by the scan and belongs to
		// this read alone, so its lines go out as views of it; any other
		// frame is decoded into a reused buffer and its lines copied.
		var rest []byte
		owned := fi < len(r.kept)
		if owned {
			rest = r.kept[fi]
			r.kept[fi] = nil
		} else {
			raw = slices.Grow(raw[:0], int(fr.size))[:fr.size]
			if err := readFull(r.f, raw, fr.off); err != nil {
				return handles.IOError(op, r.id, "reading "+r.path, err)
			}
			var err error
			decoded, err = r.dec.DecodeAll(raw, decoded[:0])
			if err != nil {
				return corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: the frame no longer decodes: %v", fr.off, err))
			}
			rest = decoded
		}
		for k := fr.first; k < fr.first+fr.count && seq < to; k++ {
			nl := indexNL(rest)
			if nl < 0 {
				return corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: the frame changed after it was read", fr.off))
			}
			line := rest[:nl:nl]
			rest = rest[nl+1:]
			if k < seq {
				continue
			}
			if len(chunk) > 0 && (len(chunk) >= readChunkEvents || nbytes+len(line) > readChunkBytes) {
				if err := flush(); err != nil {
					return err
				}
			}
			nbytes += len(line)
			seq++
			if owned {
				chunk = append(chunk, line)
				continue
			}
			if cbuf == nil {
				cbuf = make([]byte, 0, min(readChunkBytes, max(len(line), 64<<10)))
			}
			if cap(cbuf)-len(cbuf) < len(line) {
				// A new backing array; the views already taken keep theirs.
				cbuf = make([]byte, 0, max(len(line), 2*cap(cbuf)))
			}
			start := len(cbuf)
			cbuf = append(cbuf, line...)
			chunk = append(chunk, cbuf[start:len(cbuf):len(cbuf)])
		}
	}
	return flush()
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// Flush materializes a pending create and reports the stored next seq and
// revision. Every acknowledged Append is already durable, so there is
// nothing else to sync. On a read handle it reports what the log holds now.
func (b *Backend) Flush(ctx context.Context, handle string) (sdk.Durable, error) {
	if err := handles.Ended(ctx, op, "flush"); err != nil {
		return sdk.Durable{}, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if err := hd.usable(); err != nil {
		return sdk.Durable{}, err
	}
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
	hd.kept = nil
	hd.closeFiles()
	hd.mu.Unlock()
	b.claims.Release(hd.id, hd)
	return nil
}

// Stat describes a stored session from its header and the file's metadata,
// without reading events: EventCount is -1 (unknown; counting would mean
// reading every event) and SizeBytes is the log's file size.
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := handles.Ended(ctx, op, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	hs, err := b.statHeader(id, filepath.Join(cfg.Root, EncodeID(id)), cfg)
	if err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: hs.header, Revision: revision(hs.info), FormatVersion: hs.header.FormatVersion, EventCount: -1, SizeBytes: hs.info.Size}, nil
}

// storedHeader is a session's header and its log file's metadata.
type storedHeader struct {
	header sdk.Header
	path   string
	info   vfs.FileInfo
}

// statHeader finds id's log and decodes its header unit only (the first
// line, or the first frame): the format gate, identity check and header
// shape.
func (b *Backend) statHeader(id, dir string, cfg Config) (storedHeader, error) {
	path, zst, err := b.findLog(id, dir, cfg)
	if err != nil {
		return storedHeader{}, err
	}
	f, err := b.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return storedHeader{}, handles.NotFound(op, id)
		}
		return storedHeader{}, handles.IOError(op, id, "opening "+path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return storedHeader{}, handles.IOError(op, id, "fstat "+path, err)
	}
	chk := checker{}
	if chk.dec, err = b.decoder(zst); err != nil {
		return storedHeader{}, err
	}
	// Read a little, and more only while the header unit is incomplete.
	n := min(fi.Size, 4096)
	for {
		data := make([]byte, n)
		if err := readFull(f, data, 0); err != nil {
			return storedHeader{}, handles.IOError(op, id, "reading "+path, err)
		}
		line, _, st, reason := chk.headerUnit(data, zst)
		if st == unitIncomplete && n < fi.Size {
			n = min(fi.Size, 4*n)
			continue
		}
		if st != unitGood {
			e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s: %s: %s", path, firstUnit(zst), reason)
			e.SessionID = id
			return storedHeader{}, e
		}
		h, err := headerjson.Decode(line, id, path)
		if err != nil {
			return storedHeader{}, err
		}
		return storedHeader{header: h, path: path, info: fi}, nil
	}
}

// List calls fn, in id order, for every stored session under the root and
// every unmaterialized create of this instance, reading only headers. A
// session that cannot be read yields an entry with Err. fn runs without
// any lock held; an error from fn ends the listing and is returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	cfg, err := b.config()
	if err != nil {
		return err
	}
	names, err := b.fs.ReadDir(cfg.Root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return handles.IOError(op, "", "listing "+cfg.Root, err)
	}
	type item struct {
		id      string
		pending *sdk.Header
	}
	var items []item
	seen := map[string]bool{}
	for _, name := range names {
		id, ok := DecodeID(name)
		if !ok || sdk.ValidateSessionID(id) != nil {
			continue // not a session directory
		}
		items = append(items, item{id: id})
		seen[id] = true
	}
	b.mu.Lock() // hd.pending changes under b.mu
	pending := b.claims.Pending(func(id string, hd *handle) (sdk.Header, bool) { return hd.header, hd.pending && !seen[id] })
	b.mu.Unlock()
	for _, e := range pending {
		items = append(items, item{id: e.ID, pending: &e.Header})
	}
	slices.SortFunc(items, func(x, y item) int { return strings.Compare(x.id, y.id) })
	for _, it := range items {
		if err := handles.Ended(ctx, op, "list"); err != nil {
			return err
		}
		e := sdk.ListEntry{ID: it.id}
		if it.pending != nil {
			e.Header = *it.pending
		} else {
			hs, err := b.statHeader(it.id, filepath.Join(cfg.Root, EncodeID(it.id)), cfg)
			switch {
			case errors.Is(err, sdk.ErrSessionNotFound):
				if h, ok := b.pendingHeader(it.id); ok {
					e.Header = h // created here; another process made its directory
				} else {
					continue // a directory with no log: never materialized
				}
			case err != nil:
				e.Err = err
			default:
				e.Header, e.Revision = hs.header, revision(hs.info)
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (b *Backend) pendingHeader(id string) (sdk.Header, bool) {
	hd := b.claims.Holder(id)
	if hd == nil {
		return sdk.Header{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return hd.header, hd.pending
}

// findLog selects a session's log in dir (docs/storage.md, docs/format.md): the highest
// generation N of events.v<N>.jsonl[.zst]. Missing → SESSION_NOT_FOUND;
// both suffixes in that generation → CORRUPT_LOG; the other suffix than
// configured → COMPRESSION_MISMATCH. Temp files never count.
func (b *Backend) findLog(id, dir string, cfg Config) (path string, zst bool, err error) {
	if err := b.checkSessionDir(id, dir); err != nil {
		return "", false, err
	}
	names, err := b.fs.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", false, handles.NotFound(op, id)
		}
		return "", false, handles.IOError(op, id, "listing "+dir, err)
	}
	best, plain, comp := 0, false, false
	for _, n := range names {
		gen, isZst, ok := parseLogName(n)
		if !ok {
			continue
		}
		if gen > best {
			best, plain, comp = gen, false, false
		}
		if gen == best {
			if isZst {
				comp = true
			} else {
				plain = true
			}
		}
	}
	if best == 0 {
		return "", false, handles.NotFound(op, id)
	}
	want := cfg.Compression == CompressionZstd
	if plain && comp {
		e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s and %s both exist; a session has one log per generation, and nothing is converted implicitly",
			filepath.Join(dir, logName(best, false)), filepath.Join(dir, logName(best, true)))
		e.SessionID = id
		return "", false, e
	}
	if comp != want {
		found := CompressionNone
		if comp {
			found = CompressionZstd
		}
		p := filepath.Join(dir, logName(best, comp))
		e := sdk.Errorf(sdk.CodeCompressionMismatch, op, "%s is stored with compression %q but the backend is configured with %q; nothing is converted implicitly: configure compression = %q for it",
			p, found, cfg.Compression, found)
		e.SessionID = id
		return "", false, e
	}
	return filepath.Join(dir, logName(best, comp)), comp, nil
}

// checkSessionDir refuses a session directory that is a symbolic link:
// the backend makes every session directory itself, inside the root, so a
// link is not its layout, and following it would read and write outside
// the root. That is CORRUPT_LOG: final, as retrying cannot change it, and
// listed as a damaged entry rather than hidden. A missing directory is
// SESSION_NOT_FOUND.
func (b *Backend) checkSessionDir(id, dir string) error {
	fi, err := b.fs.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return handles.NotFound(op, id)
	case err != nil:
		return handles.IOError(op, id, "examining "+dir, err)
	case fi.Mode&fs.ModeSymlink != 0:
		return corruptAt(id, dir, "the session directory is a symbolic link; logbook never follows one out of its root: replace the link with the directory itself (mv its target there) or remove it")
	}
	return nil
}

// logName is events.v<gen>.jsonl, plus .zst for zstd.
func logName(gen int, zst bool) string {
	n := "events.v" + strconv.Itoa(gen) + ".jsonl"
	if zst {
		n += ".zst"
	}
	return n
}

// parseLogName recognizes events.v<N>.jsonl[.zst] with N a decimal ≥ 1
// without leading zeros.
func parseLogName(name string) (gen int, zst bool, ok bool) {
	rest, ok := strings.CutPrefix(name, "events.v")
	if !ok {
		return 0, false, false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 || rest[0] == '0' {
		return 0, false, false
	}
	gen, _ = strconv.Atoi(rest[:i])
	switch rest[i:] {
	case ".jsonl":
		return gen, false, true
	case ".jsonl.zst":
		return gen, true, true
	}
	return 0, false, false
}

// config returns the configuration, or CONFIG_INVALID before Configure.
func (b *Backend) config() (Config, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.configured {
		return Config{}, configInvalid(`the jsonl backend is not configured: its plugin block needs config { root = "<directory>" }`)
	}
	return b.cfg, nil
}

// encoder returns the shared zstd encoder (EncodeAll is safe for
// concurrent use), made on first use at the configured level with content
// checksums.
func (b *Backend) encoder() (*zstd.Encoder, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enc == nil {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstdLevels[b.cfg.ZstdLevel]),
			zstd.WithEncoderCRC(true),
			zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), 4)))
		if err != nil {
			return nil, handles.IOError(op, "", "making the zstd encoder", err)
		}
		b.enc = enc
	}
	return b.enc, nil
}

// decoder returns the shared zstd decoder (DecodeAll is safe for
// concurrent use), or nil for a plain log.
func (b *Backend) decoder(zst bool) (*zstd.Decoder, error) {
	if !zst {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dec == nil {
		dec, err := newDecoder()
		if err != nil {
			return nil, handles.IOError(op, "", "making the zstd decoder", err)
		}
		b.dec = dec
	}
	return b.dec, nil
}

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(min(runtime.GOMAXPROCS(0), 4)))
}

// newHandle makes a handle with a name never used by this instance; Put
// registers it once it is ready.
func (b *Backend) newHandle(id string, write bool, dir string) *handle {
	return &handle{name: b.handles.NewName(), id: id, write: write, dir: dir}
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

// readFull reads exactly len(p) bytes at off.
func readFull(f vfs.File, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := f.ReadAt(p, off)
		p, off = p[n:], off+int64(n)
		if len(p) == 0 {
			return nil
		}
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func corruptAt(id, path, detail string) error {
	e := sdk.Errorf(sdk.CodeCorruptLog, op, "%s: %s", path, detail)
	e.SessionID = id
	return e
}
