package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// syncBuffer is a log sink safe for the plugin host's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.b.String()
	w.b.Reset()
	return s
}

// derived renders what a harness reads of a session: every envelope, the
// messages, the surface, the header fold, the transcript and the tools.
func derived(t *testing.T, s *session.Session) string {
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
	v, _ := s.Surface()
	fmt.Fprintln(&b, v.Nodes(), s.Transcript().Len(), s.ToolHistory())
	if h, ok := s.RequestHeader(); ok {
		b.Write(h.JSON())
	}
	return b.String()
}

// A session stored by the JSONL plugin (a real subprocess) gets a
// checkpoint when it is imported and when a released session grew; an
// open restores through it and derives exactly what a full fold derives;
// a damaged checkpoint is ignored and the open folds the log from 0.
func TestCheckpointRestoresWhatAFullFoldDoes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logs syncBuffer
	cfg := crashConfig("jsonl", mustJSON(map[string]any{"root": dir, "compression": "zstd"}))
	start := func() *Engine {
		t.Helper()
		e, err := Start(ctx, cfg, Options{Executable: logbookBin, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &logs})})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	open := func(e *Engine) (*session.Session, string) {
		t.Helper()
		logs.take()
		s, _, err := e.Store.Open(ctx, "ck")
		if err != nil {
			t.Fatal(err)
		}
		return s, logs.take()
	}
	const used = "restored through the checkpoint"
	ckFile := filepath.Join(dir, jsonl.EncodeID("ck"), "checkpoint.v1.bin")

	e := start()
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "ck", CreatedAt: 1_764_000_000_000}
	if err := e.Store.Import(ctx, h, corpus.LongSession(7, 600)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ckFile); err != nil {
		t.Fatalf("no checkpoint after an import: %v", err)
	}
	s, log := open(e)
	if !strings.Contains(log, used) {
		t.Fatalf("the open did not use the import's checkpoint; log:\n%s", log)
	}
	n := s.Len()
	for _, in := range []events.Input{events.TurnStart(1000), events.UserText(events.TextMessage{ID: "u-extra", Text: "one more"}), events.TurnEnd(1000, events.Completed())} {
		if _, err := s.Append(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Store.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	s, log = open(e)
	if !strings.Contains(log, used) || s.Len() < n+3 { // a write open may add its own marker // a write open may add its own marker
		t.Fatalf("after a release of %d events, the open restored %d (checkpoint used: %v)", n+3, s.Len(), strings.Contains(log, used))
	}
	// A live session whose log doubled gets a new checkpoint at a flush.
	before, err := os.ReadFile(ckFile)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Len() + 1 {
		if _, err := s.Append(ctx, events.TurnStart(2000+int(i))); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, events.TurnEnd(2000+int(i), events.Completed())); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Store.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if after, err := os.ReadFile(ckFile); err != nil || bytes.Equal(after, before) {
		t.Fatalf("no new checkpoint after the log doubled and was flushed (err %v); log:\n%s", err, logs.take())
	}
	if err := e.Store.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	s, log = open(e) // its write open appends the end-seed marker: the next open does not
	if !strings.Contains(log, used) {
		t.Fatalf("the open did not use the flush's checkpoint; log:\n%s", log)
	}
	viaCheckpoint := derived(t, s)
	if err := e.Store.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	logs.take()
	v, _, err := e.Store.View(ctx, "ck", nil)
	if err != nil {
		t.Fatal(err)
	}
	if log := logs.take(); !strings.Contains(log, used) || derived(t, v) != viaCheckpoint {
		t.Fatalf("a view did not restore through the checkpoint, or derived another state (log:\n%s)", log)
	}
	intact, err := os.ReadFile(ckFile)
	if err != nil {
		t.Fatal(err)
	}

	damaged := append([]byte(nil), intact...)
	damaged[len(damaged)/2] ^= 0x40
	if err := os.WriteFile(ckFile, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	s, log = open(e)
	if strings.Contains(log, used) {
		t.Fatal("a damaged checkpoint was used")
	}
	if got := derived(t, s); got != viaCheckpoint {
		t.Fatal("the restore through the checkpoint derived another state than the full fold")
	}
	if err := e.Store.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A fork child is not checkpointed on the flush that makes it durable
// (the prefix's fold would cost that flush more than the copy of the
// log), but on its release, and an open of it restores through that
// checkpoint.
func TestForkChildIsCheckpointedAtReleaseNotAtItsFirstFlush(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var logs syncBuffer
	cfg := crashConfig("jsonl", mustJSON(map[string]any{"root": dir, "compression": "zstd"}))
	e, err := Start(ctx, cfg, Options{Executable: logbookBin, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &logs})})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "src", CreatedAt: 1_764_000_000_000}
	if err := e.Store.Import(ctx, h, corpus.LongSession(7, 3000)); err != nil {
		t.Fatal(err)
	}
	at := sdk.Seq(2000)
	c, err := e.Store.Fork(ctx, store.ForkRequest{SourceID: "src", Boundary: &at, ChildID: "kid"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Flush(ctx, c); err != nil {
		t.Fatal(err)
	}
	ckFile := filepath.Join(dir, jsonl.EncodeID("kid"), "checkpoint.v1.bin")
	if _, err := os.Stat(ckFile); !os.IsNotExist(err) {
		t.Fatalf("the child's first flush wrote a checkpoint (stat: %v)", err)
	}
	want := derived(t, c)
	if err := e.Store.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ckFile); err != nil {
		t.Fatalf("no checkpoint of the child after its release: %v", err)
	}
	logs.take()
	r, _, err := e.Store.View(ctx, "kid", nil)
	if err != nil {
		t.Fatal(err)
	}
	if log := logs.take(); !strings.Contains(log, "restored through the checkpoint") {
		t.Fatalf("the view of the child did not use its checkpoint; log:\n%s", log)
	}
	if got := derived(t, r); got != want {
		t.Fatalf("the child restored through its checkpoint derives other state than the fork did")
	}
}
