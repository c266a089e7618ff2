package jsonl

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// CopyPrefix keeps the source's frames before the boundary byte for byte
// and compresses the lines of the frame the boundary splits again — in
// pieces when they are large — and the child reads back exactly the
// prefix, also after a fresh open scans the file.
func TestCopyPrefixCopiesWholeFramesAndSplitsOne(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	big := func(first, n int) [][]byte { // about 1 KiB per event
		out := make([][]byte, n)
		for i := range out {
			out[i] = persistencetest.Envelope(first+i, "todo/write", `{"todos":[{"content":"`+strings.Repeat("x", 1000)+`","status":"pending"}]}`)
		}
		return out
	}
	events := storeEvents(t, b, "src", persistencetest.Batch(0, 3), big(3, 3000), persistencetest.Batch(3003, 2))
	srcLog := mustRead(t, sessionLog(cfg, "src"))
	firstBatch := srcLog[bytes.Index(srcLog[4:], frameMagic)+4:] // the frames after the header frame
	for _, boundary := range []int{2, 10, 2500, 3002, 3004} {
		id := "child" + strconv.Itoa(boundary)
		h := testHeader(id)
		o, err := b.CopyPrefix(t.Context(), "src", sdk.Seq(boundary), h)
		if err != nil {
			t.Fatalf("CopyPrefix at %d: %v", boundary, err)
		}
		if err := b.Close(t.Context(), o.Handle); err != nil {
			t.Fatal(err)
		}
		_, got := readEvents(t, newTestBackend(t, cfg), id, sdk.AccessRead)
		requireEqualEvents(t, "the child", got, events[:boundary+1])
		childLog := mustRead(t, sessionLog(cfg, id))
		body := childLog[bytes.Index(childLog[4:], frameMagic)+4:]
		if boundary >= 2 && !bytes.HasPrefix(body, firstBatch[:bytes.Index(firstBatch[4:], frameMagic)+4]) {
			t.Errorf("at %d: the child does not start with the source's first batch frame verbatim", boundary)
		}
	}
	if _, err := os.Stat(sessionLog(cfg, "src")); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, sessionLog(cfg, "src")), srcLog) {
		t.Fatal("CopyPrefix changed the source's log")
	}
}
