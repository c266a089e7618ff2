package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/frames"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. A read takes the
// log's size at its start and reads only below it; a read handle rescans
// from 0 only when the file was replaced or cut below what it had seen
// (LOG_SHRANK when that leaves fewer events than it showed). Chunks hold
// at most 512 events or about 1 MiB and are fresh buffers fn may keep.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	r, end, err := b.startRead(ctx, handle, offset, length, fn)
	if err != nil || int64(offset) >= end {
		return err
	}
	if r.zst {
		dec, err := b.decoder(true)
		if err != nil {
			return err
		}
		r.dec = dec
		return r.frames(int64(offset), end)
	}
	return r.lines(int64(offset), end)
}

// ReadFrames implements sdk.FrameReader: the batch frames of a zstd log
// that hold the events [offset, end), read from the file as they are
// stored, in runs of about readChunkBytes; a plain log is framed false.
// The read takes the same snapshot of the handle as Read.
func (b *Backend) ReadFrames(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(frames []sdk.Frame) error) (bool, error) {
	r, end, err := b.startRead(ctx, handle, offset, length, nil)
	if err != nil {
		return false, err
	}
	if !r.zst {
		return false, nil
	}
	if int64(offset) >= end {
		return true, nil
	}
	first, last := r.frameSpan(int64(offset), end)
	for fi := first; fi <= last; {
		fj, size := fi, int64(0)
		for fj <= last && (fj == fi || size+r.ix.frames[fj].size <= readChunkBytes) {
			size += r.ix.frames[fj].size
			fj++
		}
		base := r.ix.frames[fi].off
		buf, err := r.bytes(base, size, nil) // the frames are contiguous in the file
		if err != nil {
			return true, err
		}
		run := make([]sdk.Frame, 0, fj-fi)
		for _, fr := range r.ix.frames[fi:fj] {
			s := fr.off - base
			run = append(run, sdk.Frame{Offset: fr.off, First: sdk.Seq(fr.first), Count: fr.count, Data: buf[s : s+fr.size : s+fr.size]})
		}
		if err := handles.Ended(ctx, op, "read frames"); err != nil {
			return true, err
		}
		if err := fn(run); err != nil {
			return true, err
		}
		fi = fj
	}
	return true, nil
}

// startRead checks a Read's arguments and takes the snapshot of the
// handle's log it reads: a read takes the log's size at its start and
// reads only below it (see Read). end is where the read stops.
func (b *Backend) startRead(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func([][]byte) error) (r reader, end int64, err error) {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return reader{}, 0, err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return reader{}, 0, err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return reader{}, 0, err
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	if err := hd.usable(); err != nil {
		return reader{}, 0, err
	}
	if !hd.write && !hd.pending {
		if err := b.refresh(hd); err != nil {
			return reader{}, 0, err
		}
	}
	if hd.ix.next < hd.floor {
		e := sdk.Errorf(sdk.CodeLogShrank, op, "this handle saw %d events; %s now holds %d", hd.floor, hd.path, hd.ix.next)
		e.SessionID = hd.id
		return reader{}, 0, e
	}
	hd.floor = hd.ix.next
	ix := hd.ix.snapshot()
	r = reader{ctx: ctx, id: hd.id, path: hd.path, f: hd.f, zst: hd.zst, ix: &ix, opened: hd.opened, fn: fn}
	hd.opened = nil
	return r, handles.ReadEnd(offset, length, ix.next), nil
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
		if fi, err = f.Stat(); err != nil {
			return handles.IOError(op, hd.id, "fstat "+hd.path, err)
		}
		// The checkpoint is read again, and bound to the new log, at the
		// next ReadCheckpoint.
		if _, _, err := hd.scanAll(nil, fi, nil, vfs.FileInfo{}); err != nil {
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
	ctx    context.Context
	id     string
	path   string
	f      vfs.File
	zst    bool
	ix     *index
	dec    *zstd.Decoder
	opened []byte // the log's bytes [0, len(opened)) as the open read them (handle.opened)
	fn     func([][]byte) error
}

// bytes returns the log's committed bytes [off, off+n): a view of what the
// open read when it holds them, else read from the file, into *scratch
// when it is given (reused), else into a fresh buffer. Committed bytes are
// never written again, so a view may be kept.
func (r *reader) bytes(off, n int64, scratch *[]byte) ([]byte, error) {
	if off+n <= int64(len(r.opened)) {
		return r.opened[off : off+n : off+n], nil
	}
	var buf []byte
	if scratch != nil {
		*scratch = slices.Grow((*scratch)[:0], int(n))[:n]
		buf = *scratch
	} else {
		buf = make([]byte, n)
	}
	if err := readFull(r.f, buf, off); err != nil {
		return nil, handles.IOError(op, r.id, "reading "+r.path, err)
	}
	return buf, nil
}

func (r *reader) emit(chunk [][]byte) error {
	if err := handles.Ended(r.ctx, op, "read"); err != nil {
		return err
	}
	return r.fn(chunk)
}

// lines emits events [from, to) of a plain log. Its chunks are views of
// the bytes the open read only when it emits every event, so that the
// events of a shorter read do not pin the whole log.
func (r *reader) lines(from, to int64) error {
	if from > 0 || to < r.ix.next {
		r.opened = nil
	}
	for i := from; i < to; {
		j := i + 1
		for j < to && j-i < readChunkEvents && r.ix.lineEnd(j)+1-r.ix.starts[i] <= readChunkBytes {
			j++
		}
		base := r.ix.starts[i]
		buf, err := r.bytes(base, r.ix.lineEnd(j-1)+1-base, nil)
		if err != nil {
			return err
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
// hold them, read and decoded by one goroutine up to readAhead frames
// ahead of the emitting, so a long read decodes while its chunks go out.
func (r *reader) frames(from, to int64) error {
	first, last := r.frameSpan(from, to)
	ahead := r.decodeAhead(first, last)
	defer ahead.stop()
	var chunk [][]byte
	var cbuf []byte
	var nbytes int // bytes of the lines in chunk
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		c := chunk
		chunk, cbuf, nbytes = nil, nil, 0
		return r.emit(c)
	}
	for fi, seq := first, from; seq < to; fi++ {
		fr := r.ix.frames[fi]
		mismatch := func(detail string) error {
			if fr.off < r.ix.fromCheckpoint {
				detail += " (its index entry came from the session's checkpoint)"
			}
			return corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: ", fr.off)+detail)
		}
		// Every frame's content is a fresh buffer that belongs to this
		// read, its checksum verified. The lines of a frame the read covers
		// whole go out as views of it; those of a frame it covers in part
		// are copied, so that a short read does not pin a whole frame.
		rest, err := ahead.next()
		if err != nil {
			return err
		}
		owned := from <= fr.first && fr.first+fr.count <= to
		for k := fr.first; k < fr.first+fr.count && seq < to; k++ {
			nl := bytes.IndexByte(rest, '\n')
			if nl < 0 {
				return mismatch("the frame holds fewer than the " + strconv.FormatInt(fr.count, 10) + " events it was indexed with, or changed after it was read")
			}
			line := rest[:nl:nl]
			rest = rest[nl+1:]
			if k == fr.first {
				if got, ok := frames.LeadSeq(line); ok && got != k {
					return mismatch(fmt.Sprintf("the frame starts with seq %d, not the %d it was indexed with", got, k))
				}
			}
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
		if seq == fr.first+fr.count && len(rest) > 0 {
			// The frame holds more lines than its index says.
			return mismatch(fmt.Sprintf("the frame holds more than the %d events it was indexed with", fr.count))
		}
	}
	return flush()
}

// frameSpan returns the first and the last of the frames that hold the
// events [from, to), to > from.
func (r *reader) frameSpan(from, to int64) (first, last int) {
	first, _ = slices.BinarySearchFunc(r.ix.frames, from, func(f frameRef, seq int64) int {
		switch {
		case f.first+f.count <= seq:
			return -1
		case f.first > seq:
			return 1
		}
		return 0
	})
	last = first // the frame holding event to-1
	for r.ix.frames[last].first+r.ix.frames[last].count < to {
		last++
	}
	return first, last
}

// readAhead is how many decoded frames a read's decoder may hold ready
// beyond the one being emitted.
const readAhead = 2

// decoded is one frame's content, or why it could not be had.
type decoded struct {
	content []byte
	err     error
}

// aheadDecoder decodes the frames [from, to] of a read in order on its own
// goroutine, each into a fresh buffer.
type aheadDecoder struct {
	out  chan decoded
	done chan struct{}
	wg   sync.WaitGroup
}

// decodeAhead starts decoding r's frames [from, to]; with from > to there
// is nothing to decode and no goroutine.
func (r *reader) decodeAhead(from, to int) *aheadDecoder {
	a := &aheadDecoder{out: make(chan decoded, readAhead), done: make(chan struct{})}
	if from > to {
		close(a.out)
		return a
	}
	a.wg.Go(func() {
		defer close(a.out)
		var raw []byte
		for fi := from; fi <= to; fi++ {
			d := r.decodeFrame(r.ix.frames[fi], &raw)
			select {
			case a.out <- d:
			case <-a.done:
				return
			}
			if d.err != nil {
				return
			}
		}
	})
	return a
}

// decodeFrame reads and decodes one frame into a fresh buffer; raw is the
// reused buffer of its compressed bytes.
func (r *reader) decodeFrame(fr frameRef, raw *[]byte) decoded {
	frame, err := r.bytes(fr.off, fr.size, raw)
	if err != nil {
		return decoded{err: err}
	}
	content, err := r.dec.DecodeAll(frame, nil)
	if err != nil {
		return decoded{err: corruptAt(r.id, r.path, fmt.Sprintf("byte offset %d: the frame no longer decodes: %v", fr.off, err))}
	}
	return decoded{content: content}
}

// next returns the next frame's content.
func (a *aheadDecoder) next() ([]byte, error) {
	d, ok := <-a.out
	if !ok {
		return nil, errors.New("jsonl: read past the frames being decoded") // not reached: frames asks for no more than it started
	}
	return d.content, d.err
}

// stop ends the decoding and waits for its goroutine.
func (a *aheadDecoder) stop() {
	close(a.done)
	a.wg.Wait()
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
