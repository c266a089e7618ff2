package jsonl

import (
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

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
	// open never claims anything. The header's bytes are the first the
	// open reads of the log; it reads the rest after the claim.
	hs, f, err := b.openHeader(id, dir, cfg)
	if err != nil {
		if write && errors.Is(err, sdk.CodeSessionNotFound) {
			if owned := b.createdElsewhere(id, dir); owned != nil {
				return sdk.Opened{}, owned
			}
		}
		return sdk.Opened{}, err
	}
	if write {
		if err := b.claim(hd); err != nil {
			f.Close()
			return sdk.Opened{}, err
		}
	}
	o, err := b.openLog(hd, hs, f)
	if err != nil {
		b.release(hd)
		return sdk.Opened{}, err
	}
	b.handles.Put(hd.name, hd)
	return o, nil
}

// openLog reads the rest of hd's log, open as f with its header read (hs),
// and its checkpoint, and scans the log; for a write handle (which holds
// the lock) it removes stale temp files, opens the log for writing and
// cuts a torn tail. The handle keeps what the open read for the first
// read and ReadCheckpoint, so that a resume reads each file once. It
// takes f.
func (b *Backend) openLog(hd *handle, hs storedHeader, f vfs.File) (sdk.Opened, error) {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	hd.f, hd.path, hd.zst = f, hs.path, hs.zst
	data := hs.head
	if hd.write {
		b.removeStaleTemps(hd.dir)
		w, err := b.fs.OpenFile(hs.path, os.O_RDWR, 0)
		if err != nil {
			return sdk.Opened{}, handles.IOError(op, hd.id, "opening "+hs.path, err)
		}
		f.Close()
		hd.f = w
		looked := hs.info
		if hs.info, err = w.Stat(); err != nil {
			return sdk.Opened{}, handles.IOError(op, hd.id, "fstat "+hs.path, err)
		}
		if hs.info != looked {
			data = nil // the log changed between the look and the claim
		}
	}
	dec, err := b.decoder(hs.zst)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd.chk.dec = dec
	ck, ckInfo := b.readCheckpoint(hd.dir)
	h, data, err := hd.scanAll(data, hs.info, ck, ckInfo)
	if err != nil {
		return sdk.Opened{}, err
	}
	stored := h
	line, _, _, _ := hd.chk.headerUnit(data, hd.zst) // scanned: good
	h, raw, err := headerjson.Migrate(h, line, hd.path)
	if err != nil {
		return sdk.Opened{}, err
	}
	migrate := hd.write && h.FormatVersion != stored.FormatVersion
	var torn sdk.Torn
	tail := data[hd.ix.end:]
	if len(tail) > 0 {
		torn = sdk.Torn{Bytes: int64(len(tail)), FromSeq: sdk.Seq(hd.ix.next)}
	}
	if migrate {
		if data, err = b.storeMigrated(hd, raw, data[hd.ix.hdrEnd:hd.ix.end]); err != nil {
			return sdk.Opened{}, err
		}
		// The old generation stays as it is, torn tail and all; the new
		// one starts without it. The artifact is written only once the
		// new generation is stored, so that a migration that fails or
		// crashes, and is tried again, leaves no artifact of its own; if
		// writing it fails then, the torn bytes stay in the old
		// generation.
		if len(tail) > 0 {
			if torn.Artifact, err = b.keepTorn(hd, tail); err != nil {
				return sdk.Opened{}, err
			}
		}
	} else if len(tail) > 0 && hd.write {
		if torn.Artifact, err = b.cutTail(hd, tail); err != nil {
			return sdk.Opened{}, err
		}
	}
	if hd.write {
		if hd.info, err = hd.f.Stat(); err != nil {
			return sdk.Opened{}, handles.IOError(op, hd.id, "fstat "+hd.path, err)
		}
	}
	if hd.ix.end <= holdOpened {
		hd.opened = data[:hd.ix.end:hd.ix.end]
	}
	hd.floor = hd.ix.next
	rev := revision(hd.info)
	return sdk.Opened{Handle: hd.name, Header: h, NextSeq: sdk.Offset(hd.ix.next), Revision: rev, Torn: torn}, nil
}

// scanAll scans hd's log, described by fi, replacing hd.ix; hd.info
// becomes fi. head is the log's first bytes as already read: only the rest
// up to fi.Size is read. ck is the session's checkpoint as just read from
// the file described by ckInfo (nil for none): its binding is checked
// against the log's bytes, and when it holds, the scan takes the covered
// frames of a zstd log from its table instead of decoding them again, and
// hd.ck becomes ck. It returns the header and the log's bytes. hd.mu is
// held.
func (hd *handle) scanAll(head []byte, fi vfs.FileInfo, ck *checkpointFile, ckInfo vfs.FileInfo) (sdk.Header, []byte, error) {
	hd.opened, hd.ck, hd.ckInfo = nil, nil, ckInfo
	data := make([]byte, fi.Size)
	n := copy(data, head)
	if err := readFull(hd.f, data[n:], int64(n)); err != nil {
		return sdk.Header{}, nil, handles.IOError(op, hd.id, "reading "+hd.path, err)
	}
	if ck != nil && !ck.binds(hd.path, func(n int64) (uint32, bool) {
		if n > int64(len(data)) {
			return 0, false
		}
		return crc32.Checksum(data[:n], castagnoli), true
	}) {
		ck = nil
	}
	hd.chk.scanning = true
	if ck != nil && len(ck.frames) > 0 {
		hd.chk.trust = ck
	}
	h, ix, err := hd.chk.scanLog(data, hd.zst, hd.id, hd.path)
	hd.chk.trust = nil
	hd.chk.endScan()
	if err != nil {
		return sdk.Header{}, nil, err
	}
	hd.ix, hd.info = *ix, fi
	if ck != nil && ix.endsAt(ck.events, ck.prefix) {
		hd.ck = ck
	}
	return h, data, nil
}

// cutTail keeps the torn bytes in torn-<ms>.bin (sdk/durable: fsynced,
// with its directory entry, never replacing a file; the next millisecond
// when the name is taken, at most artifactTries times), then truncates the
// log to the committed end and fsyncs it. It returns the artifact's path.
// A failure before the truncate leaves no artifact. hd.mu is held.
func (b *Backend) cutTail(hd *handle, torn []byte) (string, error) {
	// Until the truncate succeeds nothing is cut and the log still holds
	// the torn bytes; a failed write leaves no copy behind.
	name, err := b.keepTorn(hd, torn)
	if err != nil {
		return "", err
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

// keepTorn keeps the torn bytes of hd's log in torn-<ms>.bin (sdk/durable:
// fsynced, with its directory entry, never replacing a file; the next
// millisecond when the name is taken, at most artifactTries times) and
// returns its path. A failure leaves no artifact.
func (b *Backend) keepTorn(hd *handle, torn []byte) (string, error) {
	ms := b.now()
	name, err := durable.On(vfs.Durable(b.fs)).WriteFirstFree(func(i int) string {
		return filepath.Join(hd.dir, "torn-"+strconv.FormatInt(ms+int64(i), 10)+".bin")
	}, artifactTries, torn, filePerm)
	if err != nil {
		return "", handles.IOError(op, hd.id, "keeping the torn tail in "+name+" (nothing was cut)", err)
	}
	return name, nil
}

// removeStaleTemps removes the temp files a crashed sdk/durable write
// (a materialization, a torn-tail artifact) left (best effort); the caller
// holds the session lock.
func (b *Backend) removeStaleTemps(dir string) {
	names, err := b.fs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if durable.IsTemp(n) {
			_ = b.fs.Remove(filepath.Join(dir, n))
		}
	}
}

// artifactTries bounds the names cutTail tries.
const artifactTries = 1000
