package store

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// fakeClock is a manual clock: timers fire only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	at      time.Time
	f       func()
	stopped bool
	fired   bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }

// Now returns the fake time.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NowMillis returns the fake time in epoch milliseconds.
func (c *fakeClock) NowMillis() int64 { return c.Now().UnixMilli() }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped && !t.fired
	t.stopped = true
	return was
}

// Advance moves time forward, firing due timers in time order.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		sort.Slice(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.stopped && !t.fired && !t.at.After(end) {
				next = t
				break
			}
		}
		if next == nil {
			break
		}
		next.fired = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// pending counts armed timers.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped && !t.fired {
			n++
		}
	}
	return n
}

// waitArmed waits until the store's worker has armed a timer: advancing the
// clock before that would let the timer miss its moment.
func (c *fakeClock) waitArmed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no timer armed within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// appendCall is one recorded Append.
type appendCall struct {
	at       time.Time
	firstSeq sdk.Seq
	n        int
	err      error
}

// recorder wraps a backend, recording appends and injecting failures and
// delays before they reach it.
type recorder struct {
	sdk.Persistence
	clock Clock
	mu    sync.Mutex
	calls []appendCall
	fail  []error       // errors for the next appends, in order
	delay time.Duration // real delay before each append
	seen  chan appendCall
}

func newRecorder(p sdk.Persistence, clock Clock) *recorder {
	return &recorder{Persistence: p, clock: clock, seen: make(chan appendCall, 1024)}
}

func (r *recorder) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	r.mu.Lock()
	var err error
	if len(r.fail) > 0 {
		err, r.fail = r.fail[0], r.fail[1:]
	}
	delay := r.delay
	r.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay) // models a slow backend, not synchronization
	}
	var d sdk.Durable
	if err == nil {
		d, err = r.Persistence.Append(ctx, h, first, evs)
	}
	c := appendCall{at: clockTime(r.clock), firstSeq: first, n: len(evs), err: err}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	r.seen <- c
	return d, err
}

func (r *recorder) failNext(errs ...error) {
	r.mu.Lock()
	r.fail = append(r.fail, errs...)
	r.mu.Unlock()
}

func (r *recorder) appends() []appendCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]appendCall(nil), r.calls...)
}

// waitAppend waits for the next recorded append.
func (r *recorder) waitAppend(t *testing.T) appendCall {
	t.Helper()
	select {
	case c := <-r.seen:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no append within 10 s")
		return appendCall{}
	}
}

func newTestStore(t *testing.T, clock Clock, backends ...Backend) *Store {
	t.Helper()
	if clock == nil {
		clock = SystemClock{}
	}
	st, err := New(Options{Backends: backends, Clock: clock, NewID: sequentialIDs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

func sequentialIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "gen-" + itoa(int64(n))
	}
}

func mem() sdk.Persistence { return memory.New() }

func user(text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`)}
}

// todo is a log-only event (todo/write) carrying text: the storage tests
// append it where what the event means does not matter, so it needs no
// turn around it (docs/format.md, "The agent-loop protocol").
func todo(text string) session.AppendInput {
	return session.AppendInput{Type: session.TypeTodoWrite,
		Data: []byte(`{"todos":[{"content":"` + text + `","status":"pending"}]}`)}
}

func raw(typ, data string) session.AppendInput {
	return session.AppendInput{Type: typ, Data: []byte(data)}
}

func mustAppend(t *testing.T, s *session.Session, ins ...session.AppendInput) {
	t.Helper()
	for _, in := range ins {
		if _, err := s.Append(context.Background(), in); err != nil {
			t.Fatalf("append %s: %v", in.Type, err)
		}
	}
}

// stored reads a session's envelopes straight from a backend.
func stored(t *testing.T, p sdk.Persistence, id string) [][]byte {
	t.Helper()
	ctx := context.Background()
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		t.Fatalf("open %s: %v", id, err)
	}
	defer p.Close(ctx, o.Handle)
	var out [][]byte
	if err := p.Read(ctx, o.Handle, 0, -1, func(c [][]byte) error { out = append(out, c...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
