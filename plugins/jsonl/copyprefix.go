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
// compressed again (splitFrame); it is stored like a materialization (a
// fsynced temp file linked into place, the directory fsynced). The
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
	content, ix, err := b.copiedLog(src, unit, int64(boundary), source)
	if err != nil {
		return err
	}
	b.removeStaleTemps(hd.dir)
	return b.storeLog(hd, dec, filepath.Join(hd.dir, logName(1, hd.zst)), content, ix)
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
	r.kept = nil
	r.mu.Unlock()
	return p, func() { _ = b.Close(ctx, o.Handle) }, nil
}

// copiedLog renders the child's log: unit, then src's events [0, boundary]
// — whole frames or lines as stored, the frame the boundary splits
// compressed again — and returns it with its index.
func (b *Backend) copiedLog(src prefixOf, unit []byte, boundary int64, source string) ([]byte, index, error) {
	ix := index{hdrEnd: int64(len(unit))}
	if !src.zst {
		from, to := src.ix.starts[0], src.ix.lineEnd(boundary)+1
		content := make([]byte, len(unit), int64(len(unit))+to-from)
		copy(content, unit)
		content = content[:int64(len(unit))+to-from]
		if err := readFull(src.f, content[len(unit):], from); err != nil {
			return nil, index{}, handles.IOError(op, source, "reading "+src.path, err)
		}
		shift := int64(len(unit)) - from
		ix.starts = make([]int64, boundary+1)
		for k := range ix.starts {
			ix.starts[k] = src.ix.starts[k] + shift
		}
		ix.next, ix.end = boundary+1, int64(len(content))
		return content, ix, nil
	}
	// whole: the frames entirely at or before the boundary; the next one,
	// if the boundary is inside it, is split.
	whole := 0
	for whole < len(src.ix.frames) && src.ix.frames[whole].first+src.ix.frames[whole].count-1 <= boundary {
		whole++
	}
	var from, to int64 = src.ix.hdrEnd, src.ix.hdrEnd
	if whole > 0 {
		from = src.ix.frames[0].off
		last := src.ix.frames[whole-1]
		to = last.off + last.size
	}
	// The frame the boundary splits is decoded and compressed again while
	// the whole frames are read.
	var (
		split     []*splitFrame
		splitErr  error
		splitting sync.WaitGroup
	)
	if last := src.ix.frames[max(whole-1, 0)]; whole == 0 || last.first+last.count-1 < boundary {
		splitting.Go(func() { split, splitErr = b.splitFrame(src, src.ix.frames[whole], boundary, source) })
	}
	content := make([]byte, int64(len(unit))+to-from, int64(len(unit))+to-from+splitPieceBytes)
	copy(content, unit)
	rerr := readFull(src.f, content[len(unit):], from)
	splitting.Wait()
	for _, f := range split {
		f.wait()
	}
	switch {
	case rerr != nil:
		return nil, index{}, handles.IOError(op, source, "reading "+src.path, rerr)
	case splitErr != nil:
		return nil, index{}, splitErr
	}
	shift := int64(len(unit)) - from
	ix.frames = make([]frameRef, whole, whole+len(split))
	for k, fr := range src.ix.frames[:whole] {
		fr.off += shift
		ix.frames[k] = fr
	}
	ix.end = int64(len(content))
	if whole > 0 {
		last := ix.frames[whole-1]
		ix.next = last.first + last.count
	}
	for _, f := range split {
		ix.frames = append(ix.frames, frameRef{off: ix.end, size: int64(len(f.frame)), first: ix.next, count: f.count})
		content = append(content, f.frame...)
		ix.next += f.count
		ix.end = int64(len(content))
	}
	return content, ix, nil
}

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
