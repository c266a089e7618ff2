package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

var ctx = context.Background()

// crashedLog writes the crash-repair mix's stored log straight to a backend: a turn
// interrupted after tool call "a" started and before "b" did.
func crashedLog(t *testing.T, p sdk.Persistence, id string) {
	t.Helper()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	s, err := st.Create(ctx, CreateOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s,
		raw("turn/start", `{"turn":1}`),
		todo("hi"),
		raw("step/start", `{"turn":1,"step":1}`),
		raw("request/header", `{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}`),
		session.AppendInput{Type: "assistant/message", SurfaceOp: &session.SurfaceOp{}, Data: []byte(`{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"a","name":"x","arguments":"{}"},{"type":"tool-call","id":"b","name":"x","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`)},
		raw("tool/call", `{"turn":1,"step":1,"callId":"a","name":"x","arguments":"{}"}`),
	)
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Simulate the crash: drop the live session without a release.
	st.mu.Lock()
	ls := st.live[id]
	delete(st.live, id)
	st.mu.Unlock()
	st.stopQueues(ls)
	st.closeBackends([]*backend{ls.queues[0].b})
}

// Crash repair end to end: Open appends the closers and the marker as one
// flushed batch before the session goes live; none reach the feed.
func TestOpenRepairsDurablyBeforeGoingLive(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	feed := &recordingListener{}
	sub := st.Subscribe(feed)
	defer sub.Close()
	s, rep, err := st.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Closers != 4 || s.Len() != 11 || s.FirstLiveSeq() != 11 {
		t.Fatalf("report %+v, len %d, first live %d", rep, s.Len(), s.FirstLiveSeq())
	}
	got := stored(t, p, "s")
	if len(got) != 11 || !strings.Contains(string(got[6]), `"TOOL_OUTCOME_UNKNOWN"`) || !strings.Contains(string(got[7]), `"TOOL_NOT_STARTED"`) ||
		!strings.Contains(string(got[9]), `"interrupted"`) || !strings.Contains(string(got[10]), `"session/end-seed","data":{}`) {
		t.Fatalf("stored repair batch:\n%s", joinLines(got[6:]))
	}
	mustAppend(t, s, todo("after"))
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	feed.waitReleased(t, s)
	if evs := feed.events(s); len(evs) != 1 || evs[0] != 11 {
		t.Fatalf("feed delivered seqs %v; want only the live event 11", evs)
	}
	// A second open finds a closed turn: only a new marker.
	s2, rep2, err := st.Open(ctx, "s")
	if err != nil || rep2.Closers != 0 || s2.Len() != 13 {
		t.Fatalf("second open: %+v len %d %v", rep2, s2.Len(), err)
	}
}

func joinLines(b [][]byte) string {
	var parts []string
	for _, x := range b {
		parts = append(parts, string(x))
	}
	return strings.Join(parts, "\n")
}

// Inspect is read-only: it shows the closers in memory, refuses appends and
// leaves storage alone.
func TestInspectIsReadOnly(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	before, _ := p.Stat(ctx, "s")
	v, _, err := st.Inspect(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if v.PendingRepair() != 4 || v.Len() != 10 {
		t.Fatalf("pending %d len %d", v.PendingRepair(), v.Len())
	}
	if _, err := v.Append(ctx, todo("x")); !errors.Is(err, sdk.CodeSessionReadOnly) {
		t.Fatalf("append to inspect view: %v", err)
	}
	after, _ := p.Stat(ctx, "s")
	if before.Revision != after.Revision || len(stored(t, p, "s")) != 6 {
		t.Fatal("inspect changed storage")
	}
	// Inspect works beside a writer.
	s, _, err := st.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Inspect(ctx, "s"); err != nil {
		t.Fatalf("inspect of a live session: %v", err)
	}
	_ = s
}

// Ownership (store part): a second Open of a live session → ALREADY_OWNED.
func TestOpenTwiceIsAlreadyOwned(t *testing.T) {
	p := mem()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	s, _ := st.Create(ctx, CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Open(ctx, "s"); !errors.Is(err, sdk.CodeAlreadyOwned) {
		t.Fatalf("open of a live session: %v", err)
	}
	st2 := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	if _, _, err := st2.Open(ctx, "s"); !errors.Is(err, sdk.CodeAlreadyOwned) {
		t.Fatalf("open from a second store: %v", err)
	}
}

// Fork at an open cut, from a live and from a stored
// source; the source is untouched.
func TestForkFromALiveOrStoredSource(t *testing.T) {
	p := mem()
	crashedLog(t, p, "src")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	before, _ := p.Stat(ctx, "src")
	child, err := st.Fork(ctx, ForkRequest{SourceID: "src", ChildID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	h := child.Header()
	if !h.IsSeeded || h.InheritedEventCount != 6 || h.ParentSession != "src" || child.FirstLiveSeq() != child.Len() {
		t.Fatalf("child header %+v", h)
	}
	last, _ := child.Event(sdk.Seq(child.Len() - 1))
	if !strings.Contains(string(last.Data()), `"forked"`) {
		t.Fatalf("child does not end with forked closers: %s", last.Envelope())
	}
	after, _ := p.Stat(ctx, "src")
	if before.Revision != after.Revision {
		t.Fatal("fork wrote to the stored source")
	}
	if _, err := st.Flush(ctx, child); err != nil {
		t.Fatal(err)
	}
	if n := len(stored(t, p, "c")); n != int(child.Len()) {
		t.Fatalf("child stored %d events, has %d", n, child.Len())
	}
}

// Fork errors (store part).
func TestForkRefusesABadCut(t *testing.T) {
	p := mem()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	empty, _ := st.Create(ctx, CreateOptions{ID: "empty"})
	zero := sdk.Seq(0)
	if _, err := st.Fork(ctx, ForkRequest{Source: empty, Boundary: &zero, ChildID: "c1"}); !errors.Is(err, sdk.CodeInvalidBoundary) || !strings.Contains(err.Error(), "none") {
		t.Fatalf("boundary 0 of an empty source: %v", err)
	}
	if _, err := st.Fork(ctx, ForkRequest{SourceID: "nope", ChildID: "c2"}); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("unknown source: %v", err)
	}
	bad := sdk.Seq(99)
	if _, err := st.Fork(ctx, ForkRequest{Source: empty, Boundary: &bad, ChildID: "empty"}); !errors.Is(err, sdk.CodeSessionAlreadyExists) {
		t.Fatalf("taken child id must win over the bad boundary: %v", err)
	}
	child, err := st.Fork(ctx, ForkRequest{Source: empty, ChildID: "c3"})
	if err != nil || child.Len() != 1 || child.Header().InheritedEventCount != 0 {
		t.Fatalf("fork of an empty source: %v", err)
	}
	if err := st.Release(ctx, empty); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Open(ctx, "empty"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Fork(ctx, ForkRequest{Source: empty, ChildID: "c4"}); !errors.Is(err, sdk.CodeSessionNotLive) {
		t.Fatalf("stale *Session: %v", err)
	}
}

// The replay marker through the store: a seed without a marker gets one.
func TestCreateWithSeedAddsTheReplayMarker(t *testing.T) {
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: mem()})
	src, _ := st.Create(ctx, CreateOptions{ID: "src"})
	for range 10 {
		mustAppend(t, src, todo("x"))
	}
	s, err := st.Create(ctx, CreateOptions{ID: "copy", Seed: src.Events().Slice()})
	if err != nil || s.Len() != 11 || s.FirstLiveSeq() != 11 {
		t.Fatalf("seeded create: %v", err)
	}
	again, err := st.Create(ctx, CreateOptions{ID: "copy2", Seed: s.Events().Slice()})
	if err != nil || again.Len() != 11 {
		t.Fatalf("a seed ending in a marker gets none: %v", err)
	}
	if _, err := st.Create(ctx, CreateOptions{ID: "copy"}); !errors.Is(err, sdk.CodeSessionAlreadyExists) {
		t.Fatalf("duplicate id: %v", err)
	}
	if _, err := st.Create(ctx, CreateOptions{ID: "bad\x00id"}); !errors.Is(err, sdk.CodeInvalidSessionID) {
		t.Fatalf("bad id: %v", err)
	}
}

// Mirrors get every batch; a mirror created later is caught up at Open; a
// diverged mirror is reported in every flush.
func TestMirrorsCatchUpAndDivergence(t *testing.T) {
	prim, mirror := mem(), mem()
	st := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim})
	s, _ := st.Create(ctx, CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	st2 := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim}, Backend{Name: "mirror", Persistence: mirror})
	s, _, err := st2.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("c"))
	res, err := st2.Flush(ctx, s)
	if err != nil || res.Backends[1].DurableSeq != sdk.Cursor(s.Len())-1 {
		t.Fatalf("mirror flush %+v %v", res, err)
	}
	if a, b := joinLines(stored(t, prim, "s")), joinLines(stored(t, mirror, "s")); a != b {
		t.Fatal("mirror differs from primary")
	}
	if err := st2.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Make the mirror diverge: a different session with the same id.
	other := mem()
	st3 := newTestStore(t, nil, Backend{Name: "x", Persistence: other})
	o, _ := st3.Create(ctx, CreateOptions{ID: "s"})
	mustAppend(t, o, todo("zzz"))
	_ = st3.Release(ctx, o)
	st4 := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim}, Backend{Name: "other", Persistence: other})
	s, _, err = st4.Open(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err = st4.Flush(ctx, s)
		var fe *FlushError
		if !errors.As(err, &fe) || len(fe.Failures) != 1 || fe.Failures[0].Name != "other" || !errors.Is(err, sdk.CodeMirrorDiverged) {
			t.Fatalf("diverged mirror: %v", err)
		}
	}
	if s.Fenced() != nil {
		t.Fatal("a mirror must never fence the session")
	}
}

// recordingListener records the feed.
type recordingListener struct {
	mu       sync.Mutex
	live     []string
	evs      map[*session.Session][]sdk.Seq
	released map[*session.Session]bool
}

func (l *recordingListener) SessionLive(s *session.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = append(l.live, s.ID())
}

func (l *recordingListener) Event(s *session.Session, e session.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.evs == nil {
		l.evs = map[*session.Session][]sdk.Seq{}
	}
	l.evs[s] = append(l.evs[s], e.Seq())
}

func (l *recordingListener) SessionReleased(s *session.Session) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released == nil {
		l.released = map[*session.Session]bool{}
	}
	l.released[s] = true
}

func (l *recordingListener) events(s *session.Session) []sdk.Seq {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]sdk.Seq(nil), l.evs[s]...)
}

func (l *recordingListener) waitReleased(t *testing.T, s *session.Session) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		done := l.released[s]
		l.mu.Unlock()
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("SessionReleased not delivered")
}

// The feed delivers every live event once, in order, and survives a
// panicking listener.
func TestFeedDeliversInOrderAndSurvivesPanics(t *testing.T) {
	st := newTestStore(t, nil)
	rec := &recordingListener{}
	sub := st.Subscribe(rec)
	defer sub.Close()
	bad := st.Subscribe(panicker{})
	defer bad.Close()
	s, _ := st.Create(ctx, CreateOptions{ID: "s"})
	for range 100 {
		mustAppend(t, s, todo("x"))
	}
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	rec.waitReleased(t, s)
	got := rec.events(s)
	if len(got) != 100 {
		t.Fatalf("delivered %d events", len(got))
	}
	for i, seq := range got {
		if seq != sdk.Seq(i) {
			t.Fatalf("event %d has seq %d", i, seq)
		}
	}
}

type panicker struct{}

func (panicker) SessionLive(*session.Session)          { panic("boom") }
func (panicker) Event(*session.Session, session.Event) { panic("boom") }
func (panicker) SessionReleased(*session.Session)      { panic("boom") }
