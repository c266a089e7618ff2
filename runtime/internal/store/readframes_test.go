package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// framesHidden is a backend without the read-frames capability: the store
// reads it through Read.
type framesHidden struct {
	sdk.Persistence
	sdk.Checkpointer
}

// countingFrames counts the frames a JSONL backend hands over.
type countingFrames struct {
	*jsonl.Backend
	frames int
}

func (c *countingFrames) ReadFrames(ctx context.Context, handle string, off sdk.Offset, n int64, fn func([]sdk.Frame) error) (bool, error) {
	return c.Backend.ReadFrames(ctx, handle, off, n, func(fs []sdk.Frame) error {
		c.frames += len(fs)
		return fn(fs)
	})
}

// rendered is what a harness reads of s: every envelope and every message.
func rendered(t *testing.T, s *session.Session) string {
	t.Helper()
	var b strings.Builder
	for _, e := range s.Events().All() {
		b.Write(e.Envelope())
		b.WriteByte('\n')
	}
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.All() {
		b.Write(m.JSON())
		b.WriteByte('\n')
	}
	return b.String()
}

// A JSONL+zstd log restores to byte-identical sessions through its stored
// frames (decoded by the host) and through Read, with its checkpoint and
// without, for a whole view, a view at a seq inside a frame, and an open.
func TestRestoreThroughFramesEqualsRead(t *testing.T) {
	dir := t.TempDir()
	b, err := jsonl.New(jsonl.Config{Root: dir, Compression: jsonl.CompressionZstd})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdk.Persistence(b).(sdk.FrameReader); !ok {
		t.Fatal("the JSONL backend is no sdk.FrameReader")
	}
	counted := &countingFrames{Backend: b}
	framed := newTestStore(t, nil, Backend{Name: "jsonl", Persistence: counted})
	read := newTestStore(t, nil, Backend{Name: "jsonl", Persistence: framesHidden{b, b}})
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1_764_000_000_000}
	envs := corpus.LongSession(3, 4000) // about 9 MB: an import stores frames of 4 MiB
	if err := framed.Import(t.Context(), h, envs); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, jsonl.EncodeID("s"), "checkpoint.v1.bin")
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("no checkpoint after the import: %v", err)
	}
	at := sdk.Seq(len(envs)/2 + 1)
	compare := func(what string) {
		t.Helper()
		for _, seq := range []*sdk.Seq{nil, &at} {
			v1, _, err1 := framed.View(t.Context(), "s", seq)
			v2, _, err2 := read.View(t.Context(), "s", seq)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: views: %v; %v", what, err1, err2)
			}
			if rendered(t, v1) != rendered(t, v2) {
				t.Fatalf("%s, view at %v: the frames and Read restored different sessions", what, seq)
			}
		}
		if counted.frames == 0 {
			t.Fatalf("%s: the views were not read through the frames", what)
		}
		s1, _, err := framed.Open(t.Context(), "s")
		if err != nil {
			t.Fatal(err)
		}
		r1 := rendered(t, s1)
		if err := framed.Release(t.Context(), s1); err != nil {
			t.Fatal(err)
		}
		s2, _, err := read.Open(t.Context(), "s")
		if err != nil {
			t.Fatal(err)
		}
		if rendered(t, s2) != r1 {
			t.Fatalf("%s: opens through the frames and through Read restored different sessions", what)
		}
		if err := read.Release(t.Context(), s2); err != nil {
			t.Fatal(err)
		}
	}
	compare("with the checkpoint")
	if err := os.Remove(ck); err != nil {
		t.Fatal(err)
	}
	compare("without a checkpoint")
}
