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
// Calls read whole files, under one mutex: simple, not fast. The bookkeeping
// every backend shares (handle names, write claims, creates not stored yet,
// argument checks, the contract's errors) comes from sdk/handles, and the
// atomic creation of a file from sdk/durable.
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
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func main() {
	b := newBackend()
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info:         sdk.Info{Name: "minimal", Version: "0.1.0", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence:  b,
		Configurable: b, // the host calls Configure first, with the config block as JSON
	})
}

// op is the Op of the backend's errors.
const op = "minimal"

// backend implements sdk.Persistence and sdk.Configurable. The files are its
// only state besides the open handles and their claims.
type backend struct {
	mu      sync.Mutex // serializes every call that reads or writes files
	root    string
	handles *handles.Table[handle]  // the open handles by name
	claims  *handles.Claims[handle] // session id → its write handle or create
}

type handle struct {
	id      string
	write   bool        // a write handle holds its session's claim
	pending *sdk.Header // a create's header, until its session is stored
}

func newBackend() *backend {
	return &backend{handles: handles.NewTable[handle](op), claims: handles.NewClaims[handle]()}
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
		return sdk.Errorf(sdk.CodeConfigInvalid, op, `want {"root": "<absolute directory>"}; got %s`, config)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.root = c.Root
	return nil
}

func (b *backend) Describe(ctx context.Context) (sdk.Description, error) {
	return sdk.Description{Name: "minimal", FormatVersion: sdk.FormatVersion}, handles.Ended(ctx, op, "describe")
}

func (b *backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	h, _, err := handles.CheckCreate(op, h, "") // the id, the version, a header that reads back
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := b.lock(ctx, "create"); err != nil {
		return sdk.Opened{}, err
	}
	defer b.mu.Unlock()
	if _, err := os.Stat(b.path(h.ID)); err == nil {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored")
	}
	hd := &handle{id: h.ID, write: true, pending: &h}
	if _, ok := b.claims.Take(h.ID, hd); !ok { // the claim comes with the create
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "a handle of this process holds its write claim")
	}
	return sdk.Opened{Handle: b.register(hd), Header: h}, nil
}

func (b *backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := handles.CheckOpen(op, id, access); err != nil {
		return sdk.Opened{}, err
	}
	if err := b.lock(ctx, "open"); err != nil {
		return sdk.Opened{}, err
	}
	defer b.mu.Unlock()
	write := access == sdk.AccessWrite
	f, err := b.load(id)
	if err != nil {
		if write && errors.Is(err, sdk.CodeSessionNotFound) && b.claims.Holder(id) != nil {
			err = handles.AlreadyOwned(op, id, "a create handle holds it, and it is not stored yet")
		}
		return sdk.Opened{}, err
	}
	hd := &handle{id: id, write: write}
	if write {
		if _, ok := b.claims.Take(id, hd); !ok {
			return sdk.Opened{}, handles.AlreadyOwned(op, id, "another handle holds it")
		}
	}
	var torn sdk.Torn
	if f.torn > 0 {
		torn = sdk.Torn{Bytes: f.torn, FromSeq: sdk.Seq(len(f.events))}
		if write { // cut the incomplete line, so that appends start a new one
			if err := ioError(id, os.Truncate(b.path(id), f.size)); err != nil {
				b.claims.Release(id, hd)
				return sdk.Opened{}, err
			}
		}
	}
	return sdk.Opened{Handle: b.register(hd), Header: f.header, NextSeq: sdk.Offset(len(f.events)), Revision: rev(f.size), Torn: torn}, nil
}

func (b *backend) Append(ctx context.Context, h string, first sdk.Seq, events [][]byte) (sdk.Durable, error) {
	hd, err := b.lockHandle(ctx, h)
	if err != nil {
		return sdk.Durable{}, err
	}
	defer b.mu.Unlock()
	if !hd.write {
		return sdk.Durable{}, handles.ReadOnly(op, hd.id, h)
	}
	if err := handles.CheckAppend(hd.id, first); err != nil {
		return sdk.Durable{}, err
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
		return sdk.Durable{}, handles.SeqConflict(op, hd.id, int64(first), int64(len(stored.events)))
	}
	if hd.pending != nil {
		err = b.materialize(hd, lines)
	} else {
		err = appendSync(b.path(hd.id), lines, stored.size)
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
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return err
	}
	if hd.pending != nil { // a create that stored nothing has no events
		return nil
	}
	f, err := b.load(hd.id)
	if err != nil {
		return err
	}
	end := handles.ReadEnd(offset, length, int64(len(f.events)))
	if int64(offset) >= end {
		return nil
	}
	return fn(f.events[offset:end])
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
	if hd, ok := b.handles.Remove(h); ok {
		b.claims.Release(hd.id, hd)
	}
	return nil
}

func (b *backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	if err := b.lock(ctx, "stat"); err != nil {
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
	if err := b.lock(ctx, "list"); err != nil {
		return err
	}
	defer b.mu.Unlock()
	dir, err := os.ReadDir(b.root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no root yet: nothing stored
		return ioError("", err)
	}
	entries := b.claims.Pending(func(_ string, hd *handle) (sdk.Header, bool) {
		if hd.pending == nil {
			return sdk.Header{}, false
		}
		return *hd.pending, true
	})
	for _, d := range dir {
		name, isLog := strings.CutSuffix(d.Name(), ".jsonl")
		if id, err := hex.DecodeString(name); isLog && err == nil {
			f, err := b.load(string(id))
			entries = append(entries, sdk.ListEntry{ID: string(id), Header: f.header, Revision: rev(f.size), Err: err, EventCount: -1})
		}
	}
	slices.SortFunc(entries, func(x, y sdk.ListEntry) int { return strings.Compare(x.ID, y.ID) })
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
		return file{}, handles.NotFound(op, id)
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

// materialize stores a create's header line and first batch with
// durable.WriteFile, so the session appears whole or not at all, and never
// replaces a file that exists.
func (b *backend) materialize(hd *handle, lines []byte) error {
	data := append(append(headerjson.Encode(*hd.pending), '\n'), lines...)
	if err := durable.WriteFile(b.path(hd.id), data, 0o600); errors.Is(err, fs.ErrExist) {
		return handles.AlreadyExists(op, hd.id, "another process stored it first")
	} else if err != nil {
		return err
	}
	hd.pending = nil
	return nil
}

// appendSync appends data to the file at path and fsyncs it. On failure it
// truncates the file back to size: a failed write leaves nothing behind.
func appendSync(path string, data []byte, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
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

// lock checks ctx (an ended one is IO_ERROR, as from a gRPC client), then
// takes b.mu: on success only.
func (b *backend) lock(ctx context.Context, what string) error {
	if err := handles.Ended(ctx, op, what); err != nil {
		return err
	}
	b.mu.Lock()
	return nil
}

// lockHandle is lock, then the open handle named h; b.mu is held on success only.
func (b *backend) lockHandle(ctx context.Context, h string) (*handle, error) {
	if err := b.lock(ctx, "the call"); err != nil {
		return nil, err
	}
	hd, err := b.handles.Get(h)
	if err != nil {
		b.mu.Unlock()
		return nil, err
	}
	return hd, nil
}

// register makes hd an open handle and returns its name.
func (b *backend) register(hd *handle) string {
	name := b.handles.NewName()
	b.handles.Put(name, hd)
	return name
}

func fail(code sdk.Code, id, format string, args ...any) error {
	return sdk.Errorf(code, op, format, args...).WithSession(id)
}

// ioError codes err as IO_ERROR, unless it is nil or has a code already.
func ioError(id string, err error) error {
	if err == nil || sdk.CodeOf(err) != "" {
		return err
	}
	return handles.IOError(op, id, "", err)
}

func rev(size int64) string { return strconv.FormatInt(size, 10) }
