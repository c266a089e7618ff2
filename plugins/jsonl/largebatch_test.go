package jsonl

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A batch large enough to be checked while it is compressed (and of
// several 128 KiB zstd blocks) is exactly one frame after the header frame:
// a standard, checksummed frame declaring its content size, which decodes
// to the batch's lines. A write open reads the same envelopes back.
func TestLargeBatchIsOneFrame(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd, ZstdLevel: "default"}
	b := newTestBackend(t, cfg)
	batch := corpus.Session(7, 1500)
	var lines []byte
	for _, ev := range batch {
		lines = append(append(lines, ev...), '\n')
	}
	if len(lines) < 4*parallelEncodeMin || len(lines) < 3*128<<10 {
		t.Fatalf("the batch is only %d bytes; the test needs several zstd blocks", len(lines))
	}
	storeEvents(t, b, "s1", batch)

	file := mustRead(t, sessionLog(cfg, "s1"))
	var frames [][]byte
	for rest := file; len(rest) > 0; {
		var h zstd.Header
		if err := h.Decode(rest); err != nil {
			t.Fatal(err)
		}
		dec, _ := zstd.NewReader(nil)
		n, st, reason := frameSpan(rest)
		if st != unitGood {
			t.Fatalf("frame %d: %s", len(frames), reason)
		}
		frames = append(frames, rest[:n])
		if len(frames) == 2 {
			if !h.HasCheckSum || !h.HasFCS || h.FrameContentSize != uint64(len(lines)) {
				t.Fatalf("batch frame header %+v; want a checksum and content size %d", h, len(lines))
			}
			got, err := dec.DecodeAll(rest[:n], nil)
			if err != nil || !bytes.Equal(got, lines) {
				t.Fatalf("the batch frame decodes to %d bytes (%v); want the %d bytes of its lines", len(got), err, len(lines))
			}
		}
		dec.Close()
		rest = rest[n:]
	}
	if len(frames) != 2 {
		t.Fatalf("the log holds %d frames; want the header frame and one batch frame", len(frames))
	}

	o, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	var back [][]byte
	if err := b.Read(t.Context(), o.Handle, 0, -1, func(evs [][]byte) error { back = append(back, evs...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(batch) || !bytes.Equal(back[len(back)-1], batch[len(batch)-1]) {
		t.Fatalf("read back %d events; want %d byte-equal", len(back), len(batch))
	}
}
