package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
)

// TestWatchSurvivesALostListenConnection: when the watches' LISTEN
// connection is terminated, notifications sent meanwhile are lost, but the
// watch reconnects and reads next_seq again, so it still reports an append
// another host made while it was away.
func TestWatchSurvivesALostListenConnection(t *testing.T) {
	dsn := pgtest.DSN(t)
	w := where{dsn, pgtest.Schema(t, dsn)}
	a, b := newHost(t, false, w, hostName("host-a")), newHost(t, false, w, hostName("host-b"))
	o, err := a.p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	appendEvents(t, a.p, o.Handle, 0, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lengths := make(chan sdk.Offset, 16)
	done := make(chan error, 1)
	go func() {
		done <- b.p.(sdk.Watcher).Watch(ctx, "s1", 1, func(n sdk.Offset) error { lengths <- n; return nil })
	}()
	next := func(want sdk.Offset) {
		t.Helper()
		for {
			select {
			case n := <-lengths:
				if n == want {
					return
				}
				if n > want {
					t.Fatalf("Watch reported %d; want %d", n, want)
				}
			case err := <-done:
				t.Fatalf("Watch ended: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatalf("Watch did not report length %d", want)
			}
		}
	}
	next(1)
	c := pgtest.Conn(t, dsn)
	app := "logbook watch " + b.name
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := c.QueryRow(t.Context(), "SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE application_name = $1) t", app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch's LISTEN connection never showed up")
		}
		time.Sleep(20 * time.Millisecond)
	}
	appendEvents(t, a.p, o.Handle, 1, 2)
	next(3)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("a cancelled Watch returned %v", err)
	}
}
