package jsonl

import (
	"runtime"

	"github.com/klauspost/compress/zstd"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// encoder returns the shared zstd encoder (EncodeAll is safe for
// concurrent use), made on first use at the configured level with content
// checksums.
func (b *Backend) encoder() (*zstd.Encoder, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.enc == nil {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstdLevels[b.cfg.ZstdLevel]),
			zstd.WithEncoderCRC(true),
			zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), 4)))
		if err != nil {
			return nil, handles.IOError(op, "", "making the zstd encoder", err)
		}
		b.enc = enc
	}
	return b.enc, nil
}

// fastEncoder returns the shared zstd encoder at the fastest level, with
// content checksums: CopyPrefix compresses the lines of the one batch a
// boundary splits with it, so that a fork does not wait for the
// configured level on up to a batch of lines (a few MiB of a log).
func (b *Backend) fastEncoder() (*zstd.Encoder, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fastEnc == nil {
		enc, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(true),
			zstd.WithEncoderConcurrency(min(runtime.GOMAXPROCS(0), 4)))
		if err != nil {
			return nil, handles.IOError(op, "", "making the zstd encoder", err)
		}
		b.fastEnc = enc
	}
	return b.fastEnc, nil
}

// decoder returns the shared zstd decoder (DecodeAll is safe for
// concurrent use), or nil for a plain log.
func (b *Backend) decoder(zst bool) (*zstd.Decoder, error) {
	if !zst {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dec == nil {
		dec, err := newDecoder()
		if err != nil {
			return nil, handles.IOError(op, "", "making the zstd decoder", err)
		}
		b.dec = dec
	}
	return b.dec, nil
}

func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(min(runtime.GOMAXPROCS(0), 4)))
}
