package jsonl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// materialize stores a pending create, whose directory and lock Create
// made, with sdk/durable: the header unit and the first batch in a temp
// file, fdatasync, a link to the final name that never overwrites, an
// fsync of the directory, and the temp name removed. hd.mu is held. On
// failure nothing is stored, hd stays pending (and keeps its claim) and
// may retry.
func (b *Backend) materialize(hd *handle, batch []byte, events [][]byte) error {
	dec, err := b.decoder(hd.zst)
	if err != nil {
		return err
	}
	b.removeStaleTemps(hd.dir)

	unit, err := b.headerUnit(hd)
	if err != nil {
		return err
	}
	final := filepath.Join(hd.dir, logName(sdk.FormatVersion, hd.zst))
	content := make([]byte, 0, len(unit)+len(batch))
	content = append(append(content, unit...), batch...)
	ix := index{hdrEnd: int64(len(unit)), end: int64(len(unit))}
	if len(events) > 0 {
		ix.addBatch(int64(len(unit)), batch, events, hd.zst)
	}
	return b.storeLog(hd, dec, final, content, ix)
}

// storeLog stores content, a whole log whose committed prefix is ix, as
// hd's log at final (materialize). hd.mu is held.
func (b *Backend) storeLog(hd *handle, dec *zstd.Decoder, final string, content []byte, ix index) error {
	return b.storeLogFunc(hd, dec, final, func(f vfs.File) (index, error) {
		_, err := f.WriteAt(content, 0)
		return ix, err
	})
}

// storeLogFunc is storeLog of the log fill writes into the new, empty
// file, returning its index; an *sdk.Error of fill is returned as it is.
func (b *Backend) storeLogFunc(hd *handle, dec *zstd.Decoder, final string, fill func(vfs.File) (index, error)) error {
	var ix index
	err := durable.On(vfs.Durable(b.fs)).WriteFileFunc(final, filePerm, func(f durable.File) error {
		var err error
		ix, err = fill(f.(vfs.File)) // vfs.Durable opens vfs.Files
		return err
	})
	var se *sdk.Error
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, fs.ErrExist):
		return handles.AlreadyExists(op, hd.id, final+" appeared meanwhile; it is never overwritten")
	case err != nil:
		return handles.IOError(op, hd.id, "storing "+final, err)
	}
	f, err := b.fs.OpenFile(final, os.O_RDWR, 0)
	if err != nil {
		// Undo the link, as for a failed directory fsync, so that failure
		// means nothing stored and hd may retry.
		_ = b.fs.Remove(final)
		return handles.IOError(op, hd.id, "opening "+final+" after storing it (removed again; nothing is stored)", err)
	}

	// Stored: from here on the handle owns the log.
	hd.f, hd.path, hd.chk.dec = f, final, dec
	b.mu.Lock() // pending is read under either lock, so it changes under both
	hd.pending = false
	b.mu.Unlock()
	hd.ix = ix
	if hd.info, err = f.Stat(); err != nil {
		// Durable, but its revision is unknown: an ambiguous failure the
		// host resolves by reading back (docs/plugins.md).
		return handles.IOError(op, hd.id, "fstat "+final+" after storing it", err)
	}
	return nil
}

// headerUnit renders the header unit of hd's log: the header line, and for
// zstd its own frame.
func (b *Backend) headerUnit(hd *handle) ([]byte, error) {
	return b.headerUnitOf(headerjson.Encode(hd.header), hd.zst)
}

// headerUnitOf renders the header unit of the header JSON header: the line,
// and for zstd its own frame.
func (b *Backend) headerUnitOf(header []byte, zst bool) ([]byte, error) {
	hdr := append(header[:len(header):len(header)], '\n')
	if !zst {
		return hdr, nil
	}
	enc, err := b.encoder()
	if err != nil {
		return nil, err
	}
	return enc.EncodeAll(hdr, nil), nil
}
