package jsonl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

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
	path, zst, err := b.findLog(id, filepath.Join(cfg.Root, EncodeID(id)), cfg)
	if err != nil {
		return sdk.Damaged{}, err
	}
	f, err := b.fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return sdk.Damaged{}, handles.IOError(op, id, "opening "+path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sdk.Damaged{}, handles.IOError(op, id, "fstat "+path, err)
	}
	data := make([]byte, fi.Size)
	if err := readFull(f, data, 0); err != nil {
		return sdk.Damaged{}, handles.IOError(op, id, "reading "+path, err)
	}
	chk := checker{scanning: true}
	if chk.dec, err = b.decoder(zst); err != nil {
		return sdk.Damaged{}, err
	}
	h, ix, d, err := chk.scanDamaged(data, zst, id, path)
	chk.endScan()
	if err != nil {
		return sdk.Damaged{}, err
	}
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
	r := reader{ctx: ctx, id: id, path: path, f: f, ix: ix, fn: fn, dec: chk.dec}
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
