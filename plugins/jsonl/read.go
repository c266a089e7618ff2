package jsonl

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. A read takes the
// log's size at its start and reads only below it; a read handle rescans
// from 0 only when the file was replaced or cut below what it had seen
// (LOG_SHRANK when that leaves fewer events than it showed). Chunks hold
// at most 512 events or about 1 MiB and are fresh buffers fn may keep.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return err
	}
	hd.mu.Lock()
	if err := hd.usable(); err != nil {
		hd.mu.Unlock()
		return err
	}
	if !hd.write && !hd.pending {
		if err := b.refresh(hd); err != nil {
			hd.mu.Unlock()
			return err
		}
	}
	if hd.ix.next < hd.floor {
		e := sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; %s now holds %d", hd.floor, hd.path, hd.ix.next)
		e.SessionID = hd.id
		hd.mu.Unlock()
		return e
	}
	hd.floor = hd.ix.next
	ix, f, zst, path, kept := hd.ix.snapshot(), hd.f, hd.zst, hd.path, hd.kept
	hd.kept = nil
	hd.mu.Unlock()

	end := handles.ReadEnd(offset, length, ix.next)
	if int64(offset) >= end {
		return nil
	}
	r := reader{ctx: ctx, id: hd.id, path: path, f: f, ix: &ix, fn: fn}
	if zst {
		dec, err := b.decoder(true)
		if err != nil {
			return err
		}
		r.dec, r.kept = dec, kept
		return r.frames(int64(offset), end)
	}
	return r.lines(int64(offset), end)
}

// refresh brings a read handle's index up to the log's current size
// (docs/storage.md): nothing to do while the file is unchanged; a scan of the
// new bytes from the committed end when it grew; a full rescan when it was
// replaced (dev/ino) or cut below the committed end. hd.mu is held.
func (b *Backend) refresh(hd *handle) error {
	fi, err := b.fs.Stat(hd.path)
	if err != nil {
		return handles.IOError(op, hd.id, "stat "+hd.path, err)
	}
	switch {
	case fi == hd.info && hd.ix.end == fi.Size:
		return nil // unchanged, and scanned to its end
	case fi.Dev != hd.info.Dev || fi.Ino != hd.info.Ino || fi.Size < hd.ix.end:
		f, err := b.fs.OpenFile(hd.path, os.O_RDONLY, 0)
		if err != nil {
			return handles.IOError(op, hd.id, "reopening "+hd.path, err)
		}
		hd.retired = append(hd.retired, hd.f)
		hd.f = f
		if _, _, err := hd.scanAll(0, nil); err != nil {
			return err
		}
	default:
		data := make([]byte, fi.Size-hd.ix.end)
		if err := readFull(hd.f, data, hd.ix.end); err != nil {
			return handles.IOError(op, hd.id, "reading "+hd.path, err)
		}
		ix := hd.ix // a scan only appends, so the published elements stay
		var d *damage
		if hd.zst {
			d = hd.chk.scanFrames(data, ix.end, &ix)
		} else {
			d = hd.chk.scanLines(data, ix.end, &ix)
		}
		if d != nil {
			return d.error(hd.id, hd.path)
		}
		hd.ix, hd.info = ix, fi
	}
	return nil
}

// reader emits the chunks of one Read without holding any lock: it reads
// only committed bytes, which are never written again.
type reader struct {
	ctx  context.Context
	id   string
	path string
	f    vfs.File
	ix   *index
	dec  *zstd.Decoder
	kept [][]byte // the decoded content of ix.frames[:len(kept)], owned by this read
	fn   func([][]byte) error
}

func (r *reader) emit(chunk [][]byte) error {
	if err := handles.Ended(r.ctx, op, "read"); err != nil {
		return err
	}
	return r.fn(chunk)
}

// lines emits events [from, to) of a plain log.
func (r *reader) lines(from, to int64) error {
	for i := from; i < to; {
		j := i + 1
		for j < to && j-i < readChunkEvents && r.ix.lineEnd(j)+1-r.ix.starts[i] <= readChunkBytes {
			j++
		}
		base := r.ix.starts[i]
		buf := make([]byte, r.ix.lineEnd(j-1)+1-base)
		if err := readFull(r.f, buf, base); err != nil {
			return handles.IOError(op, r.id, "reading "+r.path, err)
		}
		chunk := make([][]byte, 0, j-i)
		for k := i; k < j; k++ {
			s, e := r.ix.starts[k]-base, r.ix.lineEnd(k)-base
			if buf[e] != '\n' {
				return corruptAt(r.id, r.path, fmt.Sprintf("line %d changed after it was read (no newline at byte offset %d)", k+2, r.ix.lineEnd(k)))
			}
			chunk = append(chunk, buf[s:e:e])
		}
		if err := r.emit(chunk); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// frames emits events [from, to) of a zstd log, decoding the frames that
// hold them.
func (r *reader) frames(from, to int64) error {
	fi, _ := slices.BinarySearchFunc(r.ix.frames, from, func(f frameRef, seq int64) int {
		switch {
		case f.first+f.count <= seq:
			return -1
		case f.first > seq:
			return 1
		}
		return 0
	})
	var chunk [][]byte
	var cbuf []byte
	var raw, decoded []byte
	var nbytes int // bytes of the lines in chunk
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		c := chunk
		chunk, cbuf, nbytes = nil, nil, 0
		return r.emit(c)
	}
	for seq := from; seq < to; fi++ {
		fr := r.ix.frames[fi]
		// A kept frame's content was checked by the scan and belongs to
		// this read alone, so its lines go out as views of it; any other
		// frame is decoded into a reused buffer and its lines copied.
		var rest []byte
		owned := fi < len(r.kept)
		if owned {
			rest = r.kept[fi]
			r.kept[fi] = nil
		} else {
			raw = slices.Grow(raw[:0], int(fr.size))[:fr.size]
			if err := readFull(r.f, raw, fr.off); err != nil {
				return handles.IOError(op, r.id, "reading "+r.path, err)
			}
			var err error
			decoded, err = r.dec.DecodeAll(raw, decoded[:0])
			if err != nil {
				return corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: the frame no longer decodes: %v", fr.off, err))
			}
			rest = decoded
		}
		for k := fr.first; k < fr.first+fr.count && seq < to; k++ {
			nl := indexNL(rest)
			if nl < 0 {
				return corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: the frame changed after it was read", fr.off))
			}
			line := rest[:nl:nl]
			rest = rest[nl+1:]
			if k < seq {
				continue
			}
			if len(chunk) > 0 && (len(chunk) >= readChunkEvents || nbytes+len(line) > readChunkBytes) {
				if err := flush(); err != nil {
					return err
				}
			}
			nbytes += len(line)
			seq++
			if owned {
				chunk = append(chunk, line)
				continue
			}
			if cbuf == nil {
				cbuf = make([]byte, 0, min(readChunkBytes, max(len(line), 64<<10)))
			}
			if cap(cbuf)-len(cbuf) < len(line) {
				// A new backing array; the views already taken keep theirs.
				cbuf = make([]byte, 0, max(len(line), 2*cap(cbuf)))
			}
			start := len(cbuf)
			cbuf = append(cbuf, line...)
			chunk = append(chunk, cbuf[start:len(cbuf):len(cbuf)])
		}
	}
	return flush()
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// readFull reads exactly len(p) bytes at off.
func readFull(f vfs.File, p []byte, off int64) error {
	for len(p) > 0 {
		n, err := f.ReadAt(p, off)
		p, off = p[n:], off+int64(n)
		if len(p) == 0 {
			return nil
		}
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
	}
	return nil
}
