package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Stores made with one Budget (one per tenant) share max_live_sessions:
// the cap counts the live sessions of all of them, the store's own
// MaxLiveSessions is ignored, the same id may be live in two of them, and
// a release in one makes room in the other.
func TestBudgetSharesMaxLiveSessions(t *testing.T) {
	a, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: mem()}}, MaxLiveSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(ctx) })
	bp := mem()
	b, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: bp}}, MaxLiveSessions: 100, Budget: a.Budget()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(ctx) })

	inA, err := a.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, CreateOptions{ID: "s"}); err != nil {
		t.Fatalf("the same id in another store: %v", err)
	}
	_, err = b.Create(ctx, CreateOptions{ID: "t"})
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeTooManyLiveSessions || e.Meta["limit"] != "2" {
		t.Fatalf("a third live session across the two stores: %v; want TOO_MANY_LIVE_SESSIONS naming the limit 2", err)
	}
	if _, err := bp.Stat(ctx, "t"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("the refused session was stored: Stat %v", err)
	}
	if n := a.Stats().LiveSessions; n != 2 {
		t.Errorf("Stats of the first store counts %d live sessions; want 2 (both stores)", n)
	}
	if err := a.Release(ctx, inA); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, CreateOptions{ID: "t"}); err != nil {
		t.Fatalf("create after a release in the other store made room: %v", err)
	}
}

// Stores made with one Budget share max_pending_bytes_total: bytes queued
// in one make an append in the other wait; releasing a session of the
// same id in the first store does not end that wait (it is another
// session), and room made in the first lets the append through.
func TestBudgetSharesPendingBytesTotal(t *testing.T) {
	a, sb := boundedStore(t, 16<<10, time.Minute)
	b, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: mem()}}, Budget: a.Budget(),
		MaxEventBytes: 1 << 10, MaxPendingBytes: 16 << 10, WriteWindow: 5 * time.Millisecond, RetryMaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	filler, err := a.Create(ctx, CreateOptions{ID: "filler"})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, a, filler)
	twinA, err := a.Create(ctx, CreateOptions{ID: "twin"})
	if err != nil {
		t.Fatal(err)
	}
	twinB, err := b.Create(ctx, CreateOptions{ID: "twin"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := twinB.Append(ctx, bigNote(0)); done <- err }()
	waitWaiters(t, a.pending, 1)
	if err := a.Release(ctx, twinA); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the release of the other store's session of the same id ended the wait: %v", err)
	default:
	}
	sb.open()
	select {
	case err := <-done:
		if err != nil || twinB.Len() != 1 {
			t.Fatalf("the waiting append: %v, length %d; want it appended", err, twinB.Len())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting append did not go on once the other store's backend made room")
	}
}

// Options.Tenant is the Header.Tenant of every session the store
// creates, forks and imports (whatever the imported header said), over a
// backend's view of the tenant, which refuses any other.
func TestTenantStampsHeaders(t *testing.T) {
	view, err := mem().(sdk.Tenancy).Tenant("b")
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Options{Tenant: "b", Backends: []Backend{{Name: "mem", Persistence: view}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	s, err := st.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, note(0))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	c, err := st.Fork(ctx, ForkRequest{Source: s, ChildID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Flush(ctx, c); err != nil {
		t.Fatal(err)
	}
	h := s.Header()
	h.ID, h.Tenant = "imported", "" // an export of the implicit tenant's
	if err := st.Import(ctx, h, stored(t, view, "s")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s", "c", "imported"} {
		if st, err := view.Stat(ctx, id); err != nil || st.Header.Tenant != "b" {
			t.Errorf("%s: stored Header.Tenant %q (%v); want %q", id, st.Header.Tenant, err, "b")
		}
	}
}
