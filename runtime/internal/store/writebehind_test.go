package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Write batching, first half: 20 events 10 ms apart after idle → exactly one
// Append with all 20, sent 200 ms after the first.
func TestWriteWindowSendsOneBatch(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, err := st.Create(context.Background(), CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	for i := range 20 {
		mustAppend(t, s, todo("e"))
		if i < 19 {
			clock.Advance(10 * time.Millisecond)
		}
	}
	if n := len(rec.appends()); n != 0 {
		t.Fatalf("%d appends before the window expired", n)
	}
	clock.waitArmed(t)
	clock.Advance(10 * time.Millisecond) // t = 200 ms
	c := rec.waitAppend(t)
	if c.n != 20 || c.firstSeq != 0 || !c.at.Equal(start.Add(200*time.Millisecond)) {
		t.Fatalf("append of %d events from seq %d at +%v; want 20 from 0 at +200ms", c.n, c.firstSeq, c.at.Sub(start))
	}
	clock.Advance(time.Second)
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.appends()); n != 1 {
		t.Fatalf("%d appends; want exactly 1", n)
	}
}

// Write batching, second half: 5 events, then Flush at 50 ms → one immediate
// append of 5, the timer cancelled, no later timer-driven write.
func TestFlushDrainsAtOnceAndCancelsTheTimer(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	start := clock.Now()
	for range 5 {
		mustAppend(t, s, todo("e"))
	}
	clock.Advance(50 * time.Millisecond)
	res, err := st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	calls := rec.appends()
	if len(calls) != 1 || calls[0].n != 5 || !calls[0].at.Equal(start.Add(50*time.Millisecond)) {
		t.Fatalf("appends %+v; want one of 5 at +50ms", calls)
	}
	if res.Backends[0].DurableSeq != 4 || !res.Participated {
		t.Fatalf("flush result %+v", res)
	}
	if n := clock.pending(); n != 0 {
		t.Fatalf("%d timers still armed after the drain", n)
	}
	clock.Advance(time.Second)
	if n := len(rec.appends()); n != 1 {
		t.Fatalf("a timer-driven write followed the flush: %d appends", n)
	}
}

// A retryable failure keeps the batch at the front, in order, and retries
// after the backoff.
func TestWriteBehindRetryKeepsOrder(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	rec.failNext(sdk.Errorf(sdk.CodeIOError, "test", "disk hiccup"))
	mustAppend(t, s, todo("a"), todo("b"))
	clock.waitArmed(t)
	clock.Advance(200 * time.Millisecond)
	if c := rec.waitAppend(t); c.err == nil || c.n != 2 {
		t.Fatalf("first attempt %+v; want the injected failure", c)
	}
	mustAppend(t, s, todo("c"))
	clock.waitArmed(t)                    // the retry timer
	clock.Advance(200 * time.Millisecond) // backoff = window
	c := rec.waitAppend(t)
	if c.err != nil || c.firstSeq != 0 || c.n != 3 {
		t.Fatalf("retry %+v; want seqs 0..2 in one batch", c)
	}
	got := stored(t, rec, "s")
	if len(got) != 3 || s.Fenced() != nil {
		t.Fatalf("stored %d events, fenced %v", len(got), s.Fenced())
	}
}

// A final failure on the primary fences the session; queued events stay.
func TestWriteBehindFinalFailureFences(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	rec.failNext(sdk.Errorf(sdk.CodeSeqConflict, "test", "someone else wrote seq 0"))
	mustAppend(t, s, todo("a"))
	_, err := st.Flush(context.Background(), s)
	if !errors.Is(err, sdk.CodeFlushFailed) || !errors.Is(err, sdk.CodeSeqConflict) {
		t.Fatalf("flush: %v", err)
	}
	if _, err := s.Append(context.Background(), todo("b")); !errors.Is(err, sdk.CodeSessionFenced) || !errors.Is(err, sdk.CodeSeqConflict) {
		t.Fatalf("append after fence: %v", err)
	}
	if _, err := st.Flush(context.Background(), s); !errors.Is(err, sdk.CodeSeqConflict) {
		t.Fatalf("later flushes must keep returning the cause: %v", err)
	}
}

// Flush fan-out: B1 fails at once, B2 succeeds after a delay → Flush waits for
// B2, returns FLUSH_FAILED naming only B1, reports both watermarks; the
// session is not fenced and B1 keeps its batch.
func TestFlushWaitsForEveryBackendAndNamesTheFailed(t *testing.T) {
	b1 := newRecorder(mem(), SystemClock{})
	b2 := newRecorder(mem(), SystemClock{})
	b2.delay = 50 * time.Millisecond
	st := newTestStore(t, nil, Backend{Name: "b1", Persistence: b1}, Backend{Name: "b2", Persistence: b2})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	b1.failNext(sdk.Errorf(sdk.CodeIOError, "test", "b1 down"))
	began := time.Now()
	res, err := st.Flush(context.Background(), s)
	if time.Since(began) < 50*time.Millisecond {
		t.Fatal("flush returned before the slow backend settled")
	}
	var fe *FlushError
	if !errors.As(err, &fe) || sdk.CodeOf(err) != sdk.CodeFlushFailed || len(fe.Failures) != 1 || fe.Failures[0].Name != "b1" || !errors.Is(fe.Failures[0].Err, sdk.CodeIOError) {
		t.Fatalf("flush error %v", err)
	}
	if !res.Participated || res.Backends[0].Name != "b1" || res.Backends[0].DurableSeq != -1 || res.Backends[1].DurableSeq != sdk.Cursor(s.Len())-1 {
		t.Fatalf("flush result %+v", res)
	}
	if s.Fenced() != nil {
		t.Fatal("a retryable failure must not fence")
	}
	res, err = st.Flush(context.Background(), s) // B1 kept its batch and now succeeds
	if err != nil || res.Backends[0].DurableSeq != 1 {
		t.Fatalf("second flush %+v %v", res, err)
	}
}

func TestFlushWithNoBackendOrDetachedSession(t *testing.T) {
	st := newTestStore(t, nil)
	s, err := st.Create(context.Background(), CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"))
	res, err := st.Flush(context.Background(), s)
	if err != nil || res.Participated {
		t.Fatalf("no backend: %+v %v", res, err)
	}
	other, _ := session.New(session.Options{Header: sdk.Header{ID: "s"}})
	if _, err := st.Flush(context.Background(), other); !errors.Is(err, sdk.CodeSessionNotLive) {
		t.Fatalf("detached session: %v", err)
	}
}

// Appends block while a queue holds MaxPendingBytes, and resume once it drains.
func TestBackpressureBlocksAppendUntilDrained(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: rec}}, Clock: clock, MaxEventBytes: 1 << 10, MaxPendingBytes: 1 << 10, RPCMaxBytes: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	big := todo(string(make([]byte, 0)) + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
	for int64(queuedBytes(st, s)) < 1<<10 {
		mustAppend(t, s, big)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Append(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append over the memory bound: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Append(context.Background(), big); done <- err }()
	clock.waitArmed(t)
	clock.Advance(200 * time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append stayed blocked after the queue drained")
	}
}

func queuedBytes(st *Store, s *session.Session) int64 {
	ls, _ := st.liveOf(s, "test")
	var n int64
	for _, q := range ls.queues {
		q.mu.Lock()
		n = max(n, q.bytes)
		q.mu.Unlock()
	}
	return n
}

// ambiguous stores the batch but reports PLUGIN_UNAVAILABLE once, like a
// plugin that crashed after its fsync and before its reply.
type ambiguous struct {
	sdk.Persistence
	armed bool
}

func (a *ambiguous) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	d, err := a.Persistence.Append(ctx, h, first, evs)
	if err == nil && a.armed {
		a.armed = false
		return sdk.Durable{}, sdk.Errorf(sdk.CodePluginUnavailable, "test", "connection reset")
	}
	return d, err
}

// After an ambiguous failure the queue re-opens, verifies the stored overlap
// and resends only the rest: no loss, no duplicate. A drain settles the
// failure before it answers, so it reports the batch the backend did store
// as durable, not PLUGIN_UNAVAILABLE (a caller retrying on that would
// append the events twice).
func TestRecoveryAfterAmbiguousFailureStoresOnce(t *testing.T) {
	clock := newFakeClock()
	amb := &ambiguous{Persistence: mem()}
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: amb})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	amb.armed = true
	if res, err := st.Flush(context.Background(), s); err != nil || res.Backends[0].DurableSeq != 1 {
		t.Fatalf("first flush: %+v %v; want success, both events stored", res, err)
	}
	mustAppend(t, s, todo("c"))
	res, err := st.Flush(context.Background(), s)
	if err != nil || res.Backends[0].DurableSeq != 2 {
		t.Fatalf("flush after recovery: %+v %v", res, err)
	}
	got := stored(t, amb, "s")
	if len(got) != 3 {
		t.Fatalf("stored %d events; want 3", len(got))
	}
	for i, e := range s.Events().All() {
		if string(got[i]) != string(e.Envelope()) {
			t.Fatalf("event %d differs", i)
		}
	}
}

// restarted models a plugin process that died before the session
// materialized: the first append fails unavailable and the new process
// knows neither the handle nor the session.
type restarted struct {
	sdk.Persistence
	died bool
}

func (r *restarted) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	if !r.died {
		r.died = true
		r.Persistence = mem() // the new process starts empty
		return sdk.Durable{}, sdk.Errorf(sdk.CodePluginUnavailable, "test", "plugin exited")
	}
	return r.Persistence.Append(ctx, h, first, evs)
}

// A plugin that dies before anything was acknowledged gets the session
// created again on recovery; nothing is lost.
func TestRecoveryRecreatesAnUnmaterializedSession(t *testing.T) {
	clock := newFakeClock()
	r := &restarted{Persistence: mem()}
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: r})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	if _, err := st.Flush(context.Background(), s); !errors.Is(err, sdk.CodePluginUnavailable) {
		t.Fatalf("first flush: %v", err)
	}
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatalf("flush after the restart: %v", err)
	}
	if got := stored(t, r, "s"); len(got) != 2 {
		t.Fatalf("stored %d events", len(got))
	}
}

// A queue holding EagerBytes is written at once, before its window expires.
func TestWriteBehindEagerWriteOfAFullQueue(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: rec}}, Clock: clock, EagerBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	for queuedBytes(st, s) < 4<<10 && len(rec.appends()) == 0 {
		mustAppend(t, s, todo("0123456789012345678901234567890123456789012345678901234567890123456789"))
	}
	c := rec.waitAppend(t)
	if c.err != nil || !c.at.Equal(clock.Now()) || c.n == 0 {
		t.Fatalf("eager append %+v at %v", c, clock.Now())
	}
}
