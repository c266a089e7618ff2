package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// withoutCopyPrefix hides every optional capability of a backend: the
// store sees only sdk.Persistence.
type withoutCopyPrefix struct{ sdk.Persistence }

// A fork through the copy-prefix capability and a fork through Create and
// Append store byte-identical children: the same envelopes in JSONL+zstd
// (primary) and SQLite (mirror), real plugin subprocesses, and the same
// decompressed JSONL log after the header line. The copy's JSONL log
// holds the source's frames verbatim, which only the copy writes.
func TestForkStoresTheSameChildWithAndWithoutCopyPrefix(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root := filepath.Join(dir, "jsonl")
	jconf, _ := json.Marshal(map[string]any{"root": root, "compression": "zstd"})
	sconf, _ := json.Marshal(map[string]any{"path": filepath.Join(dir, "sessions.db")})
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: "jsonl", Config: jconf}, {Name: "sqlite", Config: sconf}}
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	jsonl, sqlite := e.Plugins["jsonl"].Persistence(), e.Plugins["sqlite"].Persistence()
	for name, p := range map[string]sdk.Persistence{"jsonl": jsonl, "sqlite": sqlite} {
		if _, ok := persistencetest.Capability[sdk.PrefixCopier](p); !ok {
			t.Fatalf("the %s plugin's persistence reports no sdk.PrefixCopier: it does not declare %s", name, sdk.CapabilityCopyPrefix)
		}
	}
	plain, err := store.New(store.Options{Backends: []store.Backend{{Name: "jsonl", Persistence: withoutCopyPrefix{jsonl}}, {Name: "sqlite", Persistence: withoutCopyPrefix{sqlite}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)

	src, err := e.Store.Create(ctx, store.CreateOptions{ID: "src"})
	if err != nil {
		t.Fatal(err)
	}
	envs := corpus.Session(7, 1200)
	for i, env := range envs {
		if _, err := src.Append(ctx, appendInputOf(parse(t, env))); err != nil {
			t.Fatal(err)
		}
		if i%97 == 96 { // many batches: many frames to copy whole, one to split
			if _, err := e.Store.Flush(ctx, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := e.Store.Flush(ctx, src); err != nil {
		t.Fatal(err)
	}
	srcFrame := firstBatchFrame(t, logOf(t, root, "src")) // seqs 0–96
	for _, at := range []sdk.Seq{0, 96, 97, 500, 733, sdk.Seq(len(envs) - 1)} {
		copied, appended := "copy"+strconv.FormatInt(int64(at), 10), "plain"+strconv.FormatInt(int64(at), 10)
		c, err := e.Store.Fork(ctx, store.ForkRequest{Source: src, Boundary: &at, ChildID: copied})
		if err != nil {
			t.Fatalf("fork with copy-prefix at %d: %v", at, err)
		}
		a, err := plain.Fork(ctx, store.ForkRequest{SourceID: "src", Boundary: &at, ChildID: appended})
		if err != nil {
			t.Fatalf("fork without copy-prefix at %d: %v", at, err)
		}
		for _, f := range []struct {
			st *store.Store
			s  interface{ ID() string }
		}{{e.Store, c}, {plain, a}} {
			s, _ := f.st.Get(f.s.ID())
			if _, err := f.st.Flush(ctx, s); err != nil {
				t.Fatalf("flush of %s: %v", f.s.ID(), err)
			}
			if err := f.st.Release(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		want := c.Events().Slice()
		for name, p := range map[string]sdk.Persistence{"jsonl": jsonl, "sqlite": sqlite} {
			gotCopy, gotPlain := readStored(t, p, copied), readStored(t, p, appended)
			if len(gotCopy) != len(want) || len(gotPlain) != len(want) {
				t.Fatalf("at %d, %s: the copy stores %d events, the plain fork %d; the child holds %d", at, name, len(gotCopy), len(gotPlain), len(want))
			}
			for i := range want {
				if !bytes.Equal(gotCopy[i], gotPlain[i]) || !bytes.Equal(gotCopy[i], want[i].Envelope()) {
					t.Fatalf("at %d, %s: event %d differs:\ncopy  %s\nplain %s", at, name, i, gotCopy[i], gotPlain[i])
				}
			}
		}
		copyLog, plainLog := logOf(t, root, copied), logOf(t, root, appended)
		if a, b := afterHeader(t, decompressed(t, copyLog)), afterHeader(t, decompressed(t, plainLog)); !bytes.Equal(a, b) {
			t.Fatalf("at %d: the decompressed JSONL logs differ after their header lines", at)
		}
		if at >= 96 && !bytes.Contains(copyLog, srcFrame) {
			t.Fatalf("at %d: the copy's JSONL log does not hold the source's first batch frame verbatim", at)
		}
	}
}

// logOf is the stored zstd log of session id under root (ids here need no
// encoding).
func logOf(t *testing.T, root, id string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, id, "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decompressed(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// afterHeader is a plain log without its header line.
func afterHeader(t *testing.T, log []byte) []byte {
	t.Helper()
	_, rest, ok := bytes.Cut(log, []byte("\n"))
	if !ok {
		t.Fatal("a log without a header line")
	}
	return rest
}

// firstBatchFrame is the second zstd frame of a log (the first after the
// header frame), found by decoding frame by frame.
func firstBatchFrame(t *testing.T, log []byte) []byte {
	t.Helper()
	starts := frameStarts(t, log)
	if len(starts) < 3 {
		t.Fatalf("the source log has %d frames; want at least 3", len(starts))
	}
	return log[starts[1]:starts[2]]
}

// frameStarts returns the offset of each frame of a zstd log, and its end.
func frameStarts(t *testing.T, log []byte) []int {
	t.Helper()
	magic := []byte{0x28, 0xB5, 0x2F, 0xFD}
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var starts []int
	for off := 0; off < len(log); {
		starts = append(starts, off)
		next := len(log)
		for k := off + 1; k+4 <= len(log); k++ {
			if bytes.Equal(log[k:k+4], magic) {
				if _, err := d.DecodeAll(log[off:k], nil); err == nil {
					next = k
					break
				}
			}
		}
		off = next
	}
	return append(starts, len(log))
}
