package telemetry_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/runtime/internal/telemetry"
	"github.com/seed-e5e476df/logbook/sdk"
)

// closePusher closes p within d and fails the test on an error.
func closePusher(t testing.TB, p *telemetry.Pusher, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// Each turn's spans reach the collector once, as the turn ends, with the
// trace, span and parent ids, names and times package otlp builds for the
// same events; the root span follows when the session is released, and
// each session is its own trace.
func TestPushEachEndedTurnOnce(t *testing.T) {
	r := newReceiver(t, nil, nil, nil)
	st := newStore(t)
	p := start(t, st, r, telemetry.Options{Queue: 16})
	a, b := create(t, st, "a"), create(t, st, "b")

	appendTurns(t, a, 1, 1)
	got := r.waitSpans(t, spansPerTurn)
	if diff := sameSpans(got, expected(a, false)); diff != "" {
		t.Fatalf("after turn 1 of a: %s", diff)
	}
	// An open turn sends nothing until it ends.
	ins := turnInputs(2)
	for _, in := range ins[:len(ins)-1] {
		if _, err := a.Append(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	appendTurns(t, b, 1, 2)
	r.waitSpans(t, 3*spansPerTurn)
	if _, err := a.Append(context.Background(), ins[len(ins)-1]); err != nil {
		t.Fatal(err)
	}
	r.waitSpans(t, 4*spansPerTurn)
	if err := st.Release(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	got = r.waitSpans(t, 4*spansPerTurn+1)
	closePusher(t, p, 5*time.Second)

	// Close queued b's root span: b is still live.
	_, got = r.got()
	want := append(expected(a, true), expected(b, true)...)
	if diff := sameSpans(got, want); diff != "" {
		t.Fatal(diff)
	}
	traces := map[string]int{}
	for _, s := range got {
		traces[string(s.TraceId)]++
	}
	if len(traces) != 2 {
		t.Errorf("%d traces, want one per session", len(traces))
	}
	if s := p.Stats(); s.Exported != uint64(len(want)) || s.Dropped != 0 || s.Failed != 0 || s.Queued != 0 {
		t.Errorf("stats %+v, want %d exported and nothing else", s, len(want))
	}
}

// A Pusher only pushes what the feed delivers after it started: turns a
// session ended before the subscription are folded (so a turn open across
// it has its whole tree) but not sent again.
func TestPushStartsAtTheSubscription(t *testing.T) {
	r := newReceiver(t, nil, nil, nil)
	st := newStore(t)
	s := create(t, st, "s")
	appendTurns(t, s, 1, 2)
	ins := turnInputs(3)
	for _, in := range ins[:5] {
		if _, err := s.Append(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	p := start(t, st, r, telemetry.Options{Queue: 16})
	defer closePusher(t, p, 5*time.Second)
	for _, in := range ins[5:] {
		if _, err := s.Append(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	got := r.waitSpans(t, spansPerTurn)
	if diff := sameSpans(got, expected(s, false)[2*spansPerTurn:]); diff != "" {
		t.Fatal(diff)
	}
}

// A bad endpoint or timeout is CONFIG_INVALID, naming the value and the
// form it should have.
func TestStartRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    telemetry.Options
		want string
	}{
		{"no endpoint", telemetry.Options{Timeout: time.Second}, `otlp_endpoint "" is not an http(s) URL`},
		{"no scheme", telemetry.Options{Endpoint: "127.0.0.1:4318", Timeout: time.Second}, `otlp_endpoint "127.0.0.1:4318" is not`},
		{"ftp", telemetry.Options{Endpoint: "ftp://collector/", Timeout: time.Second}, `otlp_endpoint "ftp://collector/" is not`},
		{"no host", telemetry.Options{Endpoint: "http://", Timeout: time.Second}, `otlp_endpoint "http://" is not`},
		{"unparsable", telemetry.Options{Endpoint: "http://[::1", Timeout: time.Second}, `otlp_endpoint "http://[::1" is not`},
		// A zero timeout would fail every upload at once.
		{"no timeout", telemetry.Options{Endpoint: "http://127.0.0.1:4318"}, "timeout 0s must be positive"},
		{"negative timeout", telemetry.Options{Endpoint: "http://127.0.0.1:4318", Timeout: -time.Second}, "timeout -1s must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStore(t)
			p, err := telemetry.Start(st, tc.o)
			if p != nil {
				closePusher(t, p, time.Second)
			}
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != sdk.CodeConfigInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want CONFIG_INVALID: …%s…", err, tc.want)
			}
		})
	}
}

// Close pushes what the feed had not delivered of the sessions it was
// told of: a session announced (SessionLive) whose events the feed had not
// delivered yet gets its ended turns and its root span pushed, from its
// first live seq.
func TestCloseFoldsAnnouncedSession(t *testing.T) {
	r := newReceiver(t, nil, nil, nil)
	p := start(t, newStore(t), r, telemetry.Options{Queue: 16})
	// The session lives in another store, so only this test calls p's
	// listener methods.
	s := create(t, newStore(t), "s")
	appendTurns(t, s, 1, 2)
	p.SessionLive(s)
	closePusher(t, p, 5*time.Second)
	_, got := r.got()
	if diff := sameSpans(got, expected(s, true)); diff != "" {
		t.Fatal(diff)
	}
}

// With a collector that holds every request and a queue of N, the upload
// in flight holds one item and the queue N more; every later turn is
// dropped and counted (and logged once), and the feed never waits: a
// burst of turns is folded, queued or dropped while the collector still
// holds the first request. Released, the collector gets exactly the first
// N+1 turns.
func TestQueueBoundDropsAndNeverBlocks(t *testing.T) {
	const queue, burst = 4, 200
	hold := make(chan struct{})
	r := newReceiver(t, nil, nil, hold)
	st := newStore(t)
	logs := &logBuffer{}
	p := start(t, st, r, telemetry.Options{Queue: queue, Timeout: time.Minute, Logger: logs.logger()})
	s := create(t, st, "s")

	appendTurns(t, s, 1, 1)
	r.waitRequests(t, 1) // turn 1 is in flight, held
	begin := time.Now()
	appendTurns(t, s, 2, 1+burst)
	appended := time.Since(begin)
	stats := waitStats(t, p, "the burst queued or dropped", func(st telemetry.Stats) bool {
		return st.Dropped == (burst-queue)*spansPerTurn
	})
	lag := time.Since(begin) - appended
	t.Logf("%d turns (%d events) appended in %v; the feed had folded and queued or dropped them %v after the last append, the collector holding its first request",
		burst, burst*len(turnInputs(2)), appended, lag)
	if stats.Queued != queue || stats.Exported != 0 || stats.Failed != 0 {
		t.Fatalf("stats %+v, want %d queued, nothing exported or failed", stats, queue)
	}
	if n, _ := r.got(); n != 1 {
		t.Fatalf("%d requests while the first is held", n)
	}
	if lag > 5*time.Second {
		t.Errorf("the feed lagged %v behind the appends with the collector held", lag)
	}
	if n := logs.count("queue is full"); n != 1 {
		t.Errorf("the full queue was logged %d times, want once per episode", n)
	}

	r.release()
	want := expected(s, false)[:(queue+1)*spansPerTurn]
	got := r.waitSpans(t, len(want))
	waitStats(t, p, "the queue drained", func(st telemetry.Stats) bool { return st.Queued == 0 && st.Exported == uint64(len(want)) })
	if diff := sameSpans(got, want); diff != "" {
		t.Fatal(diff)
	}

	// The queue has room again: the next turn goes out, and a new episode
	// of drops would be logged again.
	appendTurns(t, s, burst+2, burst+2)
	r.waitSpans(t, len(want)+spansPerTurn)
	closePusher(t, p, 5*time.Second)
	if s := p.Stats(); s.Dropped != (burst-queue)*spansPerTurn || s.Exported != uint64(len(want)+spansPerTurn+1) {
		t.Errorf("stats %+v after the close", s)
	}
}

// An upload the collector refuses (503, then a refused connection while it
// restarts) is retried with backoff until the collector is back: it gets
// the batch once, within the timeout, and nothing counts as failed.
func TestRetryUntilTheCollectorRecovers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	unavailable := make(chan struct{}, 1)
	r := newReceiver(t, ln, func(n int) int {
		if n == 1 {
			unavailable <- struct{}{}
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, nil)
	st := newStore(t)
	const timeout = 10 * time.Second
	logs := &logBuffer{}
	p := start(t, st, r, telemetry.Options{Queue: 4, Timeout: timeout, Logger: logs.logger()})
	defer closePusher(t, p, 5*time.Second)
	s := create(t, st, "s")

	begin := time.Now()
	appendTurns(t, s, 1, 1)
	<-unavailable
	r.srv.Close() // the collector goes away: connections are refused
	down := 700 * time.Millisecond
	time.Sleep(down) // the outage itself, long enough for retries to meet it
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	back := newReceiver(t, ln2, nil, nil)
	got := back.waitSpans(t, spansPerTurn)
	took := time.Since(begin)
	t.Logf("batch delivered %v after the turn ended (503, then %v refused)", took, down)
	if took >= timeout {
		t.Errorf("delivered after %v, past the %v timeout", took, timeout)
	}
	waitStats(t, p, "the batch counted", func(st telemetry.Stats) bool { return st.Exported == spansPerTurn })
	if diff := sameSpans(got, expected(s, false)); diff != "" {
		t.Fatal(diff)
	}
	if s := p.Stats(); s.Failed != 0 || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
	if n := logs.count("upload failed"); n != 0 {
		t.Errorf("a retried upload was logged as failed %d times", n)
	}
}

// Past the timeout a batch the collector keeps refusing is given up and
// counted as failed (logged once per episode); the next upload that
// succeeds ends the episode.
func TestRetryGivesUpAtTheTimeout(t *testing.T) {
	var mu sync.Mutex
	down := true
	r := newReceiver(t, nil, func(int) int {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, nil)
	st := newStore(t)
	const timeout = 600 * time.Millisecond
	logs := &logBuffer{}
	p := start(t, st, r, telemetry.Options{Queue: 4, Timeout: timeout, Logger: logs.logger()})
	defer closePusher(t, p, 5*time.Second)
	s := create(t, st, "s")

	begin := time.Now()
	appendTurns(t, s, 1, 1)
	waitStats(t, p, "turn 1 failed", func(st telemetry.Stats) bool { return st.Failed == spansPerTurn })
	took := time.Since(begin)
	t.Logf("given up %v after the turn ended (timeout %v)", took, timeout)
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("given up after %v, want just past the %v timeout", took, timeout)
	}
	appendTurns(t, s, 2, 2)
	waitStats(t, p, "turn 2 failed", func(st telemetry.Stats) bool { return st.Failed == 2*spansPerTurn })
	if n := logs.count("upload failed"); n != 1 {
		t.Errorf("failed uploads logged %d times, want once per episode", n)
	}
	mu.Lock()
	down = false
	mu.Unlock()
	appendTurns(t, s, 3, 3)
	got := r.waitSpans(t, spansPerTurn)
	waitStats(t, p, "turn 3 counted", func(st telemetry.Stats) bool { return st.Exported == spansPerTurn })
	if diff := sameSpans(got, expected(s, false)[2*spansPerTurn:]); diff != "" {
		t.Fatal(diff)
	}
	if n := logs.count("succeed again"); n != 1 {
		t.Errorf("recovery logged %d times, want once", n)
	}
	if s := p.Stats(); s.Exported != spansPerTurn || s.Failed != 2*spansPerTurn || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// Close with a collector that answers sends what is queued and the root
// spans of the sessions still live, and returns once it is sent; nothing
// of the Pusher runs after it (no goroutine, no idle connection).
func TestCloseFlushes(t *testing.T) {
	hold := make(chan struct{})
	r := newReceiver(t, nil, nil, hold)
	st := newStore(t)
	s := create(t, st, "s")
	before := runtime.NumGoroutine()
	p := start(t, st, r, telemetry.Options{Queue: 8})
	appendTurns(t, s, 1, 1)
	r.waitRequests(t, 1)
	appendTurns(t, s, 2, 3)
	waitStats(t, p, "turns 2 and 3 queued", func(st telemetry.Stats) bool { return st.Queued == 2 })
	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		closed <- p.Close(ctx)
	}()
	r.release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	_, got := r.got()
	if diff := sameSpans(got, expected(s, true)); diff != "" {
		t.Fatal(diff)
	}
	if s := p.Stats(); s.Exported != 3*spansPerTurn+1 || s.Dropped+s.Failed != 0 || s.Queued != 0 {
		t.Errorf("stats %+v", s)
	}
	settledGoroutines(t, before)
}

// Close with a collector that holds every request returns at its deadline:
// it cuts the upload in flight and drops what is queued, counted, and
// leaves no goroutine behind.
func TestCloseDropsAtItsDeadline(t *testing.T) {
	hold := make(chan struct{})
	r := newReceiver(t, nil, nil, hold)
	st := newStore(t)
	s := create(t, st, "s")
	before := runtime.NumGoroutine()
	p := start(t, st, r, telemetry.Options{Queue: 8, Timeout: time.Minute})
	appendTurns(t, s, 1, 1)
	r.waitRequests(t, 1)
	appendTurns(t, s, 2, 3)
	waitStats(t, p, "turns 2 and 3 queued", func(st telemetry.Stats) bool { return st.Queued == 2 })
	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	begin := time.Now()
	err := p.Close(ctx)
	took := time.Since(begin)
	t.Logf("close returned in %v (deadline %v): %v", took, deadline, err)
	if took > deadline+2*time.Second {
		t.Errorf("close took %v, past its %v deadline", took, deadline)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("close: %v, want the deadline's error", err)
	}
	// Everything was dropped: the turns and the root span.
	if s := p.Stats(); s.Dropped != 3*spansPerTurn+1 || s.Exported+s.Failed != 0 || s.Queued != 0 {
		t.Errorf("stats %+v, want all %d spans dropped", s, 3*spansPerTurn+1)
	}
	r.release()
	if _, got := r.got(); len(got) != 0 {
		t.Errorf("the collector kept %d spans of a cut upload", len(got))
	}
	settledGoroutines(t, before)
}

// Many sessions appending at once while the counts are read and the
// collector answers: every ended turn arrives once (run with -race).
func TestConcurrentSessions(t *testing.T) {
	r := newReceiver(t, nil, nil, nil)
	st := newStore(t)
	p := start(t, st, r, telemetry.Options{Queue: 1000})
	const sessions, turns = 8, 10
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = p.Stats()
				runtime.Gosched()
			}
		}
	}()
	ss := make([]*tracepb.Span, 0)
	var mu sync.Mutex
	for i := range sessions {
		wg.Go(func() {
			s, err := st.Create(context.Background(), store.CreateOptions{ID: string(rune('a' + i))})
			if err == nil {
				err = tryTurns(s, 1, turns)
			}
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				if err := st.Release(context.Background(), s); err != nil {
					t.Error(err)
				}
			}
			mu.Lock()
			// Close sends the root spans of the sessions still live.
			ss = append(ss, expected(s, true)...)
			mu.Unlock()
		})
	}
	wg.Wait()
	r.waitSpans(t, len(ss)-sessions/2) // all but the roots of the live sessions
	close(stop)
	closePusher(t, p, 5*time.Second)
	_, got := r.got()
	if diff := sameSpans(got, ss); diff != "" {
		t.Fatal(diff)
	}
}
