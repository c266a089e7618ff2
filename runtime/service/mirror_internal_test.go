package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// fakeImporter stands in for a SourceImporter in the Mirror's unit tests:
// it records every call, holds a "live" session per file imported since
// the last ReleaseIdle(0), and refuses above a cap as the host does.
type fakeImporter struct {
	mu       sync.Mutex
	calls    []string // "import <from> <n>", "release <idle>", "close"
	live     map[string]bool
	cap      int
	failNext int // Imports to fail with IO_ERROR
	imported []string
	maxLive  int
}

func (f *fakeImporter) Import(_ context.Context, r ImportSourceRequest) (ImportSummary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("import %s %d", r.From, len(r.Paths)))
	if !r.CompleteLinesOnly {
		return ImportSummary{}, errors.New("CompleteLinesOnly not set")
	}
	if f.failNext > 0 {
		f.failNext--
		return ImportSummary{}, sdk.Errorf(sdk.CodeIOError, "import", "disk on fire")
	}
	n := 0
	for _, p := range r.Paths {
		if !f.live[p] {
			n++
		}
	}
	if f.cap > 0 && len(f.live)+n > f.cap {
		return ImportSummary{}, sdk.Errorf(sdk.CodeTooManyLiveSessions, "import", "cap %d", f.cap)
	}
	for _, p := range r.Paths {
		f.live[p] = true
		f.imported = append(f.imported, p)
	}
	f.maxLive = max(f.maxLive, len(f.live))
	return ImportSummary{Files: len(r.Paths), Events: int64(len(r.Paths)), Sessions: []string{r.From}}, nil
}

func (f *fakeImporter) ReleaseIdle(_ context.Context, idle time.Duration) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("release %s", idle))
	if idle != 0 {
		return 0, nil
	}
	n := len(f.live)
	clear(f.live)
	return n, nil
}

func (f *fakeImporter) Close(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "close")
	return nil
}

func (f *fakeImporter) snapshot() (calls, imported []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls), slices.Clone(f.imported)
}

// mostLive is the most sessions f held live at once. It takes the lock:
// the mirror may be importing another pass meanwhile.
func (f *fakeImporter) mostLive() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxLive
}

// runMirror runs m over f until the test ends; passes come on the channel.
func runMirror(t *testing.T, m *Mirror) (<-chan MirrorPass, func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	passes := make(chan MirrorPass, 100)
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, func(p MirrorPass) { passes <- p }) }()
	stopped := false
	var err error
	stop := func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		return err
	}
	t.Cleanup(func() { stop() })
	return passes, stop
}

func nextPass(t *testing.T, passes <-chan MirrorPass) MirrorPass {
	t.Helper()
	select {
	case p := <-passes:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no pass within 10s")
		return MirrorPass{}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// The first pass imports what is there in chunks, releasing after each, so
// it never holds more than a chunk live; then each write is imported in
// its source's dialect; stopping closes the importer once.
func TestMirrorFirstPassInChunksThenChanges(t *testing.T) {
	claude, codex := t.TempDir(), t.TempDir()
	for i := range 40 {
		write(t, filepath.Join(claude, fmt.Sprintf("p%d", i%3), fmt.Sprintf("s%02d.jsonl", i)), "{}\n")
	}
	f := &fakeImporter{live: map[string]bool{}}
	m, err := newMirror(MirrorOptions{Sources: []MirrorSource{{From: "claude-code", Dir: claude}, {From: "codex", Dir: codex}}},
		func() importer { return f })
	if err != nil {
		t.Fatal(err)
	}
	passes, stop := runMirror(t, m)
	first := nextPass(t, passes)
	if !first.First || first.Err != nil || first.Summary.Files != 40 || first.Mode != "fsnotify" {
		t.Fatalf("first pass %+v; want 40 files in fsnotify mode", first)
	}
	calls, _ := f.snapshot()
	want := []string{"import claude-code 16", "release 0s", "import claude-code 16", "release 0s", "import claude-code 8", "release 0s"}
	if !slices.Equal(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if held := f.mostLive(); held > mirrorFirstChunk {
		t.Fatalf("held %d live at once, want at most %d", held, mirrorFirstChunk)
	}

	cx := filepath.Join(codex, "2026", "12", "07", "rollout.jsonl")
	write(t, cx, "{}\n")
	p := nextPass(t, passes)
	_, imported := f.snapshot()
	if p.First || p.Err != nil || p.Summary.Files != 1 || imported[len(imported)-1] != cx {
		t.Fatalf("pass %+v importing %v; want the codex file", p, imported[len(imported)-1])
	}
	calls, _ = f.snapshot()
	if last := calls[len(calls)-1]; last != "import codex 1" {
		t.Fatalf("last call %q, want import codex 1", last)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	calls, _ = f.snapshot()
	if calls[len(calls)-1] != "close" || slices.Index(calls, "close") != len(calls)-1 {
		t.Fatalf("calls %v: want one close, last", calls)
	}
}

// A failed import is tried again without a new write, and a refusal for
// the live-session cap releases every idle session and retries at once.
func TestMirrorRetriesFailuresAndReleasesAtTheCap(t *testing.T) {
	dir := t.TempDir()
	f := &fakeImporter{live: map[string]bool{}, cap: 2}
	m, err := newMirror(MirrorOptions{Sources: []MirrorSource{{From: "pi", Dir: dir}}, IdleRelease: time.Second},
		func() importer { return f })
	if err != nil {
		t.Fatal(err)
	}
	m.retryEvery = 100 * time.Millisecond
	passes, _ := runMirror(t, m)
	if p := nextPass(t, passes); !p.First || p.Summary.Files != 0 {
		t.Fatalf("first pass %+v, want nothing", p)
	}

	// The cap: two files live, a third refused, released, imported.
	for i := range 3 {
		name := filepath.Join(dir, fmt.Sprintf("s%d.jsonl", i))
		write(t, name, "{}\n")
		if p := nextPass(t, passes); p.Err != nil || p.Summary.Files != 1 {
			t.Fatalf("pass for s%d: %+v", i, p)
		}
	}
	calls, _ := f.snapshot()
	if !slices.Contains(calls, "release 0s") {
		t.Fatalf("calls %v: the cap did not release", calls)
	}
	if held := f.mostLive(); held > f.cap {
		t.Fatalf("held %d live, above the cap %d", held, f.cap)
	}

	// A failure: reported, then retried with no further write.
	f.mu.Lock()
	f.failNext = 1
	f.mu.Unlock()
	failing := filepath.Join(dir, "failing.jsonl")
	write(t, failing, "{}\n")
	if p := nextPass(t, passes); !errors.Is(p.Err, sdk.CodeIOError) {
		t.Fatalf("pass %+v, want the IO_ERROR", p)
	}
	for {
		p := nextPass(t, passes)
		if p.Err != nil {
			continue // an idle release's pass
		}
		if p.Summary.Files != 1 {
			t.Fatalf("retry pass %+v, want the failed file", p)
		}
		break
	}
	_, imported := f.snapshot()
	if imported[len(imported)-1] != failing {
		t.Fatalf("retried %s, want %s", imported[len(imported)-1], failing)
	}
}

func TestMirrorRefusesBadSources(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		o    MirrorOptions
		code sdk.Code
	}{
		"no source":   {MirrorOptions{}, sdk.CodeUsage},
		"not a tool":  {MirrorOptions{Sources: []MirrorSource{{From: "cursor", Dir: dir}}}, sdk.CodeUsage},
		"missing dir": {MirrorOptions{Sources: []MirrorSource{{From: "pi", Dir: filepath.Join(dir, "nope")}}}, sdk.CodeIOError},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := newMirror(tc.o, func() importer { return &fakeImporter{} })
			if err == nil {
				m.w.Close()
				t.Fatal("newMirror succeeded")
			}
			if !errors.Is(err, tc.code) {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
		})
	}
}
