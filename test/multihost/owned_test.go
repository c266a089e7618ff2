package multihost

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

	s, err := a.c.Create(ctx, "owned", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRetry(ctx, 0, []events.Input{events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hello"})}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.c.Resume(ctx, "owned")
	if !errors.Is(err, sdk.CodeAlreadyOwned) || !strings.Contains(err.Error(), a.name) {
		t.Fatalf("open on host B of a session live on A: %v; want ALREADY_OWNED naming %s", err, a.name)
	}
	if _, err := b.c.Create(ctx, "owned", events.CreateOptions{}); sdk.CodeOf(err) != sdk.CodeSessionAlreadyExists {
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
	if _, _, err := a.c.Resume(ctx, "owned"); !errors.Is(err, sdk.CodeAlreadyOwned) || !strings.Contains(err.Error(), b.name) {
		t.Fatalf("open on host A of a session live on B: %v; want ALREADY_OWNED naming %s", err, b.name)
	}
}

// A client of either host follows a session host A writes: the follower on
// host B (which does not hold it) and the one on A both get every event A
// flushes, in order, once.
func TestFollowOnEitherHost(t *testing.T) {
	ctx := t.Context()
	cl := newCluster(t)
	a, b := cl.start("a"), cl.start("b")
	s, err := a.c.Create(ctx, "followed", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendRetry(ctx, 0, []events.Input{events.TurnStart(1)}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err != nil {
		t.Fatal(err)
	}

	const total = 30
	type got struct {
		host string
		seqs []sdk.Seq
		err  error
	}
	results := make(chan got, 2)
	for _, h := range []*host{a, b} {
		go func() {
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			r := got{host: h.name}
			for ev, err := range h.c.Session("followed").Read(fctx, client.ReadOptions{Follow: true}) {
				if err != nil {
					r.err = err
					break
				}
				r.seqs = append(r.seqs, ev.Seq)
				if len(r.seqs) == total {
					break
				}
			}
			results <- r
		}()
	}
	for i := 1; i < total; i++ {
		in := events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", i), Text: fmt.Sprintf("message %d", i)})
		if _, err := s.AppendRetry(ctx, sdk.Offset(i), []events.Input{in}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("follow on host %s: %v after %d events", r.host, r.err, len(r.seqs))
		}
		for i, seq := range r.seqs {
			if seq != sdk.Seq(i) {
				t.Fatalf("follow on host %s got seqs %v; want 0 … %d in order", r.host, r.seqs, total-1)
			}
		}
		if len(r.seqs) != total {
			t.Fatalf("follow on host %s got %d events; want %d", r.host, len(r.seqs), total)
		}
	}
}
