package jsonl

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestFirstReadAfterOpen covers the first Read after an open, which serves
// the bytes the open read: a partial range first, then whole reads, and a
// write handle that appends before it reads.
func TestFirstReadAfterOpen(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	var batches [][][]byte
	for first := 0; first < 3000; first += 700 {
		batches = append(batches, persistencetest.Batch(first, min(700, 3000-first)))
	}
	all := storeEvents(t, b, "s1", batches...)

	read := func(h string, off sdk.Offset, n int64) [][]byte {
		var got [][]byte
		if err := b.Read(t.Context(), h, off, n, func(ev [][]byte) error {
			got = append(got, ev...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	o, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	requireEqualEvents(t, "first read [650, 1500)", read(o.Handle, 650, 850), all[650:1500])
	requireEqualEvents(t, "second read", read(o.Handle, 0, -1), all)
	b.Close(t.Context(), o.Handle)

	o, err = b.Open(t.Context(), "s1", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	requireEqualEvents(t, "first read, all", read(o.Handle, 0, -1), all)
	requireEqualEvents(t, "second read, all", read(o.Handle, 0, -1), all)
	b.Close(t.Context(), o.Handle)

	o, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	more := persistencetest.Batch(3000, 100)
	if _, err := b.Append(t.Context(), o.Handle, 3000, more); err != nil {
		t.Fatal(err)
	}
	all = append(all, more...)
	requireEqualEvents(t, "write handle, after append", read(o.Handle, 0, -1), all)
	requireEqualEvents(t, "write handle, again", read(o.Handle, 2000, -1), all[2000:])
	b.Close(t.Context(), o.Handle)
}

// TestEnvelopesPieces checks that a run large enough to be checked in
// pieces reports the same first bad line as one checked whole.
func TestEnvelopesPieces(t *testing.T) {
	lines := persistencetest.Batch(0, 1)
	n := 5*pieceMin/len(lines[0]) + 10
	lines = persistencetest.Batch(0, n)
	var c checker
	if f, ok := c.envelopes(lines, 0); !ok {
		t.Fatalf("good run refused: %+v", f)
	}
	for _, bad := range [][]int{{n - 1}, {n / 2, n - 3}, {1, n - 1}, {n / 3}} {
		run := make([][]byte, n)
		copy(run, lines)
		for _, k := range bad {
			run[k] = []byte(`{"seq":1}`)
		}
		f, ok := c.envelopes(run, 0)
		w, wok := c.envelopesRun(run, 0)
		if ok || wok || f != w || f.index != bad[0] {
			t.Fatalf("bad %v: pieces %+v %v; whole %+v %v", bad, f, ok, w, wok)
		}
		wrong := (bad[0] + 1) % n
		run[bad[0]] = lines[wrong] // a good envelope with the wrong seq
		for _, k := range bad[1:] {
			run[k] = lines[k]
		}
		f, ok = c.envelopes(run, 0)
		if ok || f.reason != "" || f.index != bad[0] || f.seq != int64(wrong) {
			t.Fatalf("seq at %d: %+v %v", bad[0], f, ok)
		}
	}
}

// A watch's read handle reads no events, so it does not keep the bytes its
// open read for a first read while it watches.
func TestWatchKeepsNoOpenedBytes(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s", persistencetest.Batch(0, 10))
	o, err := b.Open(t.Context(), "s", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	b.Close(t.Context(), o.Handle)
	tag, n, _ := strings.Cut(o.Handle, "-h")
	last, _ := strconv.Atoi(n)
	watching := tag + "-h" + strconv.Itoa(last+1) // the next handle this backend makes
	stop := errors.New("stop")
	err = b.Watch(t.Context(), "s", 1, func(sdk.Offset) error {
		hd, err := b.handles.Get(watching)
		if err != nil {
			t.Fatal(err)
		}
		hd.mu.Lock()
		defer hd.mu.Unlock()
		if hd.opened != nil {
			t.Errorf("the watch's handle keeps %d bytes of the log", len(hd.opened))
		}
		return stop
	})
	if err != stop {
		t.Fatal(err)
	}
}
