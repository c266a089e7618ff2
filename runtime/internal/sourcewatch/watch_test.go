package sourcewatch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/seed-e5e476df/logbook/sdk"
)

// run runs w until the test ends and returns the channel of its reports.
func run(t *testing.T, w *Watcher) <-chan []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan []string, 100)
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func(paths []string) error {
			reports <- paths
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		w.Close()
	})
	return reports
}

// next waits for the next report.
func next(t *testing.T, reports <-chan []string) []string {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no report within 5s")
		return nil
	}
}

// none checks that no report comes within d.
func none(t *testing.T, reports <-chan []string, d time.Duration) {
	t.Helper()
	select {
	case r := <-reports:
		t.Fatalf("unexpected report %v", r)
	case <-time.After(d):
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// behaviour is what every mode must do, checked on a Watcher over root.
func behaviour(t *testing.T, root string, w *Watcher, quiet time.Duration) {
	reports := run(t, w)

	// Present at New: not reported until it changes.
	old := filepath.Join(root, "old.jsonl")
	none(t, reports, quiet)

	// Created, then grown in three writes: one report each time.
	a := filepath.Join(root, "a.jsonl")
	appendTo(t, a, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{a}) {
		t.Fatalf("after creating a: %v, want [%s]", got, a)
	}
	appendTo(t, a, `{"x":`)
	appendTo(t, a, `1`)
	appendTo(t, a, "}\n")
	if got := next(t, reports); !slices.Equal(got, []string{a}) {
		t.Fatalf("after growing a: %v, want [%s]", got, a)
	}
	none(t, reports, quiet)

	// The file present at New, grown.
	appendTo(t, old, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{old}) {
		t.Fatalf("after growing old: %v, want [%s]", got, old)
	}

	// Other names are not reported.
	appendTo(t, filepath.Join(root, "notes.txt"), "x\n")
	none(t, reports, quiet)

	// New directories, two levels at once, with a compressed file.
	deep := filepath.Join(root, "p", "q")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	z := filepath.Join(deep, "s.jsonl.zst")
	appendTo(t, z, "z")
	if got := next(t, reports); !slices.Equal(got, []string{z}) {
		t.Fatalf("after creating p/q/s.jsonl.zst: %v, want [%s]", got, z)
	}
	// And a file written in it later.
	b := filepath.Join(deep, "b.jsonl")
	appendTo(t, b, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{b}) {
		t.Fatalf("after creating p/q/b.jsonl: %v, want [%s]", got, b)
	}

	// A removed file is forgotten; one made again under its name is new.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	none(t, reports, quiet)
	appendTo(t, a, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{a}) {
		t.Fatalf("after recreating a: %v, want [%s]", got, a)
	}
}

func newRoot(t *testing.T) string {
	root := t.TempDir()
	appendTo(t, filepath.Join(root, "old.jsonl"), "{}\n")
	return root
}

func TestNotifyReportsCreatedAndGrownFilesOnce(t *testing.T) {
	root := newRoot(t)
	w, err := New(Options{Roots: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModeNotify || w.Why() != nil {
		t.Fatalf("mode %s (%v), want %s", w.Mode(), w.Why(), ModeNotify)
	}
	if got, want := w.Files(), []string{filepath.Join(root, "old.jsonl")}; !slices.Equal(got, want) {
		t.Fatalf("Files() = %v, want %v", got, want)
	}
	behaviour(t, root, w, 100*time.Millisecond)
	if w.Mode() != ModeNotify {
		t.Fatalf("mode %s after the run (%v), want %s", w.Mode(), w.Why(), ModeNotify)
	}
}

func TestPollReportsCreatedAndGrownFilesOnce(t *testing.T) {
	root := newRoot(t)
	w, err := New(Options{Roots: []string{root}, Poll: true, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModePoll || w.Why() != nil {
		t.Fatalf("mode %s (%v), want %s and no reason", w.Mode(), w.Why(), ModePoll)
	}
	behaviour(t, root, w, 200*time.Millisecond)
}

// A watch table that is full (inotify's max_user_watches) when New adds
// its watches: the Watcher polls, says why, and reports all the same.
func TestFullWatchTableAtStartFallsBackToPolling(t *testing.T) {
	root := newRoot(t)
	full := func(*fsnotify.Watcher, string) error { return syscall.ENOSPC }
	w, err := newWatcher(Options{Roots: []string{root}, PollInterval: 50 * time.Millisecond}, full)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModePoll || !errors.Is(w.Why(), syscall.ENOSPC) {
		t.Fatalf("mode %s (%v), want %s because of ENOSPC", w.Mode(), w.Why(), ModePoll)
	}
	behaviour(t, root, w, 200*time.Millisecond)
}

// The watch table fills up when a new directory appears: the Watcher falls
// back to polling for good, and the file in that directory is reported.
func TestFullWatchTableLaterFallsBackToPolling(t *testing.T) {
	root := newRoot(t)
	var mu sync.Mutex
	n := 0
	fillAfterRoot := func(fsw *fsnotify.Watcher, dir string) error {
		mu.Lock()
		defer mu.Unlock()
		if n++; n > 1 {
			return syscall.ENOSPC
		}
		return fsw.Add(dir)
	}
	w, err := newWatcher(Options{Roots: []string{root}, PollInterval: 50 * time.Millisecond}, fillAfterRoot)
	if err != nil {
		t.Fatal(err)
	}
	if w.Mode() != ModeNotify {
		t.Fatalf("mode %s (%v), want %s", w.Mode(), w.Why(), ModeNotify)
	}
	reports := run(t, w)
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(sub, "s.jsonl")
	appendTo(t, f, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{f}) {
		t.Fatalf("report %v, want [%s]", got, f)
	}
	if w.Mode() != ModePoll || !errors.Is(w.Why(), syscall.ENOSPC) {
		t.Fatalf("mode %s (%v), want %s because of ENOSPC", w.Mode(), w.Why(), ModePoll)
	}
	appendTo(t, f, "{}\n")
	if got := next(t, reports); !slices.Equal(got, []string{f}) {
		t.Fatalf("report %v after polling, want [%s]", got, f)
	}
}

// A write stream that never pauses is still reported every MaxDelay.
func TestNotifyReportsAStreamWithoutPauses(t *testing.T) {
	root := t.TempDir()
	w, err := New(Options{Roots: []string{root}, Debounce: 50 * time.Millisecond, MaxDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reports := run(t, w)
	f := filepath.Join(root, "s.jsonl")
	deadline := time.Now().Add(5 * time.Second)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // writes every 10ms, well inside the debounce
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				appendTo(t, f, "{}\n")
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for range 3 {
		if got := next(t, reports); !slices.Equal(got, []string{f}) {
			t.Fatalf("report %v, want [%s]", got, f)
		}
	}
	if time.Now().After(deadline) {
		t.Fatal("three reports took more than 5s")
	}
}

func TestRootMustBeADirectory(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "f.jsonl")
	appendTo(t, file, "{}\n")
	for name, o := range map[string]Options{
		"missing":   {Roots: []string{filepath.Join(root, "missing")}},
		"file":      {Roots: []string{file}},
		"no roots":  {},
		"poll file": {Roots: []string{file}, Poll: true},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := New(o)
			if err == nil {
				w.Close()
				t.Fatal("New succeeded")
			}
			want := sdk.CodeIOError
			if name == "no roots" {
				want = sdk.CodeUsage
			}
			if !errors.Is(err, want) {
				t.Fatalf("err %v, want %s", err, want)
			}
		})
	}
}
