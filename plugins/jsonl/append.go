package jsonl

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Append stores events at firstSeq onwards under compare-and-set, all or
// nothing (docs/storage.md): one write (one frame for zstd) and one fdatasync;
// on failure the file is cut back to its previous size and fsynced, and
// the call is IO_ERROR; when that rollback fails too the handle is broken
// and this and every later call is HANDLE_BROKEN. The first non-empty
// Append of a create materializes the session. An empty batch is a
// compare-and-set probe that stores nothing.
func (b *Backend) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	hd, err := b.lock(ctx, "append", handle)
	if err != nil {
		return sdk.Durable{}, err
	}
	defer hd.mu.Unlock()
	if !hd.write {
		return sdk.Durable{}, handles.ReadOnly(op, hd.id, handle)
	}
	if err := handles.CheckAppend(hd.id, firstSeq); err != nil {
		return sdk.Durable{}, err
	}
	payload, err := b.checkAndEncode(hd, firstSeq, events)
	if err != nil {
		return sdk.Durable{}, err
	}
	if len(events) == 0 {
		return hd.durable(), nil
	}
	if hd.pending {
		if err := b.materialize(hd, payload, events); err != nil {
			return sdk.Durable{}, err
		}
	} else if err := hd.writeBatch(payload, len(events), events); err != nil {
		return sdk.Durable{}, err
	}
	hd.floor = hd.ix.next
	// A handle does not pin one huge batch's size; the pools keep it for
	// the next large batch instead.
	hd.buf = poolLarge(&largeLines, hd.buf)
	hd.frame = poolLarge(&largeFrames, hd.frame)
	return hd.durable(), nil
}

// largeLines and largeFrames hold the scratch buffers of batches above
// keepScratch (lines, compressed frames) between Appends of any handle:
// back-to-back write-behind batches of tens of MiB reuse them instead of
// each allocating fresh memory that the runtime clears and the system
// faults in, and the pools let them go once collections pass without a
// batch that large.
var largeLines, largeFrames sync.Pool // *[]byte

// poolLarge puts b into pool and returns nil when it is larger than
// keepScratch; otherwise it returns b.
func poolLarge(pool *sync.Pool, b []byte) []byte {
	if cap(b) <= keepScratch {
		return b
	}
	b = b[:0]
	pool.Put(&b)
	return nil
}

// largeFor returns b when it holds n bytes or n is small, else a pooled
// buffer, when one holds n bytes, else a new one of the next power of two
// at least n: batches that grow toward the request limit then find a
// buffer after a few.
func largeFor(pool *sync.Pool, b []byte, n int) []byte {
	if cap(b) >= n || n <= keepScratch {
		return b
	}
	if p, ok := pool.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<bits.Len(uint(n-1)))
}

// parallelEncodeMin is the batch size from which a zstd batch's envelopes
// are checked on another goroutine while it is compressed.
const parallelEncodeMin = 64 << 10

// checkAndEncode checks an Append batch (every element a canonical
// envelope with the next seq, then the compare-and-set on the stored next
// seq) and renders it as lines, and for zstd as one frame; the payload is
// one of hd's scratch buffers. A large zstd batch is compressed while it is
// checked; a bad batch still fails with the check's error and nothing is
// kept. hd.mu is held.
func (b *Backend) checkAndEncode(hd *handle, firstSeq sdk.Seq, events [][]byte) ([]byte, error) {
	n := 0
	for _, ev := range events {
		n += len(ev) + 1
	}
	buf := slices.Grow(largeFor(&largeLines, hd.buf, n)[:0], n)
	for _, ev := range events {
		buf = append(buf, ev...)
		buf = append(buf, '\n')
	}
	hd.buf = buf
	if !hd.zst || len(events) == 0 {
		return buf, hd.checkCAS(firstSeq, hd.chk.checkBatch(firstSeq, events))
	}
	enc, err := b.encoder()
	if err != nil {
		return nil, err
	}
	// A frame is smaller than its lines by a factor not known yet: for a
	// large batch any pooled frame buffer will do, EncodeAll grows it.
	hd.frame = largeFor(&largeFrames, hd.frame, min(n, keepScratch+1))
	if n < parallelEncodeMin || runtime.GOMAXPROCS(0) < 2 {
		if err := hd.checkCAS(firstSeq, hd.chk.checkBatch(firstSeq, events)); err != nil {
			return nil, err
		}
		hd.frame = enc.EncodeAll(buf, hd.frame[:0])
		return hd.frame, nil
	}
	// Compression is the longer task, so it starts at once on this
	// goroutine, and a helper starts checking; the helper may take a while
	// to be scheduled, so this goroutine checks what is left once the frame
	// is done.
	check := newSharedCheck(events, int64(firstSeq))
	go check.run(&hd.helper)
	frame := enc.EncodeAll(buf, hd.frame[:0])
	check.run(&hd.chk)
	var checkErr *sdk.Error
	if f, ok := check.result(); !ok {
		checkErr = batchFault(firstSeq, f)
	}
	if err := hd.checkCAS(firstSeq, checkErr); err != nil {
		return nil, err
	}
	hd.frame = frame
	return frame, nil
}

// checkCAS returns the batch check's error, else SEQ_CONFLICT when firstSeq
// is not the stored next seq, else nil. hd.mu is held.
func (hd *handle) checkCAS(firstSeq sdk.Seq, check *sdk.Error) error {
	if check != nil {
		return check.WithSession(hd.id)
	}
	if int64(firstSeq) != hd.ix.next {
		return handles.SeqConflict(op, hd.id, int64(firstSeq), hd.ix.next)
	}
	return nil
}

// writeBatch appends payload at the committed end, fdatasyncs, and
// extends the index; on failure it rolls back (docs/storage.md). hd.mu is held.
func (hd *handle) writeBatch(payload []byte, count int, events [][]byte) error {
	off := hd.ix.end
	_, err := hd.f.WriteAt(payload, off)
	if err == nil {
		err = hd.f.Sync()
	}
	if err != nil {
		rb := hd.f.Truncate(off)
		if rb == nil {
			rb = hd.f.Sync()
		}
		if rb != nil {
			hd.broken = errors.Join(err, rb)
			return hd.brokenError()
		}
		return &sdk.Error{Code: sdk.CodeIOError, Op: op, SessionID: hd.id,
			Detail: fmt.Sprintf("appending %d events at seq %d to %s failed and was rolled back to %d bytes; nothing of the batch is stored", count, hd.ix.next, hd.path, off), Err: err}
	}
	hd.ix.addBatch(off, payload, events, hd.zst)
	fi, err := hd.f.Stat()
	if err != nil {
		// The batch is durable; only its revision is unknown. The host
		// treats the failure as ambiguous (docs/plugins.md) and re-reads.
		return handles.IOError(op, hd.id, "fstat "+hd.path+" after a durable append", err)
	}
	hd.info = fi
	return nil
}

// addBatch records a batch written at off: its lines, or its frame.
func (ix *index) addBatch(off int64, payload []byte, events [][]byte, zst bool) {
	if zst {
		ix.frames = append(ix.frames, frameRef{off: off, size: int64(len(payload)), first: ix.next, count: int64(len(events))})
	} else {
		p := off
		for _, ev := range events {
			ix.starts = append(ix.starts, p)
			p += int64(len(ev)) + 1
		}
	}
	ix.next += int64(len(events))
	ix.end = off + int64(len(payload))
}
