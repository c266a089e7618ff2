package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// stalled is a backend whose Append blocks until the test opens its gate,
// like a plugin that stopped answering; every other call goes through.
type stalled struct {
	sdk.Persistence
	gate    chan struct{} // closed by open
	entered chan struct{} // one send per Append that reached the gate
	once    sync.Once
}

func newStalled(p sdk.Persistence) *stalled {
	return &stalled{Persistence: p, gate: make(chan struct{}), entered: make(chan struct{}, 1024)}
}

func (s *stalled) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	select {
	case s.entered <- struct{}{}:
	default:
	}
	select {
	case <-s.gate:
	case <-ctx.Done():
		return sdk.Durable{}, sdk.Wrap(sdk.CodePluginUnavailable, "test", ctx.Err())
	}
	return s.Persistence.Append(ctx, h, first, evs)
}

// open lets every Append through, the blocked ones first.
func (s *stalled) open() { s.once.Do(func() { close(s.gate) }) }

// boundedStore is a store over one stalled backend whose process-wide
// bound is total bytes, and each session's bound the same (so only the
// process-wide one bites).
func boundedStore(t *testing.T, total int64, timeout time.Duration) (*Store, *stalled) {
	t.Helper()
	sb := newStalled(mem())
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: sb}}, NewID: sequentialIDs(),
		MaxEventBytes: 1 << 10, MaxPendingBytes: total, MaxPendingBytesTotal: total, WriteBackpressureTimeout: timeout,
		WriteWindow: 5 * time.Millisecond, RetryMaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sb.open()
		_ = st.Close(context.Background())
	})
	return st, sb
}

// note is a user message whose envelope is a few hundred bytes; no
// multiple of its size is the test's bound, so no single queue reaches the
// per-session bound exactly.
func note(i int) session.AppendInput {
	return todo("note " + itoa(int64(i)) + " " + strings.Repeat("x", 300))
}

// Past max_pending_bytes_total, with every backend stalled, the total
// stays within the bound; an append that finds no room within
// write_backpressure_timeout fails with BACKEND_BUSY naming the bound and
// the timeout, and changes nothing; once the backend recovers, every
// acknowledged event is stored exactly once and the total returns to 0.
func TestPendingBytesTotalIsBoundedAndRefusesWithBackendBusy(t *testing.T) {
	const total, timeout = 16 << 10, 150 * time.Millisecond
	st, sb := boundedStore(t, total, timeout)
	ctx := context.Background()
	const sessions = 8
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string][][]byte{}
		over  []int64
		errs  = make([]error, sessions)
	)
	ss := make([]*session.Session, sessions)
	for i := range ss {
		s, err := st.Create(ctx, CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ss[i] = s
	}
	for i, s := range ss {
		wg.Go(func() {
			for n := 0; ; n++ {
				lenBefore := s.Len()
				msgs, _ := s.Messages()
				t0 := time.Now()
				// The deadline only turns a hang into a failure.
				actx, cancel := context.WithTimeout(ctx, 30*time.Second)
				e, err := s.Append(actx, note(n))
				cancel()
				if p := st.Stats().PendingBytes; p > total {
					mu.Lock()
					over = append(over, p)
					mu.Unlock()
				}
				if err == nil {
					mu.Lock()
					acked[s.ID()] = append(acked[s.ID()], append([]byte(nil), e.Envelope()...))
					mu.Unlock()
					continue
				}
				if waited := time.Since(t0); waited < timeout {
					err = errors.Join(err, errors.New("refused after "+waited.String()+", before the timeout"))
				}
				after, _ := s.Messages()
				if s.Len() != lenBefore || after.Len() != msgs.Len() {
					err = errors.Join(err, errors.New("the refused append changed the session"))
				}
				errs[i] = err
				return
			}
		})
	}
	wg.Wait()
	if len(over) > 0 {
		t.Fatalf("the pending total went past the bound %d %d times, up to %d", total, len(over), slices.Max(over))
	}
	for i, err := range errs {
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeBackendBusy || !sdk.Retryable(err) {
			t.Fatalf("session %d: %v; want a retryable BACKEND_BUSY", i, err)
		}
		if !strings.Contains(e.Detail, "max_pending_bytes_total 16384") || !strings.Contains(e.Detail, "write_backpressure_timeout 150ms") ||
			e.Meta["max_pending_bytes_total"] != "16384" || e.Meta["write_backpressure_timeout"] != "150ms" || e.SessionID != ss[i].ID() {
			t.Fatalf("session %d: the refusal does not name the bound and the timeout: %v (meta %v)", i, err, e.Meta)
		}
	}
	var queued int64
	for _, q := range st.Stats().Queues {
		queued += q.Bytes
	}
	if p := st.Stats().PendingBytes; p != queued || p > total || p < total-1<<10 {
		t.Fatalf("pending total %d, queued %d; want the queued bytes, near the bound %d", p, queued, total)
	}

	sb.open()
	for _, s := range ss {
		if _, err := st.Flush(ctx, s); err != nil {
			t.Fatal(err)
		}
		got := stored(t, sb, s.ID())
		want := acked[s.ID()]
		if len(got) != len(want) {
			t.Fatalf("session %s: %d events stored, %d acknowledged", s.ID(), len(got), len(want))
		}
		for j := range want {
			if string(got[j]) != string(want[j]) {
				t.Fatalf("session %s: stored event %d differs from the acknowledged one", s.ID(), j)
			}
		}
	}
	if p := st.Stats().PendingBytes; p != 0 {
		t.Fatalf("pending total %d after every queue drained; want 0", p)
	}
}

// fill appends notes to s, with the backend stalled, until the store's
// pending total has less room than 800 bytes: a bigNote no longer fits.
func fill(t *testing.T, st *Store, s *session.Session) {
	t.Helper()
	for i := 0; st.opts.MaxPendingBytesTotal-st.Stats().PendingBytes >= 800; i++ {
		mustAppend(t, s, note(i))
	}
}

// bigNote is a user message whose envelope is over 800 bytes.
func bigNote(i int) session.AppendInput {
	return todo("big " + itoa(int64(i)) + " " + strings.Repeat("y", 800))
}

// waitWaiters waits until n appends wait for room in p.
func waitWaiters(t *testing.T, p *pendingBound, n int32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.waiting.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d appends waiting for room after 10 s; want %d", p.waiting.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// An append that waits for room goes on as soon as the backend makes room,
// long before the timeout (a minute); one whose context ends stops waiting with the
// context's error and appends nothing.
func TestPendingBytesTotalWaitEndsWithRoomOrContext(t *testing.T) {
	st, sb := boundedStore(t, 16<<10, time.Minute)
	ctx := context.Background()
	a, _ := st.Create(ctx, CreateOptions{})
	b, _ := st.Create(ctx, CreateOptions{})
	fill(t, st, a)

	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() { _, err := b.Append(cctx, bigNote(0)); cancelled <- err }()
	waitWaiters(t, st.pending, 1)
	cancel()
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) || b.Len() != 0 {
			t.Fatalf("cancelled wait: %v, session length %d; want context.Canceled and nothing appended", err, b.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled append kept waiting")
	}

	done := make(chan error, 1)
	go func() { _, err := b.Append(ctx, bigNote(1)); done <- err }()
	waitWaiters(t, st.pending, 1)
	sb.open()
	select {
	case err := <-done:
		if err != nil || b.Len() != 1 {
			t.Fatalf("waiting append: %v, session length %d", err, b.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting append did not proceed once the backend made room")
	}
	if _, err := st.Flush(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got := stored(t, sb, b.ID()); len(got) != 1 {
		t.Fatalf("%d events stored for the waiting append; want 1", len(got))
	}
}

// Waiting appends are admitted in arrival order: a small one that would
// fit does not pass a larger one that came first.
func TestPendingBoundAdmitsWaitersInOrder(t *testing.T) {
	p := &pendingBound{limit: 100, timeout: time.Hour, clock: newFakeClock()}
	ctx := context.Background()
	if err := p.reserve(ctx, 90, "s", nil); err != nil {
		t.Fatal(err)
	}
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- p.reserve(ctx, 20, "a", nil) }()
	waitWaiters(t, p, 1)
	go func() { second <- p.reserve(ctx, 5, "b", nil) }()
	waitWaiters(t, p, 2)
	p.release(10) // 80: the first fits (100), the second then does not (105)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-second:
		t.Fatalf("the later, smaller append passed: %v (total %d)", err, p.total.Load())
	default:
	}
	p.release(5)
	if err := <-second; err != nil || p.total.Load() != 100 {
		t.Fatalf("second: %v, total %d; want admitted at 100", err, p.total.Load())
	}
}

// A unit larger than the whole bound is admitted alone into an empty
// total, so that it never waits forever; and a store refuses a total
// bound below the per-session one.
func TestPendingBoundEdges(t *testing.T) {
	p := &pendingBound{limit: 100, timeout: time.Hour, clock: newFakeClock()}
	if err := p.reserve(context.Background(), 500, "s", nil); err != nil || p.total.Load() != 500 {
		t.Fatalf("a unit alone: %v, total %d", err, p.total.Load())
	}
	p.release(500)
	_, err := New(Options{MaxPendingBytes: 64 << 20, MaxPendingBytesTotal: 32 << 20})
	if !errors.Is(err, sdk.CodeConfigInvalid) || !strings.Contains(err.Error(), "33554432") {
		t.Fatalf("total below the per-session bound: %v", err)
	}
}

// Every way events leave a queue gives their bytes back: acknowledgement,
// a mirror detached by a final failure (and what it is no longer sent),
// the release of a fenced session whose events stay unwritten; and a
// create's seed counts while it is queued.
func TestPendingBytesTotalReturnsToZero(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock() // no window expires: only the flushes write
	prim, mirror := newRecorder(mem(), clock), newRecorder(mem(), clock)
	st := newTestStore(t, clock, Backend{Name: "prim", Persistence: prim}, Backend{Name: "mirror", Persistence: mirror})
	pending := func() int64 { return st.Stats().PendingBytes }

	src, _ := st.Create(ctx, CreateOptions{ID: "src"})
	mustAppend(t, src, todo("a"), todo("b"))
	if p, want := pending(), 2*envelopeBytes(src.Events().Slice()); p != want {
		t.Fatalf("pending %d after two appends to two backends; want %d", p, want)
	}
	seeded, err := st.Create(ctx, CreateOptions{ID: "seeded", Seed: src.Events().Slice()})
	if err != nil {
		t.Fatal(err)
	}
	if p := pending(); p < 2*envelopeBytes(seeded.Events().Slice()) {
		t.Fatalf("pending %d does not count the seed", p)
	}
	for _, s := range []*session.Session{src, seeded} {
		if _, err := st.Flush(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if p := pending(); p != 0 {
		t.Fatalf("pending %d after the flushes; want 0", p)
	}

	mirror.failNext(sdk.Errorf(sdk.CodeSeqConflict, "test", "the mirror holds other events"))
	mustAppend(t, src, todo("c"))
	if _, err := st.Flush(ctx, src); !errors.Is(err, sdk.CodeMirrorDiverged) {
		t.Fatalf("flush with a failing mirror: %v", err)
	}
	mustAppend(t, src, todo("d")) // reserved for both queues; the detached mirror gives its share back
	if _, err := st.Flush(ctx, src); !errors.Is(err, sdk.CodeMirrorDiverged) {
		t.Fatalf("flush after the mirror detached: %v", err)
	}
	if p := pending(); p != 0 {
		t.Fatalf("pending %d after a mirror detached; want 0", p)
	}

	prim.failNext(sdk.Errorf(sdk.CodeSeqConflict, "test", "someone else wrote"))
	mustAppend(t, seeded, todo("e"))
	if _, err := st.Flush(ctx, seeded); !errors.Is(err, sdk.CodeSeqConflict) || seeded.Fenced() == nil {
		t.Fatalf("flush with a failing primary: %v", err)
	}
	if p := pending(); p == 0 {
		t.Fatal("a fenced session's queued events are not counted")
	}
	_ = st.Release(ctx, seeded)
	if p := pending(); p != 0 {
		t.Fatalf("pending %d after the fenced session's release; want 0", p)
	}
}

// An append that waits for room while its session is released appends
// nothing once room frees: SESSION_CLOSED, its reservation given back.
func TestPendingBytesTotalWaiterOfAReleasedSession(t *testing.T) {
	st, sb := boundedStore(t, 16<<10, time.Minute)
	ctx := context.Background()
	a, _ := st.Create(ctx, CreateOptions{})
	b, _ := st.Create(ctx, CreateOptions{})
	fill(t, st, a)
	done := make(chan error, 1)
	go func() { _, err := b.Append(ctx, bigNote(0)); done <- err }()
	waitWaiters(t, st.pending, 1)
	if err := st.Release(ctx, b); err != nil {
		t.Fatal(err)
	}
	sb.open()
	select {
	case err := <-done:
		if !errors.Is(err, sdk.CodeSessionClosed) || b.Len() != 0 {
			t.Fatalf("append of a session released while it waited: %v, length %d; want SESSION_CLOSED and nothing appended", err, b.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting append did not end once room freed")
	}
	if _, err := st.Flush(ctx, a); err != nil {
		t.Fatal(err)
	}
	if p := st.Stats().PendingBytes; p != 0 {
		t.Fatalf("pending %d after everything drained; want 0", p)
	}
}
