package multihost

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A partition-like fault: the database terminates host A's ownership
// connection while A stays up. A's next append fails, fenced with
// OWNERSHIP_LOST, instead of being retried forever; host B takes the
// session over, and nothing A is asked to write afterwards is stored.
func TestTerminatedOwnerConnectionFencesTheHost(t *testing.T) {
	ctx := t.Context()
	cl := newCluster(t)
	a, b := cl.start("a"), cl.start("b")
	ag := newAgent("agent-0", nil)
	s, err := a.c.Create(ctx, ag.id, events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ag.s = s
	for range 3 {
		ag.writeOne(t)
	}

	db := pgtest.Conn(t, cl.dsn)
	var pid int32
	if err := db.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", "logbook owner "+a.name).Scan(&pid); err != nil {
		t.Fatalf("finding host A's ownership connection: %v", err)
	}
	if _, err := db.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatalf("terminating host A's ownership connection: %v", err)
	}
	// pg_terminate_backend only signals the backend: its locks go when it
	// has exited and released them, and until then A still owns the
	// session.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var n int
		if err := db.QueryRow(ctx, "SELECT (SELECT count(*) FROM pg_stat_activity WHERE pid = $1) + (SELECT count(*) FROM pg_locks WHERE pid = $1)", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host A's ownership connection (pid %d) still runs 10 s after pg_terminate_backend", pid)
		}
	}
	_, err = s.AppendRetry(ctx, ag.next, ag.batch(), client.RetryOptions{Flush: true, MaxAttempts: 5})
	if !client.Fenced(err) || !strings.Contains(err.Error(), string(sdk.CodeOwnershipLost)) {
		t.Fatalf("append on host A after its ownership connection ended: %v; want fenced, OWNERSHIP_LOST", err)
	}
	ag.failed = 2

	took, err := ag.resumeOn(ctx, b, time.Now(), takeOverLimit)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host B took the session over %s after its open began", took.Round(time.Millisecond))
	for range 3 {
		ag.writeOne(t)
	}
	stale := a.c.Session(ag.id)
	if _, err := stale.AppendRetry(ctx, ag.next, []events.Input{events.UserText(events.TextMessage{ID: "late", Text: "agent-0 text 999"})}, client.RetryOptions{Flush: true, MaxAttempts: 3}); err == nil {
		t.Fatal("host A appended to a session host B took over")
	}
	ag.failed = 0
	if _, err := ag.resumeOn(ctx, b, time.Now(), takeOverLimit); err != nil {
		t.Fatal(err)
	}
}

// writeOne appends the agent's next batch with flush; it must succeed.
func (a *agent) writeOne(t *testing.T) {
	t.Helper()
	ins := a.batch()
	evs, err := a.s.AppendRetry(t.Context(), a.next, ins, client.RetryOptions{Flush: true, MaxAttempts: 3})
	if err != nil {
		t.Fatalf("append at %d: %v", a.next, err)
	}
	for _, e := range evs {
		a.acked[e.Seq] = e.Envelope
	}
	a.next += sdk.Offset(len(evs))
	if a.phase = (a.phase + 1) % 3; a.phase == 0 {
		a.turn++
	}
}
