package jsonl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Stat describes a stored session from its header and the file's metadata,
// without reading events: EventCount is -1 (unknown; counting would mean
// reading every event), SizeBytes is the log's file size and LastActivity
// its modification time.
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
	return sdk.Stat{Header: hs.header, Revision: revision(hs.info), FormatVersion: hs.header.FormatVersion, EventCount: -1, SizeBytes: hs.info.Size,
		LastActivity: hs.lastActivity()}, nil
}

// storedHeader is a session's header and its log file's metadata.
type storedHeader struct {
	header sdk.Header
	path   string
	zst    bool
	info   vfs.FileInfo
	// head is the log's first bytes, at least its header unit, read from
	// the file described by info.
	head []byte
}

// lastActivity is the log file's modification time in Unix milliseconds,
// never before the session's creation (a file system's timestamps may lag
// the clock the header was stamped with by a tick).
func (hs storedHeader) lastActivity() int64 { return max(hs.info.MtimeNs/1e6, hs.header.CreatedAt) }

// statHeader finds id's log and decodes its header unit only (the first
// line, or the first frame): the format gate, identity check and header
// shape.
func (b *Backend) statHeader(id, dir string, cfg Config) (storedHeader, error) {
	hs, f, err := b.openHeader(id, dir, cfg)
	if err != nil {
		return storedHeader{}, err
	}
	f.Close()
	return hs, nil
}

// openHeader is statHeader that returns the log file, open for reading,
// too; the caller closes it.
func (b *Backend) openHeader(id, dir string, cfg Config) (storedHeader, vfs.File, error) {
	path, zst, err := b.findLog(id, dir, cfg)
	if err != nil {
		return storedHeader{}, nil, err
	}
	f, err := b.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return storedHeader{}, nil, handles.NotFound(op, id)
		}
		return storedHeader{}, nil, handles.IOError(op, id, "opening "+path, err)
	}
	hs, err := b.readHeader(id, path, zst, f)
	if err != nil {
		f.Close()
		return storedHeader{}, nil, err
	}
	return hs, f, nil
}

// readHeader reads the header unit of the log path open as f.
func (b *Backend) readHeader(id, path string, zst bool, f vfs.File) (storedHeader, error) {
	fi, err := f.Stat()
	if err != nil {
		return storedHeader{}, handles.IOError(op, id, "fstat "+path, err)
	}
	chk := checker{tenant: b.tenant}
	if chk.dec, err = b.decoder(zst); err != nil {
		return storedHeader{}, err
	}
	// Read a little, and more only while the header unit is incomplete;
	// each read continues the one before.
	var data []byte
	for n := min(fi.Size, 4096); ; n = min(fi.Size, 4*n) {
		have := len(data)
		data = append(data, make([]byte, int(n)-have)...)
		if err := readFull(f, data[have:], int64(have)); err != nil {
			return storedHeader{}, handles.IOError(op, id, "reading "+path, err)
		}
		h, _, st, err := chk.header(data, zst, id, path)
		if st == unitIncomplete && n < fi.Size {
			continue
		}
		if err != nil {
			return storedHeader{}, err
		}
		if gen, _, _ := parseLogName(filepath.Base(path)); gen != h.FormatVersion {
			return storedHeader{}, corruptAt(id, path, fmt.Sprintf("the header says format v%d but the file is generation v%d; a generation holds its own format version (docs/storage.md)", h.FormatVersion, gen))
		}
		return storedHeader{header: h, path: path, zst: zst, info: fi, head: data}, nil
	}
}

// List calls fn, in id order, for every stored session under the root and
// every unmaterialized create of this instance, reading only headers (and
// the log's metadata: LastActivity is its modification time, EventCount
// unknown). A
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
			e.Header, e.LastActivity = *it.pending, it.pending.CreatedAt
		} else {
			hs, err := b.statHeader(it.id, filepath.Join(cfg.Root, EncodeID(it.id)), cfg)
			switch {
			case errors.Is(err, sdk.CodeSessionNotFound):
				if h, ok := b.pendingHeader(it.id); ok {
					e.Header, e.LastActivity = h, h.CreatedAt // created here; another process made its directory
				} else {
					continue // a directory with no log: never materialized
				}
			case err != nil:
				e.Err, e.EventCount = err, -1
			default:
				e.Header, e.Revision, e.LastActivity, e.EventCount = hs.header, revision(hs.info), hs.lastActivity(), -1
			}
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// pendingHeader returns the header of this instance's unmaterialized
// create of id, unless it is an import's (never listed).
func (b *Backend) pendingHeader(id string) (sdk.Header, bool) {
	hd := b.claims.Listed(id)
	if hd == nil {
		return sdk.Header{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return hd.header, hd.pending
}
