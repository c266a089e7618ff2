package jsonl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

var _ sdk.SalvageReader = (*Backend)(nil)

// ReadDamaged reads the stored session id as salvage needs it, without a
// claim and without changing anything: fn gets the longest valid prefix
// (the committed events before the damage), and the reply locates the
// damage, with the raw bytes from the damaged unit to the end of the file
// as Tail. A log that loads (perhaps with a torn tail) comes back with
// Corrupt false and all its committed events. A bad header unit is
// CORRUPT_LOG: there is no header to salvage under.
func (b *Backend) ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (sdk.Damaged, error) {
	if err := handles.Ended(ctx, op, "read damaged"); err != nil {
		return sdk.Damaged{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.Damaged{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Damaged{}, err
	}
	sl, err := b.scanStored(id, cfg)
	if err != nil {
		return sdk.Damaged{}, err
	}
	defer sl.f.Close()
	path, zst, f, data, h, ix, d := sl.path, sl.zst, sl.f, sl.data, sl.header, sl.ix, sl.damage
	out := sdk.Damaged{Header: h, ValidEvents: ix.next}
	if d != nil {
		out.Corrupt = true
		out.Damage = sdk.Damage{
			Offset:               ix.end,
			Bytes:                int64(len(data)) - ix.end,
			IntactEventsExcluded: d.intact,
			Reason:               d.reason,
			Tail:                 bytes.Clone(data[ix.end:]),
		}
	}
	if ix.next == 0 {
		return out, nil // no valid event: nothing to pass to fn
	}
	r := reader{ctx: ctx, id: id, path: path, f: f, ix: ix, fn: fn, dec: sl.dec}
	if zst {
		err = r.frames(0, ix.next)
	} else {
		err = r.lines(0, ix.next)
	}
	if err != nil {
		return sdk.Damaged{}, err
	}
	return out, nil
}

// scannedLog is a stored log read whole and scanned as salvage scans it.
type scannedLog struct {
	path   string
	zst    bool
	f      vfs.File // open for reading; the caller closes it
	data   []byte   // the whole file
	header sdk.Header
	ix     *index  // the longest valid prefix
	damage *damage // nil when the log loads
	dec    *zstd.Decoder
}

// scanStored finds id's log, reads it whole and scans it without a claim
// and without changing anything: the longest valid prefix and the damage
// after it, if any. A bad header unit is CORRUPT_LOG.
func (b *Backend) scanStored(id string, cfg Config) (scannedLog, error) {
	path, zst, err := b.findLog(id, filepath.Join(cfg.Root, EncodeID(id)), cfg)
	if err != nil {
		return scannedLog{}, err
	}
	f, err := b.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return scannedLog{}, handles.IOError(op, id, "opening "+path, err)
	}
	sl, err := b.scanFile(id, path, zst, f)
	if err != nil {
		f.Close()
		return scannedLog{}, err
	}
	return sl, nil
}

func (b *Backend) scanFile(id, path string, zst bool, f vfs.File) (scannedLog, error) {
	fi, err := f.Stat()
	if err != nil {
		return scannedLog{}, handles.IOError(op, id, "fstat "+path, err)
	}
	data := make([]byte, fi.Size)
	if err := readFull(f, data, 0); err != nil {
		return scannedLog{}, handles.IOError(op, id, "reading "+path, err)
	}
	chk := checker{scanning: true, tenant: b.tenant}
	if chk.dec, err = b.decoder(zst); err != nil {
		return scannedLog{}, err
	}
	h, ix, d, err := chk.scanDamaged(data, zst, id, path)
	chk.endScan()
	if err != nil {
		return scannedLog{}, err
	}
	return scannedLog{path: path, zst: zst, f: f, data: data, header: h, ix: ix, damage: d, dec: chk.dec}, nil
}
