package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Past MaxLiveSessions, Create, Open, Fork and Salvage refuse with
// TOO_MANY_LIVE_SESSIONS naming the cap, and nothing is created or
// claimed; a release makes room.
func TestMaxLiveSessionsRefusesOneMore(t *testing.T) {
	p := mem()
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: p}}, MaxLiveSessions: 2, NewID: sequentialIDs()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	stored, err := st.Create(ctx, CreateOptions{ID: "stored"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, stored); err != nil {
		t.Fatal(err)
	}
	a, err := st.Create(ctx, CreateOptions{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(ctx, CreateOptions{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	refused := func(op string, err error) {
		t.Helper()
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeTooManyLiveSessions || !strings.Contains(e.Detail, "max_live_sessions = 2") || e.Meta["limit"] != "2" {
			t.Fatalf("%s: got %v, want TOO_MANY_LIVE_SESSIONS naming max_live_sessions = 2", op, err)
		}
		if !sdk.Retryable(err) {
			t.Errorf("%s: TOO_MANY_LIVE_SESSIONS is not retryable", op)
		}
	}
	_, err = st.Create(ctx, CreateOptions{ID: "c"})
	refused("create", err)
	_, _, err = st.Open(ctx, "stored")
	refused("open", err)
	_, err = st.Fork(ctx, ForkRequest{SourceID: "a", ChildID: "child"})
	refused("fork", err)
	_, _, err = st.Salvage(ctx, SalvageRequest{SourceID: "stored", ChildID: "salvaged"})
	refused("salvage", err)

	for _, id := range []string{"c", "child", "salvaged"} {
		if _, err := p.Stat(ctx, id); !errors.Is(err, sdk.CodeSessionNotFound) {
			t.Errorf("%s: a refused session was stored: Stat %v", id, err)
		}
	}
	if o, err := p.Open(ctx, "stored", sdk.AccessWrite); err != nil {
		t.Errorf("the refused open claimed the session: %v", err)
	} else {
		_ = p.Close(ctx, o.Handle)
	}
	if n := st.Stats().LiveSessions; n != 2 {
		t.Errorf("live sessions %d, want 2", n)
	}

	if err := st.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Open(ctx, "stored"); err != nil {
		t.Fatalf("open after a release made room: %v", err)
	}
}
