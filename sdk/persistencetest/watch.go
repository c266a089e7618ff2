package persistencetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// watchWait bounds how long the Watch rules wait for a report.
const watchWait = 10 * time.Second

// watcher returns p as an sdk.Watcher; the Watch group runs only for a
// backend that declares and implements it.
func watcher(t *testing.T, p sdk.Persistence) sdk.Watcher {
	t.Helper()
	return implementation[sdk.Watcher](t, p)
}

// watching is a Watch running in the background.
type watching struct {
	lengths chan sdk.Offset
	done    chan error
	cancel  context.CancelFunc
}

// watch starts w.Watch(id, from); the test's end cancels it.
func watch(t *testing.T, w sdk.Watcher, id string, from sdk.Offset) *watching {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	wt := &watching{lengths: make(chan sdk.Offset, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		wt.done <- w.Watch(ctx, id, from, func(n sdk.Offset) error { wt.lengths <- n; return nil })
	}()
	t.Cleanup(cancel)
	return wt
}

// reaches waits until the watch reports length want; every report on the
// way must be higher than the one before and not above want.
func (wt *watching) reaches(t *testing.T, want, last sdk.Offset) sdk.Offset {
	t.Helper()
	deadline := time.After(watchWait)
	for last != want {
		select {
		case n := <-wt.lengths:
			if n <= last || n > want {
				t.Fatalf("Watch reported length %d after %d; want increasing reports up to %d", n, last, want)
			}
			last = n
		case err := <-wt.done:
			t.Fatalf("Watch ended with %v before reporting length %d", err, want)
		case <-deadline:
			t.Fatalf("Watch did not report length %d within %s (last report %d)", want, watchWait, last)
		}
	}
	return last
}

// quiet checks that the watch reports nothing for a moment.
func (wt *watching) quiet(t *testing.T, why string) {
	t.Helper()
	select {
	case n := <-wt.lengths:
		t.Fatalf("Watch reported length %d %s", n, why)
	case <-time.After(100 * time.Millisecond):
	}
}

var watchRules = []rule{
	{name: "reports-once-the-length-reaches-from-then-each-growth", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s", Batch(0, 3))
		wt := watch(t, watcher(t, p), "s", 5)
		wt.quiet(t, "while the log held 3 events and the watch waits for 5")
		appendOK(t, p, h, Batch(3, 2))
		last := wt.reaches(t, 5, 0)
		appendOK(t, p, h, Batch(5, 1))
		last = wt.reaches(t, 6, last)
		appendOK(t, p, h, Batch(6, 4))
		wt.reaches(t, 10, last)
		wt.cancel()
		select {
		case err := <-wt.done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a cancelled Watch returned %v; want context.Canceled", err)
			}
		case <-time.After(watchWait):
			t.Fatalf("Watch did not return within %s of its context's end", watchWait)
		}
	}},
	{name: "reports-the-current-length-at-once-when-it-is-already-past-from", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		stored(t, p, "s", Batch(0, 4))
		watch(t, watcher(t, p), "s", 0).reaches(t, 4, -1)
	}},
	{name: "a-second-instance-sees-the-appends-of-the-first", needs: []string{hookReopen}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s", Batch(0, 1))
		q := s.reopen(t, p)
		wt := watch(t, watcher(t, q), "s", 1)
		last := wt.reaches(t, 1, 0)
		appendOK(t, p, h, Batch(1, 2))
		wt.reaches(t, 3, last)
	}},
	{name: "fn-error-ends-the-watch-with-it", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		stored(t, p, "s", Batch(0, 1))
		stop := errors.New("enough")
		if err := watcher(t, p).Watch(t.Context(), "s", 0, func(sdk.Offset) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("a Watch whose fn fails returned %v; want fn's error", err)
		}
	}},
	{name: "missing-session-is-SESSION_NOT_FOUND", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		err := watcher(t, p).Watch(t.Context(), "nobody", 0, func(sdk.Offset) error { return nil })
		RequireCode(t, err, sdk.CodeSessionNotFound)
	}},
}
