package multihost

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A session live on host A is ALREADY_OWNED on host B, and the error names
// host A; once A releases it, B takes it and sees everything A flushed.
func TestSessionLiveOnOneHostIsAlreadyOwnedOnAnother(t *testing.T) {
	ctx := t.Context()
	cl := newCluster(t)
	a, b := cl.start("a"), cl.start("b")

	s, err := a.c.Create(ctx, "owned")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRetry(ctx, 0, []events.Input{events.TurnStart(1), events.UserText("u1", "hello")}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.c.Resume(ctx, "owned")
	if !errors.Is(err, sdk.ErrAlreadyOwned) || !strings.Contains(err.Error(), a.name) {
		t.Fatalf("open on host B of a session live on A: %v; want ALREADY_OWNED naming %s", err, a.name)
	}
	if _, err := b.c.Create(ctx, "owned"); sdk.CodeOf(err) != sdk.CodeSessionAlreadyExists {
		t.Fatalf("create on host B of a session stored by A: %v; want SESSION_ALREADY_EXISTS", err)
	}

	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	sb, rep, err := b.c.Resume(ctx, "owned")
	if err != nil {
		t.Fatalf("open on host B after A released: %v", err)
	}
	if rep.Closers == 0 {
		t.Fatalf("host B's open repaired nothing of the turn A left open: %+v", rep)
	}
	evs, err := sb.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 2 || !strings.Contains(string(evs[1].Data), "hello") {
		t.Fatalf("host B reads %d events; want A's two first", len(evs))
	}
	if _, _, err := a.c.Resume(ctx, "owned"); !errors.Is(err, sdk.ErrAlreadyOwned) || !strings.Contains(err.Error(), b.name) {
		t.Fatalf("open on host A of a session live on B: %v; want ALREADY_OWNED naming %s", err, b.name)
	}
}
