// Command minimal-persistence is a complete logbook persistence plugin in one
// file, written to be read: it passes sdk/persistencetest and runs under the
// host as a plugin subprocess.
//
// A session is a file <root>/<hex(id)>.jsonl: the canonical header
// (sdk/headerjson), then one canonical envelope per line; root comes from the
// config block, {"root": "/absolute/dir"}. Appends are fsynced before they are
// acknowledged, all or nothing, and compare-and-set on the next seq (the
// number of stored events); a new session appears with its header and first
// batch or not at all; a session has one write handle at most (its claim).
//
// Left out for brevity: zstd; locking across processes (two plugin processes
// over one root could both write a session); checksums (damage inside a file
// goes unnoticed). An incomplete last line, left by a crash during an append,
// is never returned, and a write open cuts it off without keeping a copy.
// Calls read whole files, under one mutex: simple, not fast.
package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func main() {
	b := &backend{handles: map[string]*handle{}}
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info:         sdk.Info{Name: "minimal", Version: "0.1.0", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence:  b,
		Configurable: b, // the host calls Configure first, with the config block as JSON
	})
}

// backend implements sdk.Persistence and sdk.Configurable. The files are its
// only state besides the open handles.
type backend struct {
	mu      sync.Mutex
	root    string
	n       int                // handles made so far, so names are never reused
	handles map[string]*handle // the open handles by name
}

type handle struct {
	id      string
	write   bool        // an open write handle is its session's write claim
	pending *sdk.Header // a create's header, until its session is stored
}

// file is a session file as load reads it.
type file struct {
	header sdk.Header
	events [][]byte
	size   int64 // bytes up to the end of the last complete line
	torn   int64 // bytes after it: an incomplete last line
}

func (b *backend) Configure(_ context.Context, config []byte) error {
	var c struct{ Root string }
	if err := json.Unmarshal(config, &c); err != nil || !filepath.IsAbs(c.Root) {
		return sdk.Errorf(sdk.CodeConfigInvalid, "minimal", `want {"root": "<absolute directory>"}; got %s`, config)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.root = c.Root
	return nil
}

func (b *backend) Describe(ctx context.Context) (sdk.Description, error) {
	return sdk.Description{Name: "minimal", FormatVersion: sdk.FormatVersion}, ioError("", ctx.Err())
}

func (b *backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	if err := b.lock(ctx, h.ID); err != nil {
		return sdk.Opened{}, err
	}
	defer b.mu.Unlock()
	stored, err := headerjson.Decode(headerjson.Encode(h), h.ID, "") // refuse a header that would not read back
	if err != nil {
		return sdk.Opened{}, err
	}
	if _, err := os.Stat(b.path(h.ID)); err == nil || b.writer(h.ID) != nil {
		return sdk.Opened{}, fail(sdk.CodeSessionAlreadyExists, h.ID, "the session exists")
	}
	name := b.newHandle(&handle{id: h.ID, write: true, pending: &stored})
	return sdk.Opened{Handle: name, Header: stored}, nil
}

func (b *backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := b.lock(ctx, id); err != nil {
		return sdk.Opened{}, err
	}
	defer b.mu.Unlock()
	f, err := b.load(id)
	write := access == sdk.AccessWrite
	// A create holds the claim before its session is stored, too.
	if (err == nil || errors.Is(err, sdk.ErrSessionNotFound)) && write && b.writer(id) != nil {
		err = fail(sdk.CodeAlreadyOwned, id, "another handle holds the write claim")
	}
	var torn sdk.Torn
	if err == nil && f.torn > 0 {
		torn = sdk.Torn{Bytes: f.torn, FromSeq: sdk.Seq(len(f.events))}
		if write { // cut the incomplete line, so that appends start a new one
			err = ioError(id, os.Truncate(b.path(id), f.size))
		}
	}
	if err != nil {
		return sdk.Opened{}, err
	}
	name := b.newHandle(&handle{id: id, write: write})
	return sdk.Opened{Handle: name, Header: f.header, NextSeq: sdk.Offset(len(f.events)), Revision: rev(f.size), Torn: torn}, nil
}

func (b *backend) Append(ctx context.Context, h string, first sdk.Seq, events [][]byte) (sdk.Durable, error) {
	hd, err := b.lockHandle(ctx, h)
	if err != nil {
		return sdk.Durable{}, err
	}
	defer b.mu.Unlock()
	if !hd.write {
		return sdk.Durable{}, fail(sdk.CodeReadOnlyHandle, hd.id, "handle %q was opened for reading", h)
	}
	var lines []byte // a copy: the caller may reuse the event buffers
	for i, ev := range events {
		seq, ok := envelopeSeq(ev)
		if !ok {
			return sdk.Durable{}, fail(sdk.CodeEnvelopeInvalid, hd.id, "batch event %d is not a canonical envelope with an integer seq", i)
		}
		if want := int64(first) + int64(i); seq != want {
			return sdk.Durable{}, fail(sdk.CodeSeqNotContiguous, hd.id, "batch event %d has seq %d; want %d", i, seq, want)
		}
		lines = append(append(lines, ev...), '\n')
	}
	var stored file // none yet for a create
	if hd.pending == nil {
		if stored, err = b.load(hd.id); err != nil {
			return sdk.Durable{}, err
		}
	}
	if int(first) != len(stored.events) { // the compare-and-set
		return sdk.Durable{}, fail(sdk.CodeSeqConflict, hd.id, "firstSeq %d but the stored next seq is %d", first, len(stored.events))
	}
	if hd.pending != nil {
		err = b.materialize(hd, lines)
	} else {
		err = writeSync(b.path(hd.id), os.O_APPEND, lines, stored.size)
	}
	if err != nil {
		return sdk.Durable{}, ioError(hd.id, err)
	}
	return b.durable(hd.id)
}

// Read passes fn one chunk, fresh from load; pluginrpc splits it for the wire.
func (b *backend) Read(ctx context.Context, h string, offset sdk.Offset, length int64, fn func([][]byte) error) error {
	hd, err := b.lockHandle(ctx, h)
	if err != nil {
		return err
	}
	defer b.mu.Unlock()
	if offset < 0 || length < -1 {
		return fail(sdk.CodeInvalidSeq, hd.id, "offset %d must be ≥ 0 and length %d ≥ -1", offset, length)
	}
	if hd.pending != nil { // a create that stored nothing has no events
		return nil
	}
	f, err := b.load(hd.id)
	if err != nil {
		return err
	}
	events := f.events[min(int(offset), len(f.events)):]
	if length != -1 && length < int64(len(events)) {
		events = events[:length]
	}
	return fn(events)
}

// Flush has nothing to sync (every append was), but stores an empty create.
func (b *backend) Flush(ctx context.Context, h string) (sdk.Durable, error) {
	hd, err := b.lockHandle(ctx, h)
	if err != nil {
		return sdk.Durable{}, err
	}
	defer b.mu.Unlock()
	if hd.pending != nil {
		if err := b.materialize(hd, nil); err != nil {
			return sdk.Durable{}, ioError(hd.id, err)
		}
	}
	return b.durable(hd.id)
}

// Close releases the handle, and with it a write claim; a create that stored
// nothing is abandoned.
func (b *backend) Close(_ context.Context, h string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.handles, h)
	return nil
}

func (b *backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := b.lock(ctx, id); err != nil {
		return sdk.Stat{}, err
	}
	defer b.mu.Unlock()
	f, err := b.load(id)
	return sdk.Stat{Header: f.header, Revision: rev(f.size), FormatVersion: f.header.FormatVersion,
		EventCount: int64(len(f.events)), SizeBytes: f.size}, err
}

// List reports every stored session, plus the creates of this process that
// have stored nothing yet.
func (b *backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := b.lock(ctx); err != nil {
		return err
	}
	defer b.mu.Unlock()
	dir, err := os.ReadDir(b.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no root yet: nothing stored
		return ioError("", err)
	}
	var entries []sdk.ListEntry
	for _, d := range dir {
		name, isLog := strings.CutSuffix(d.Name(), ".jsonl")
		if id, err := hex.DecodeString(name); isLog && err == nil {
			f, err := b.load(string(id))
			entries = append(entries, sdk.ListEntry{ID: string(id), Header: f.header, Revision: rev(f.size), Err: err})
		}
	}
	for _, hd := range b.handles {
		if hd.pending != nil {
			entries = append(entries, sdk.ListEntry{ID: hd.id, Header: *hd.pending})
		}
	}
	for _, e := range entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// path is the file of session id. Hex makes any id a safe file name: no '/',
// no "..", no two names that differ only in case.
func (b *backend) path(id string) string {
	return filepath.Join(b.root, hex.EncodeToString([]byte(id))+".jsonl")
}

// load reads the file of session id into fresh buffers.
func (b *backend) load(id string) (file, error) {
	data, err := os.ReadFile(b.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return file{}, fail(sdk.CodeSessionNotFound, id, "no stored session")
	} else if err != nil {
		return file{}, ioError(id, err)
	}
	size := bytes.LastIndexByte(data, '\n') + 1 // what follows is an incomplete line
	header, body, _ := bytes.Cut(data[:size], []byte("\n"))
	h, err := headerjson.Decode(header, id, b.path(id)) // CORRUPT_LOG when damaged
	f := file{header: h, size: int64(size), torn: int64(len(data) - size)}
	for line := range bytes.Lines(body) {
		f.events = append(f.events, line[:len(line)-1:len(line)-1]) // without the '\n'
	}
	return f, err
}

// durable reports the stored next seq and revision of session id.
func (b *backend) durable(id string) (sdk.Durable, error) {
	f, err := b.load(id)
	return sdk.Durable{NextSeq: sdk.Offset(len(f.events)), Revision: rev(f.size)}, err
}

// materialize writes a create's header line and first batch to a temporary
// file, fsyncs it and links it into place, so the session appears whole or
// not at all. Unlike rename, link never replaces an existing file.
func (b *backend) materialize(hd *handle, lines []byte) error {
	path := b.path(hd.id)
	if err := os.MkdirAll(b.root, 0o700); err != nil {
		return err
	}
	defer os.Remove(path + ".tmp")
	data := append(append(headerjson.Encode(*hd.pending), '\n'), lines...)
	if err := writeSync(path+".tmp", os.O_CREATE|os.O_TRUNC, data, 0); err != nil {
		return err
	}
	if err := os.Link(path+".tmp", path); errors.Is(err, fs.ErrExist) {
		return fail(sdk.CodeSessionAlreadyExists, hd.id, "another process stored it first")
	} else if err != nil {
		return err
	}
	hd.pending = nil
	dir, err := os.Open(b.root)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync() // makes the new directory entry durable
}

// writeSync writes data to the file at path and fsyncs it. On failure it
// truncates the file back to size: a failed write leaves nothing behind.
func writeSync(path string, flag int, data []byte, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|flag, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if err != nil {
		return errors.Join(err, f.Truncate(size))
	}
	return nil
}

// envelopeSeq returns the seq of a canonical envelope. Canonical JSON has no
// raw newline, so an envelope is always exactly one line of the file. The
// event's data sits one level inside the envelope: Enclosing 1 lets it nest
// as deep as the host allows.
func envelopeSeq(ev []byte) (int64, bool) {
	doc, err := jsonv.Parse(ev, jsonv.Options{Enclosing: 1})
	if err != nil || !bytes.Equal(doc.Buffer(), ev) {
		return 0, false
	}
	return doc.Root().Get("seq").Int()
}

// lock checks ctx (an ended one is IO_ERROR, as from a gRPC client) and the
// session ids, then takes b.mu: on success only.
func (b *backend) lock(ctx context.Context, ids ...string) error {
	if err := ioError("", ctx.Err()); err != nil {
		return err
	}
	for _, id := range ids {
		if err := sdk.ValidateSessionID(id); err != nil {
			return err
		}
	}
	b.mu.Lock()
	return nil
}

// lockHandle is lock, then the open handle named h; b.mu is held on success only.
func (b *backend) lockHandle(ctx context.Context, h string) (*handle, error) {
	if err := b.lock(ctx); err != nil {
		return nil, err
	}
	if hd := b.handles[h]; hd != nil {
		return hd, nil
	}
	b.mu.Unlock()
	return nil, fail(sdk.CodeHandleClosed, "", "handle %q is closed", h)
}

func (b *backend) newHandle(hd *handle) (name string) {
	b.n++
	name = "h" + strconv.Itoa(b.n)
	b.handles[name] = hd
	return name
}

// writer is the open write handle of session id, or nil.
func (b *backend) writer(id string) *handle {
	for _, hd := range b.handles {
		if hd.write && hd.id == id {
			return hd
		}
	}
	return nil
}

func fail(code sdk.Code, id, format string, args ...any) error {
	e := sdk.Errorf(code, "minimal", format, args...)
	e.SessionID = id
	return e
}

// ioError codes err as IO_ERROR, unless it is nil or has a code already.
func ioError(id string, err error) error {
	if err == nil || sdk.CodeOf(err) != "" {
		return err
	}
	return &sdk.Error{Code: sdk.CodeIOError, Op: "minimal", SessionID: id, Seq: -1, Index: -1, Err: err}
}

func rev(size int64) string { return strconv.FormatInt(size, 10) }
