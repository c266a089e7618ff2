package jsonl

import (
	"bytes"
	"errors"
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

// A large batch is checked in pieces by two goroutines; a bad event in any
// piece still fails the batch with the error of the first bad event, and
// nothing of it is stored.
func TestLargeBatchCheckNamesTheFirstBadEvent(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd, ZstdLevel: "default"}
	b := newTestBackend(t, cfg)
	good := corpus.Session(7, 1500)
	storeEvents(t, b, "s1", good[:1])
	o, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	batch := good[1:]
	if size := len(bytes.Join(batch, nil)); size < 8*sharedPieceBytes {
		t.Fatalf("the batch is only %d bytes; the test needs many pieces", size)
	}
	with := func(edits map[int][]byte) [][]byte {
		out := append([][]byte(nil), batch...)
		for i, ev := range edits {
			out[i] = ev
		}
		return out
	}
	spaced := append([]byte(`{ `), batch[900][1:]...) // not canonical
	wrongSeq := good[5]                               // seq 5 where 1001 belongs
	cases := []struct {
		name  string
		batch [][]byte
		code  sdk.Code
		index int
	}{
		{"late bad envelope", with(map[int][]byte{899: spaced}), sdk.CodeEnvelopeInvalid, 899},
		{"late wrong seq", with(map[int][]byte{1000: wrongSeq}), sdk.CodeSeqNotContiguous, 1000},
		{"first of two", with(map[int][]byte{1000: wrongSeq, 1200: spaced}), sdk.CodeSeqNotContiguous, 1000},
		{"last event", with(map[int][]byte{len(batch) - 1: []byte("{}")}), sdk.CodeEnvelopeInvalid, len(batch) - 1},
	}
	for _, c := range cases {
		_, err := b.Append(t.Context(), o.Handle, 1, c.batch)
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != c.code || (e.Index == nil || *e.Index != c.index) {
			t.Fatalf("%s: Append = %v; want %s at index %d", c.name, err, c.code, c.index)
		}
	}
	d, err := b.Append(t.Context(), o.Handle, 1, batch)
	if err != nil || d.NextSeq != sdk.Offset(len(good)) {
		t.Fatalf("the good batch after the bad ones: %+v, %v", d, err)
	}
}
