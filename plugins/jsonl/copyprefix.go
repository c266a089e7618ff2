package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// CopyPrefix implements sdk.PrefixCopier (docs/storage.md): it creates the
// session child as Create does, with a log holding exactly the stored
// events [0, boundary] of source, and returns its write handle. The log is
// the child's header unit, then the source's committed bytes up to the
// boundary copied verbatim — whole zstd frames, or lines — except the one
// frame the boundary falls inside, whose lines up to the boundary are
// compressed again (splitFrame) while the rest is copied file to file,
// inside the kernel where it can (copyRange); it is stored like a
// materialization (a fsynced temp file linked into place, the directory
// fsynced). The
// source's committed prefix is the index of this instance's write handle
// on it when there is one (its owner); otherwise a read open scans it.
func (b *Backend) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	if err := sdk.ValidateSessionID(source); err != nil {
		return sdk.Opened{}, err
	}
	o, err := b.Create(ctx, child)
	if err != nil {
		return sdk.Opened{}, err
	}
	hd, err := b.handles.Get(o.Handle)
	if err == nil {
		err = b.copyInto(ctx, hd, source, boundary)
	}
	if err != nil {
		_ = b.Close(ctx, o.Handle) // abandons the create: nothing is stored
		return sdk.Opened{}, err
	}
	hd.mu.Lock()
	defer hd.mu.Unlock()
	o.NextSeq, o.Revision = sdk.Offset(hd.ix.next), revision(hd.info)
	return o, nil
}

// prefixOf is the committed log of a source CopyPrefix reads: its index
// and its open file, whose committed bytes never change.
type prefixOf struct {
	ix   index
	f    vfs.File
	path string
	zst  bool
}

// copyInto stores the pending create hd as the copy of source's events
// [0, boundary].
func (b *Backend) copyInto(ctx context.Context, hd *handle, source string, boundary sdk.Seq) error {
	src, done, err := b.sourcePrefix(ctx, source)
	if err != nil {
		return err
	}
	defer done()
	if src.zst != hd.zst {
		return sdk.Errorf(sdk.CodeCompressionMismatch, op, "%s is stored with compression %q; this backend writes %q", src.path, compressionName(src.zst), compressionName(hd.zst)).WithSession(source)
	}
	if boundary < 0 || int64(boundary) >= src.ix.next {
		last := "none"
		if src.ix.next > 0 {
			last = strconv.FormatInt(src.ix.next-1, 10)
		}
		return sdk.Errorf(sdk.CodeInvalidBoundary, op, "boundary %d is outside the stored events of %q (last seq %s)", boundary, source, last).WithSession(source).WithSeq(int64(boundary))
	}
	return b.storeWhole(hd, func(f vfs.File, unit []byte) (index, error) {
		return b.writeChild(copiedLog(src, unit, int64(boundary), source), f)
	})
}

// storeWhole stores the pending create hd's whole log at once, as a
// materialization does (CopyPrefix, Import): fill writes it, given the
// header unit, into the new, empty temp file and returns its index.
func (b *Backend) storeWhole(hd *handle, fill func(f vfs.File, unit []byte) (index, error)) error {
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
	return b.storeLogFunc(hd, dec, filepath.Join(hd.dir, logName(sdk.FormatVersion, hd.zst)), func(f vfs.File) (index, error) { return fill(f, unit) })
}

// sourcePrefix returns source's committed log and a func that releases
// what it opened. When a write handle of this instance holds source
// (materialized and usable), its index is the committed prefix — it is
// the only writer — and the log is read through a file of its own, so a
// concurrent Close of the writer cannot pull the file away; otherwise a
// read open scans the log.
func (b *Backend) sourcePrefix(ctx context.Context, source string) (prefixOf, func(), error) {
	if w := b.claims.Holder(source); w != nil {
		w.mu.Lock()
		var (
			p   prefixOf
			err error
		)
		ok := !w.pending && w.usable() == nil
		if ok {
			p = prefixOf{ix: w.ix.snapshot(), path: w.path, zst: w.zst}
			p.f, err = b.fs.OpenFile(w.path, os.O_RDONLY, 0)
		}
		w.mu.Unlock()
		if err != nil {
			return prefixOf{}, nil, handles.IOError(op, source, "opening "+p.path, err)
		}
		if ok {
			return p, func() { p.f.Close() }, nil
		}
	}
	o, err := b.Open(ctx, source, sdk.AccessRead)
	if err != nil {
		return prefixOf{}, nil, err
	}
	r, err := b.handles.Get(o.Handle)
	if err != nil {
		return prefixOf{}, nil, err
	}
	r.mu.Lock()
	p := prefixOf{ix: r.ix.snapshot(), f: r.f, path: r.path, zst: r.zst}
	r.opened = nil
	r.mu.Unlock()
	return p, func() { _ = b.Close(ctx, o.Handle) }, nil
}

// childLog is the log CopyPrefix stores for a child: unit, then the bytes
// [from, to) of the source's log verbatim — its lines, or its first whole
// frames — then, when the boundary falls inside a frame of the source,
// that frame's lines up to the boundary compressed again (splitFrame).
type childLog struct {
	src      prefixOf
	source   string
	unit     []byte
	from, to int64
	whole    int  // zst: the source's frames copied whole
	split    bool // zst: frame whole of the source is split
	boundary int64
}

// copiedLog lays out the child's log: unit, then src's events
// [0, boundary].
func copiedLog(src prefixOf, unit []byte, boundary int64, source string) childLog {
	c := childLog{src: src, source: source, unit: unit, boundary: boundary}
	if !src.zst {
		c.from, c.to = src.ix.starts[0], src.ix.lineEnd(boundary)+1
		return c
	}
	// whole: the frames entirely at or before the boundary; the next one,
	// if the boundary is inside it, is split.
	for c.whole < len(src.ix.frames) && src.ix.frames[c.whole].first+src.ix.frames[c.whole].count-1 <= boundary {
		c.whole++
	}
	c.from, c.to = src.ix.hdrEnd, src.ix.hdrEnd
	if c.whole > 0 {
		c.from = src.ix.frames[0].off
		last := src.ix.frames[c.whole-1]
		c.to = last.off + last.size
	}
	last := src.ix.frames[max(c.whole-1, 0)]
	c.split = c.whole == 0 || last.first+last.count-1 < boundary
	return c
}

// writeChild writes c into the empty file f and returns its index. The copied
// bytes go from file to file (copyRange) while the split frame is
// compressed again.
func (b *Backend) writeChild(c childLog, f vfs.File) (index, error) {
	var (
		split     []*splitFrame
		splitErr  error
		splitting sync.WaitGroup
	)
	if c.split {
		splitting.Go(func() { split, splitErr = b.splitFrame(c.src, c.src.ix.frames[c.whole], c.boundary, c.source) })
	}
	_, werr := f.WriteAt(c.unit, 0)
	if werr == nil {
		if err := copyRange(f, int64(len(c.unit)), c.src.f, c.from, c.to-c.from); err != nil {
			werr = handles.IOError(op, c.source, "copying the prefix of "+c.src.path, err)
		}
	}
	splitting.Wait()
	for _, f := range split {
		f.wait()
	}
	switch {
	case werr != nil:
		return index{}, werr
	case splitErr != nil:
		return index{}, splitErr
	}
	shift := int64(len(c.unit)) - c.from
	ix := index{hdrEnd: int64(len(c.unit)), end: c.to + shift}
	if !c.src.zst {
		ix.starts = make([]int64, c.boundary+1)
		for k := range ix.starts {
			ix.starts[k] = c.src.ix.starts[k] + shift
		}
		ix.next = c.boundary + 1
		return ix, nil
	}
	ix.frames = make([]frameRef, c.whole, c.whole+len(split))
	for k, fr := range c.src.ix.frames[:c.whole] {
		fr.off += shift
		ix.frames[k] = fr
	}
	if c.whole > 0 {
		last := ix.frames[c.whole-1]
		ix.next = last.first + last.count
	}
	for _, sf := range split {
		if _, err := f.WriteAt(sf.frame, ix.end); err != nil {
			return index{}, err
		}
		ix.frames = append(ix.frames, frameRef{off: ix.end, size: int64(len(sf.frame)), first: ix.next, count: sf.count})
		ix.next += sf.count
		ix.end += int64(len(sf.frame))
	}
	return ix, nil
}

// copyRange copies the n bytes of src at srcOff to dst at dstOff: in the
// kernel where it can (vfs.KernelCopy), the rest through a buffer.
func copyRange(dst vfs.File, dstOff int64, src vfs.File, srcOff int64, n int64) error {
	done, err := vfs.KernelCopy(dst, dstOff, src, srcOff, n)
	if err != nil {
		return err
	}
	dstOff, srcOff, n = dstOff+done, srcOff+done, n-done
	buf := make([]byte, min(n, copyChunkBytes))
	for n > 0 {
		p := buf[:min(n, int64(len(buf)))]
		if err := readFull(src, p, srcOff); err != nil {
			return err
		}
		if _, err := dst.WriteAt(p, dstOff); err != nil {
			return err
		}
		k := int64(len(p))
		dstOff, srcOff, n = dstOff+k, srcOff+k, n-k
	}
	return nil
}

// copyChunkBytes is the buffer copyRange copies through when the kernel
// does not copy.
const copyChunkBytes = 1 << 20

// splitPieceBytes bounds the lines of one frame splitFrame writes: the
// pieces of a split batch are compressed side by side.
const splitPieceBytes = 1 << 20

// splitFrame is one frame splitFrame writes: count lines, compressed into
// frame once wait returns.
type splitFrame struct {
	count int64
	frame []byte
	done  *sync.WaitGroup
}

func (f *splitFrame) wait() { f.done.Wait() }

// splitFrame decodes the source frame fr, which holds the boundary, and
// compresses its lines up to the boundary again, at the fastest level, as
// frames of complete lines of about splitPieceBytes each, compressed
// concurrently (one
// frame per acknowledged batch is the append rule; these lines are
// stored at once, with the whole file, so any split into frames of whole
// lines is as safe). The frames are ready once each one's wait returns.
func (b *Backend) splitFrame(src prefixOf, fr frameRef, boundary int64, source string) ([]*splitFrame, error) {
	raw := make([]byte, fr.size)
	if err := readFull(src.f, raw, fr.off); err != nil {
		return nil, handles.IOError(op, source, "reading "+src.path, err)
	}
	dec, err := b.decoder(true)
	if err != nil {
		return nil, err
	}
	enc, err := b.fastEncoder()
	if err != nil {
		return nil, err
	}
	lines, err := dec.DecodeAll(raw, nil)
	if err != nil {
		return nil, corruptAt(source, src.path, fmt.Sprintf("byte offset %d: the frame no longer decodes: %v", fr.off, err))
	}
	var (
		out   []*splitFrame
		done  sync.WaitGroup
		start int
		count int64
	)
	cut := 0
	for k := fr.first; k <= boundary; k++ {
		nl := bytes.IndexByte(lines[cut:], '\n')
		if nl < 0 {
			return nil, corruptAt(source, src.path, fmt.Sprintf("byte offset %d: the frame changed after it was read", fr.off))
		}
		cut += nl + 1
		count++
		if cut-start >= splitPieceBytes || k == boundary {
			f, piece := &splitFrame{count: count, done: &done}, lines[start:cut]
			out = append(out, f)
			done.Go(func() { f.frame = enc.EncodeAll(piece, nil) })
			start, count = cut, 0
		}
	}
	return out, nil
}

// compressionName names a log's compression mode as the configuration does.
func compressionName(zst bool) string {
	if zst {
		return CompressionZstd
	}
	return CompressionNone
}

var _ sdk.PrefixCopier = (*Backend)(nil)
