package jsonl

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

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
