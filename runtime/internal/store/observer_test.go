package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// recordingObserver records what a store reports.
type recordingObserver struct {
	mu      sync.Mutex
	commits int
	events  int
	bytes   int64
	flushes map[string]int
	zero    int      // flushes reported without a duration
	failed  []string // "backend CODE" of each failed write
}

func (o *recordingObserver) Appended(events int, bytes int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.commits++
	o.events += events
	o.bytes += bytes
}

func (o *recordingObserver) WriteFailed(backend string, code sdk.Code) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.failed = append(o.failed, backend+" "+string(code))
}

func (o *recordingObserver) Flushed(backend string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d <= 0 {
		o.zero++
	}
	o.flushes[backend]++
}

// The observer is told every commit to a live session with its events and
// envelope bytes, and every backend's successful flush; Stats shows what
// is queued until the flush has written it.
func TestObserverAndStats(t *testing.T) {
	ctx := context.Background()
	obs := &recordingObserver{flushes: map[string]int{}}
	clock := newFakeClock() // the write window never expires: only flushes write
	st, err := New(Options{Backends: []Backend{{Name: "a", Persistence: mem()}, {Name: "b", Persistence: mem()}}, Clock: clock, NewID: sequentialIDs(), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, CreateOptions{ID: "o1"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("one"), todo("two"))
	if _, err := s.AppendGroup(ctx, []session.AppendInput{raw("turn/start", `{"turn":1}`), user("three")}); err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, e := range s.Events().Slice() {
		want += int64(e.EnvelopeLen())
	}
	if obs.commits != 3 || obs.events != 4 || obs.bytes != want {
		t.Fatalf("observed %d commits, %d events, %d bytes; want 3, 4, %d", obs.commits, obs.events, obs.bytes, want)
	}
	stats := st.Stats()
	if stats.LiveSessions != 1 || len(stats.Queues) != 2 {
		t.Fatalf("stats before the flush: %+v", stats)
	}
	for _, q := range stats.Queues {
		if q.Events != 4 || q.Bytes != want {
			t.Fatalf("queue %s before the flush: %d events, %d bytes; want 4, %d", q.Backend, q.Events, q.Bytes, want)
		}
	}
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if obs.flushes["a"] != 1 || obs.flushes["b"] != 1 || obs.zero != 0 {
		t.Fatalf("flushes observed %v (%d without a duration), want one per backend", obs.flushes, obs.zero)
	}
	for _, q := range st.Stats().Queues {
		if q.Events != 0 || q.Bytes != 0 {
			t.Fatalf("queue %s after the flush: %+v", q.Backend, q)
		}
	}
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := st.Stats().LiveSessions; n != 0 {
		t.Fatalf("%d live sessions after the release", n)
	}
	if obs.commits != 3 {
		t.Fatalf("release reported %d more commits", obs.commits-3)
	}
}

// Every failed write-behind call is reported with its backend and code:
// a retryable one the flush retries, then a final one that fences.
func TestObserverWriteFailures(t *testing.T) {
	ctx := context.Background()
	obs := &recordingObserver{flushes: map[string]int{}}
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: rec}}, Clock: clock, NewID: sequentialIDs(), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, CreateOptions{ID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	rec.failNext(sdk.Errorf(sdk.CodeIOError, "test", "disk hiccup"))
	mustAppend(t, s, todo("a"))
	if _, err := st.Flush(ctx, s); !errors.Is(err, sdk.CodeIOError) {
		t.Fatalf("flush over the injected failure: %v", err)
	}
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	rec.failNext(sdk.Errorf(sdk.CodeSeqConflict, "test", "someone else wrote seq 1"))
	mustAppend(t, s, todo("b"))
	if _, err := st.Flush(ctx, s); !errors.Is(err, sdk.CodeSeqConflict) || s.Fenced() == nil {
		t.Fatalf("flush over a final failure: %v (fenced %v)", err, s.Fenced())
	}
	if want := []string{"mem IO_ERROR", "mem SEQ_CONFLICT"}; !slices.Equal(obs.failed, want) {
		t.Fatalf("failures observed %q, want %q", obs.failed, want)
	}
	if obs.flushes["mem"] != 1 { // the retry's; a failed flush is not observed
		t.Fatalf("successful flushes observed %v", obs.flushes)
	}
}
