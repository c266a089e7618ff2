package jsonl

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
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

// CopyPrefix stores the same child log, byte for byte, whether the kernel
// copies the whole frames (files of the OS) or they go through a buffer
// (faultfs, whose files the kernel does not hold), for a zstd and a plain
// log; a failed write of the copy fails it with IO_ERROR and stores no
// child.
func TestCopyPrefixStoresTheSameLogWithAndWithoutTheKernelCopy(t *testing.T) {
	for _, compression := range []string{CompressionZstd, CompressionNone} {
		t.Run(compression, func(t *testing.T) {
			osCfg := Config{Root: t.TempDir(), Compression: compression}
			fsys := faultfs.New()
			memCfg := Config{Root: "/data", Compression: compression}
			onOS, inMem := newTestBackend(t, osCfg), newTestBackend(t, memCfg, WithFS(fsys))
			batches := [][][]byte{persistencetest.Batch(0, 3), persistencetest.Batch(3, 400), persistencetest.Batch(403, 50)}
			storeEvents(t, onOS, "src", batches...)
			storeEvents(t, inMem, "src", batches...)
			for _, boundary := range []int{2, 300, 402, 452} {
				id := "child" + strconv.Itoa(boundary)
				for _, b := range []*Backend{onOS, inMem} {
					o, err := b.CopyPrefix(t.Context(), "src", sdk.Seq(boundary), testHeader(id))
					if err != nil {
						t.Fatalf("CopyPrefix at %d: %v", boundary, err)
					}
					if err := b.Close(t.Context(), o.Handle); err != nil {
						t.Fatal(err)
					}
				}
				mem, err := fsys.ReadFile(sessionLog(memCfg, id))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(mustRead(t, sessionLog(osCfg, id)), mem) {
					t.Errorf("at %d: the kernel-copied child log differs from the buffer-copied one", boundary)
				}
			}
			remove := fsys.Inject(faultfs.Fault{Op: faultfs.OpWrite, Name: "*.tmp"})
			_, err := inMem.CopyPrefix(t.Context(), "src", 300, testHeader("failed"))
			remove()
			if sdk.CodeOf(err) != sdk.CodeIOError {
				t.Fatalf("CopyPrefix with a failing write: %v, want %s", err, sdk.CodeIOError)
			}
			if _, err := fsys.Stat(sessionLog(memCfg, "failed")); err == nil {
				t.Fatal("a failed CopyPrefix left a child log")
			}
		})
	}
}
