package jsonl

import (
	"sync"

	"github.com/klauspost/compress/zstd"
)

// streamWindow is the zstd window of frames made by a streamEncoders: the
// farthest back a match may reach, and what a decoder must buffer.
const streamWindow = 1 << 20

// streamEncoders compresses one large batch into one zstd frame on two
// goroutines. klauspost's stream encoder, given a concurrency of two, finds
// the matches of a 128 KiB block while it entropy-codes the block before,
// where EncodeAll does both in turn on one goroutine; the frame is the same
// standard frame with a content size and checksum. A stream encoder is
// stateful, so each call takes one from a pool.
type streamEncoders struct {
	level zstd.EncoderLevel
	pool  sync.Pool // *zstd.Encoder, reset to no writer
}

// encode appends the frame of src to dst.
func (s *streamEncoders) encode(dst, src []byte) ([]byte, error) {
	enc, _ := s.pool.Get().(*zstd.Encoder)
	if enc == nil {
		var err error
		enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(s.level), zstd.WithEncoderCRC(true),
			zstd.WithEncoderConcurrency(2), zstd.WithWindowSize(streamWindow))
		if err != nil {
			return dst, err
		}
	}
	w := appendWriter{buf: dst}
	enc.ResetContentSize(&w, int64(len(src)))
	_, err := enc.Write(src)
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return dst, err
	}
	enc.Reset(nil) // let go of w
	s.pool.Put(enc)
	return w.buf, nil
}

// appendWriter is an io.Writer that appends to buf.
type appendWriter struct{ buf []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	return len(p), nil
}
