package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
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
	// open never claims anything.
	if _, err := b.statHeader(id, dir, cfg); err != nil {
		if write && errors.Is(err, sdk.CodeSessionNotFound) {
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
	h, data, err := hd.scanAll(retainDecoded, b.readSmallFile)
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
//
// With readFile, a checkpoint it reads that vouches for a prefix of a zstd
// log spares the scan decoding and checking that prefix's frames again
// (trustedPrefix).
func (hd *handle) scanAll(retain int64, readFile func(string) ([]byte, error)) (sdk.Header, []byte, error) {
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
	hd.vouched = 0
	var trusted int64
	if readFile != nil {
		if t, ok := hd.trustedPrefix(data, readFile); ok {
			hd.chk.trust, trusted = &t, t.prefix
		}
	}
	h, ix, err := hd.chk.scanLog(data, hd.zst, hd.id, hd.path)
	hd.chk.trust = nil
	kept := hd.chk.kept
	hd.chk.retain, hd.chk.kept, hd.chk.keptBytes = 0, nil, 0
	hd.chk.endScan()
	if err != nil {
		return sdk.Header{}, nil, err
	}
	hd.ix, hd.info, hd.kept = *ix, fi, kept
	if hd.write && trusted <= ix.end {
		hd.vouched = trusted // a write handle's log changes only through it
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
	ms := b.now()
	name, err := durable.On(vfs.Durable(b.fs)).WriteFirstFree(func(i int) string {
		return filepath.Join(hd.dir, "torn-"+strconv.FormatInt(ms+int64(i), 10)+".bin")
	}, artifactTries, torn, filePerm)
	if err != nil {
		return "", handles.IOError(op, hd.id, "keeping the torn tail in "+name+" (nothing was cut)", err)
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
