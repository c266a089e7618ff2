// Package frames decodes the stored Zstandard frames an sdk.FrameReader
// hands over into consecutive chunks of canonical envelopes, as the
// backend's Read would have sent them, decoding several frames at once on
// the reader's own cores.
//
// Every frame is checked as a backend checks a frame it decodes for a
// Read: it must carry a content checksum (which the decoding verifies) and
// need no dictionary, and its content must be exactly its Count lines,
// each ending in '\n', the first one starting with the seq First. A frame
// that fails is CORRUPT_LOG naming its offset; the chunks before it have
// been delivered.
//
// It lives in sdk, beside the plugin author's interfaces, because both ends
// use it: the host decodes the frames a backend hands over, and a backend
// that stores such frames (plugins/jsonl) reads their lines with the same
// helpers (LeadSeq).
package frames

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A chunk holds at most ChunkEvents envelopes, the chunk size of a Read.
const ChunkEvents = 512

// maxContent bounds what one frame may decode to: a frame holds one
// batch, which fit one plugin request.
const maxContent = sdk.MaxRPCMaxBytes

// decoder is the shared decoder; DecodeAll is safe for concurrent use.
var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithDecoderMaxMemory(maxContent))
})

// Read reads the events [from, to) of the handle's session through fr and
// calls fn with consecutive chunks of them (fresh buffers fn may keep);
// id names the session in errors. framed is false, and fn was not called,
// when the backend does not store this log as frames: read it through
// Read instead. Events the backend's frames hold outside [from, to) are
// skipped; a frame that holds other seqs than the range needs, or a range
// not covered to its end, is CORRUPT_LOG.
func Read(ctx context.Context, fr sdk.FrameReader, id, handle string, from, to sdk.Offset, fn func(events [][]byte) error) (framed bool, err error) {
	dec, err := decoder()
	if err != nil {
		return false, sdk.Wrapf(sdk.CodeIOError, "frames", err, "making the zstd decoder")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *job, workers)
	order := make(chan *job, 2*workers) // decoded or decoding, in log order
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range work {
				j.decode(dec, id)
			}
		})
	}
	emitted := make(chan error, 1)
	e := &emitter{id: id, next: int64(from), to: int64(to), fn: fn}
	go func() {
		var err error
		for j := range order {
			<-j.done
			if err == nil {
				if err = e.frame(j); err != nil {
					cancel() // the read stops at its next frame
				}
			}
		}
		emitted <- err
	}()
	framed, rerr := fr.ReadFrames(ctx, handle, from, int64(to-from), func(frames []sdk.Frame) error {
		for _, f := range frames {
			j := &job{frame: f, done: make(chan struct{})}
			select {
			case order <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
			work <- j // a worker is free once order has room
		}
		return nil
	})
	close(work)
	close(order)
	eerr := <-emitted
	wg.Wait()
	switch {
	case eerr != nil: // a bad frame or fn's error, which stopped the read
		return true, eerr
	case rerr != nil:
		return framed, rerr
	case !framed:
		return false, nil
	}
	return true, e.finish()
}

// job is one frame and, once done is closed, its lines or why not.
type job struct {
	frame sdk.Frame
	lines [][]byte
	err   error
	done  chan struct{}
}

// decode decodes j's frame into a fresh buffer and splits its lines,
// checking them as the package documentation says.
func (j *job) decode(dec *zstd.Decoder, id string) {
	defer close(j.done)
	f := j.frame
	var h zstd.Header
	if err := h.Decode(f.Data); err != nil {
		j.err = corrupt(id, f, "not a zstd frame header: "+err.Error())
		return
	}
	switch {
	case h.Skippable || !h.HasCheckSum || h.DictionaryID != 0:
		j.err = corrupt(id, f, "not a frame this log stores (skippable, without content checksum or needing a dictionary)")
		return
	case f.Count <= 0 || f.First < 0:
		j.err = corrupt(id, f, fmt.Sprintf("indexed with %d events from seq %d", f.Count, f.First))
		return
	}
	var dst []byte
	if h.HasFCS && h.FrameContentSize <= maxContent {
		dst = make([]byte, 0, h.FrameContentSize)
	}
	content, err := dec.DecodeAll(f.Data, dst)
	if err != nil {
		j.err = corrupt(id, f, fmt.Sprintf("the frame no longer decodes: %v", err))
		return
	}
	lines := make([][]byte, 0, f.Count)
	for len(content) > 0 {
		nl := bytes.IndexByte(content, '\n')
		if nl < 0 || int64(len(lines)) == f.Count {
			break
		}
		lines = append(lines, content[:nl:nl])
		content = content[nl+1:]
	}
	switch {
	case int64(len(lines)) < f.Count:
		j.err = corrupt(id, f, "the frame changed after it was read")
	case len(content) > 0:
		j.err = corrupt(id, f, fmt.Sprintf("the frame holds more than the %d events it was indexed with", f.Count))
	default:
		if got, ok := LeadSeq(lines[0]); ok && got != int64(f.First) {
			j.err = corrupt(id, f, fmt.Sprintf("the frame starts with seq %d, not the %d it was indexed with", got, f.First))
		}
		j.lines = lines
	}
}

// emitter cuts the decoded frames into the chunks of [next, to).
type emitter struct {
	id       string
	next, to int64
	fn       func([][]byte) error
}

// frame emits the lines of j's frame that are in the range: views of the
// frame's buffer when the range holds the whole frame, else copies, so that
// a short read does not keep a whole frame.
func (e *emitter) frame(j *job) error {
	if j.err != nil {
		return j.err
	}
	if e.next >= e.to {
		return nil // past the range
	}
	f := j.frame
	first := int64(f.First)
	if first > e.next || first+f.Count <= e.next {
		return corrupt(e.id, f, fmt.Sprintf("the frame holds seqs %d … %d where %d was expected", first, first+f.Count-1, e.next))
	}
	lines := j.lines[e.next-first : min(f.Count, e.to-first)]
	if int64(len(lines)) < f.Count {
		lines = copied(lines)
	}
	for len(lines) > 0 && e.next < e.to {
		n := min(len(lines), ChunkEvents)
		if err := e.fn(lines[:n:n]); err != nil {
			return err
		}
		lines, e.next = lines[n:], e.next+int64(n)
	}
	return nil
}

// finish reports a read whose frames ended before its range did.
func (e *emitter) finish() error {
	if e.next < e.to {
		err := sdk.Errorf(sdk.CodeCorruptLog, "frames", "the stored frames end at seq %d; the read needs %d", e.next, e.to)
		err.SessionID = e.id
		return err
	}
	return nil
}

// copied returns lines copied into one fresh buffer.
func copied(lines [][]byte) [][]byte {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(lines))
	for i, l := range lines {
		s := len(buf)
		buf = append(buf, l...)
		out[i] = buf[s:len(buf):len(buf)]
	}
	return out
}

func corrupt(id string, f sdk.Frame, detail string) error {
	e := sdk.Errorf(sdk.CodeCorruptLog, "frames", "stored frame at byte offset %d: %s", f.Offset, detail)
	e.SessionID = id
	return e
}

// LeadSeq reads the seq of an envelope that starts with its seq member, as
// the host writes them; ok is false for any other.
func LeadSeq(env []byte) (seq int64, ok bool) {
	rest, ok := bytes.CutPrefix(env, []byte(`{"seq":`))
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && n < 16 && '0' <= rest[n] && rest[n] <= '9' {
		seq = seq*10 + int64(rest[n]-'0')
		n++
	}
	return seq, n > 0 && n < len(rest) && rest[n] == ','
}
