package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencefault"
)

// followed collects what a FollowStored hands over, in order.
type followed struct {
	events chan session.Event
}

func (f followed) add(events []session.Event) error {
	for _, e := range events {
		f.events <- e
	}
	return nil
}

// next waits for the next followed event.
func (f followed) next(t *testing.T) session.Event {
	t.Helper()
	select {
	case e := <-f.events:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event followed within 10 s")
		return session.Event{}
	}
}

// A host follows a session another host writes: it gets the stored events
// from `from`, then each flushed batch of the writer, in order, each once,
// byte for byte; events the writer has not flushed are not seen.
func TestFollowStoredSeesAnotherHostsFlushes(t *testing.T) {
	writerBackend := memory.New()
	writer := newTestStore(t, nil, Backend{Name: "mem", Persistence: writerBackend})
	reader := newTestStore(t, nil, Backend{Name: "mem", Persistence: writerBackend.Peer()})
	if !reader.CanFollowStored() {
		t.Fatal("a store over the memory backend cannot follow")
	}
	s, err := writer.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"), todo("b"))
	if _, err := writer.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}

	fctx, cancel := context.WithCancel(ctx)
	got := followed{events: make(chan session.Event, 64)}
	done := make(chan error, 1)
	go func() { done <- reader.FollowStored(fctx, "s", 1, got.add) }()

	for seq := 1; seq < int(s.Len()); seq++ {
		e := got.next(t)
		if want := s.Events().At(seq); int(e.Seq()) != seq || !bytes.Equal(e.AppendEnvelope(nil), want.AppendEnvelope(nil)) {
			t.Fatalf("followed %s; want seq %d %s", e.AppendEnvelope(nil), seq, want.AppendEnvelope(nil))
		}
	}
	stored := s.Len()
	mustAppend(t, s, todo("c"))
	select {
	case e := <-got.events:
		t.Fatalf("followed seq %d before the writer flushed it", e.Seq())
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := writer.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	for seq := int(stored); seq < int(s.Len()); seq++ {
		if e := got.next(t); int(e.Seq()) != seq {
			t.Fatalf("followed seq %d; want %d", e.Seq(), seq)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("follow ended with %v; want context.Canceled", err)
	}
	select {
	case e := <-got.events:
		t.Fatalf("followed seq %d twice or out of order", e.Seq())
	default:
	}
}

// A follow ends with fn's error, with SESSION_NOT_FOUND for a session not
// stored, and a primary that cannot watch is CONFIG_INVALID.
func TestFollowStoredErrors(t *testing.T) {
	p := memory.New()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	if err := st.FollowStored(ctx, "nobody", 0, followed{}.add); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("follow of a missing session: %v; want SESSION_NOT_FOUND", err)
	}
	if err := st.FollowStored(ctx, "bad\x01id", 0, followed{}.add); sdk.CodeOf(err) != sdk.CodeInvalidSessionID {
		t.Fatalf("follow of a bad id: %v; want INVALID_SESSION_ID", err)
	}
	s, _ := st.Create(ctx, CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("enough")
	if err := st.FollowStored(ctx, "s", 0, func([]session.Event) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("follow whose fn fails: %v; want its error", err)
	}

	blind := newTestStore(t, nil, Backend{Name: "mem", Persistence: persistencefault.Wrap(memory.New())})
	if blind.CanFollowStored() {
		t.Fatal("a backend without Watch claims it can follow")
	}
	if err := blind.FollowStored(ctx, "s", 0, followed{}.add); sdk.CodeOf(err) != sdk.CodeConfigInvalid {
		t.Fatalf("follow without a watcher: %v; want CONFIG_INVALID", err)
	}
}

// ReadStored reads a window of a stored log another host writes, byte for
// byte, reports the stored length first, and reads nothing of a window
// past the end; a missing session is SESSION_NOT_FOUND.
func TestReadStoredWindow(t *testing.T) {
	writerBackend := memory.New()
	writer := newTestStore(t, nil, Backend{Name: "mem", Persistence: writerBackend})
	reader := newTestStore(t, nil, Backend{Name: "mem", Persistence: writerBackend.Peer()})
	s, err := writer.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"), todo("b"), todo("c"))
	if _, err := writer.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("not flushed"))
	read := func(from, end sdk.Offset) (sdk.Offset, []session.Event, error) {
		length := sdk.Offset(-1)
		var got []session.Event
		err := reader.ReadStored(ctx, "s", from, end, func(n sdk.Offset) {
			if got != nil {
				t.Error("begin called after events")
			}
			length = n
		}, func(events []session.Event) error {
			got = append(got, events...)
			return nil
		})
		return length, got, err
	}
	stored := s.Len() - 1
	length, got, err := read(1, 3)
	if err != nil || length != stored || len(got) != 2 {
		t.Fatalf("window [1,3): length %d, %d events, %v; want length %d, 2 events", length, len(got), err, stored)
	}
	for i, e := range got {
		if want := s.Events().At(1 + i); !bytes.Equal(e.AppendEnvelope(nil), want.AppendEnvelope(nil)) {
			t.Errorf("seq %d: read %s, want %s", 1+i, e.AppendEnvelope(nil), want.AppendEnvelope(nil))
		}
	}
	if length, got, err = read(stored, stored+10); err != nil || length != stored || len(got) != 0 {
		t.Errorf("window past the stored end: length %d, %d events, %v; want %d, none", length, len(got), err, stored)
	}
	err = reader.ReadStored(ctx, "missing", 0, 1, func(sdk.Offset) {}, func([]session.Event) error { return nil })
	if sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Errorf("missing session: %v, want SESSION_NOT_FOUND", err)
	}
}

// A follow from the end of the stored log calls fn once with no events, so
// its caller knows it has caught up, then with each flushed batch.
func TestFollowStoredFromTheEndReportsCaughtUp(t *testing.T) {
	p := memory.New()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	s, err := st.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	calls := make(chan []session.Event, 8)
	reader := newTestStore(t, nil, Backend{Name: "mem", Persistence: p.Peer()})
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_ = reader.FollowStored(fctx, "s", s.Len(), func(events []session.Event) error {
			calls <- events
			return nil
		})
	}()
	next := func() []session.Event {
		select {
		case evs := <-calls:
			return evs
		case <-time.After(10 * time.Second):
			t.Fatal("fn was not called within 10 s")
			return nil
		}
	}
	if evs := next(); len(evs) != 0 {
		t.Fatalf("the first call holds %d events; want none (caught up)", len(evs))
	}
	mustAppend(t, s, todo("b"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if evs := next(); len(evs) != 1 || evs[0].Seq() != sdk.Seq(s.Len()-1) {
		t.Fatalf("after a flush fn got %d events; want the new one", len(evs))
	}
}
