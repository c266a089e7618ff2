package retention_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/retention"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// clock is the store's clock, set by the test; timers are real.
type clock struct{ ms atomic.Int64 }

func (c *clock) NowMillis() int64 { return c.ms.Load() }
func (c *clock) AfterFunc(d time.Duration, f func()) store.Timer {
	return store.SystemClock{}.AfterFunc(d, f)
}

const day = 24 * time.Hour

// sessionAt stores session id, with one event written at the clock's time
// at, and a parent when parent is not "".
func sessionAt(t *testing.T, st *store.Store, c *clock, id, parent string, at time.Time) {
	t.Helper()
	c.ms.Store(at.UnixMilli())
	s, err := st.Create(t.Context(), store.CreateOptions{ID: id, ParentSession: parent})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(t.Context(), session.AppendInput{Type: "ext/note", Data: []byte(`{}`), Ignorable: true}); err != nil {
		t.Fatal(err)
	}
	if err := st.Release(t.Context(), s); err != nil {
		t.Fatal(err)
	}
}

func TestPlanAndApply(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	c := &clock{}
	p := memory.New()
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "mem", Persistence: p}}, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	sessionAt(t, st, c, "old", "", now.Add(-100*day))
	sessionAt(t, st, c, "recent", "", now.Add(-10*day))
	sessionAt(t, st, c, "held", "", now.Add(-200*day))
	sessionAt(t, st, c, "parent", "", now.Add(-300*day))
	sessionAt(t, st, c, "child", "parent", now.Add(-5*day))
	if _, _, err := st.Hold(t.Context(), "held", sdk.AuditRequest{By: sdk.ByCLI}); err != nil {
		t.Fatal(err)
	}
	policy := retention.Policy{MaxAge: 90 * day, KeepForkedParents: true}
	ds, err := retention.Plan(t.Context(), st, policy, now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]retention.Decision{}
	for _, d := range ds {
		got[d.ID] = d
	}
	if len(ds) != 3 || ds[0].ID != "parent" || got["parent"].Delete || got["parent"].Kept != "parent of child" ||
		got["held"].Delete || got["held"].Kept != "held" || !got["old"].Delete ||
		!got["old"].LastActivity.Equal(now.Add(-100*day)) {
		t.Fatalf("Plan = %+v", ds)
	}
	// The plan changed nothing.
	if _, err := p.Stat(t.Context(), "old"); err != nil {
		t.Fatalf("Plan deleted old: %v", err)
	}
	if n := retention.Apply(t.Context(), st, ds); n != 1 {
		t.Fatalf("Apply deleted %d; want 1", n)
	}
	if _, err := p.Stat(t.Context(), "old"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("old is still stored: %v", err)
	}
	var recs []sdk.AuditRecord
	if err := st.Audit(t.Context(), func(r sdk.AuditRecord) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Op != sdk.AuditDelete || last.Session != "old" || last.Reason != retention.Reason || last.By != sdk.ByRetention {
		t.Fatalf("the deletion's record %+v", last)
	}
	// Without keep_forked_parents the parent goes too.
	ds, err = retention.Plan(t.Context(), st, retention.Policy{MaxAge: 90 * day}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].ID != "parent" || !ds[0].Delete {
		t.Fatalf("Plan without keep_forked_parents = %+v", ds)
	}
}
