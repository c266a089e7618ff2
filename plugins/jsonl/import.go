package jsonl

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Import implements sdk.Importer (docs/storage.md, "Importing"): it
// creates h as Create does (the session directory and its lock, no log),
// then writes the whole log — the header unit and every batch as Append
// would write it, one frame per batch for zstd — into a temp file beside
// the log, and stores it as a materialization does: fdatasync, a link to
// the log's name, an fsync of the directory. Until that link nothing is
// visible (a directory without a log is no session); a failure removes
// the temp file, and a crash leaves only it, which the next Create, Import
// or write open of the id removes. It returns the write handle, as
// CopyPrefix does.
func (b *Backend) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	o, err := b.create(ctx, h, true)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd, err := b.handles.Get(o.Handle)
	if err == nil {
		err = b.importInto(ctx, hd, events)
	}
	if err != nil {
		_ = b.Close(context.WithoutCancel(ctx), o.Handle) // abandons the create: nothing is stored
		return sdk.Opened{}, err
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	o.NextSeq, o.Revision = sdk.Offset(hd.ix.next), revision(hd.info)
	return o, nil
}

// importInto stores the pending create hd as the log of every batch of
// events.
func (b *Backend) importInto(ctx context.Context, hd *handle, events func(yield func(batch [][]byte) error) error) error {
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if err := hd.usable(); err != nil {
		return err
	}
	dec, err := b.decoder(hd.zst)
	if err != nil {
		return err
	}
	unit, err := b.headerUnit(hd)
	if err != nil {
		return err
	}
	b.removeStaleTemps(hd.dir)
	return b.storeLogFunc(hd, dec, filepath.Join(hd.dir, logName(1, hd.zst)), func(f vfs.File) (index, error) {
		if _, err := f.WriteAt(unit, 0); err != nil {
			return index{}, handles.IOError(op, hd.id, "writing the header of an import", err)
		}
		// hd.ix is the log written so far: checkAndEncode's compare-and-set
		// reads it.
		hd.ix = index{hdrEnd: int64(len(unit)), end: int64(len(unit))}
		err := events(func(batch [][]byte) error {
			if err := handles.Ended(ctx, op, "import"); err != nil {
				return err
			}
			payload, err := b.checkAndEncode(hd, sdk.Seq(hd.ix.next), batch)
			if err != nil || len(batch) == 0 {
				return err
			}
			if _, err := f.WriteAt(payload, hd.ix.end); err != nil {
				return handles.IOError(op, hd.id, "writing an import at seq "+strconv.FormatInt(hd.ix.next, 10), err)
			}
			hd.ix.addBatch(hd.ix.end, payload, batch, hd.zst)
			hd.buf, hd.frame = poolLarge(&largeLines, hd.buf), poolLarge(&largeFrames, hd.frame)
			return nil
		})
		return hd.ix, err
	})
}

var _ sdk.Importer = (*Backend)(nil)
