package store

import (
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// View shows a stored log as it stands (no closers, nothing written) and
// any prefix of it, including a fork child's prefix that ends before its
// inherited marker; a live session is viewed from memory; a plugin-declared
// type restores with the store's options; a seq past the end is
// INVALID_BOUNDARY.
func TestView(t *testing.T) {
	p := mem()
	crashedLog(t, p, "src")
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: p}}, PluginTypes: map[string]bool{"acme:note": false}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	before, _ := p.Stat(ctx, "src")
	whole, err := st.View(ctx, "src", nil)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Len() != 6 || whole.PendingRepair() != 0 || !whole.ReadOnly() {
		t.Fatalf("whole view: %d events, %d pending, read-only %v", whole.Len(), whole.PendingRepair(), whole.ReadOnly())
	}
	at := sdk.Seq(2)
	prefix, err := st.View(ctx, "src", &at)
	if err != nil || prefix.Len() != 3 {
		t.Fatalf("prefix view: %v, %v", prefix, err)
	}
	if after, _ := p.Stat(ctx, "src"); after.Revision != before.Revision {
		t.Error("a view changed the stored log")
	}
	far := sdk.Seq(6)
	if _, err := st.View(ctx, "src", &far); !errors.Is(err, sdk.ErrInvalidBoundary) {
		t.Errorf("view past the end: %v", err)
	}
	if _, err := st.View(ctx, "nope", nil); !errors.Is(err, sdk.ErrSessionNotFound) {
		t.Errorf("view of an unknown session: %v", err)
	}

	child, err := st.Fork(ctx, ForkRequest{SourceID: "src", ChildID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, child, raw("acme:note", `{"n":1}`))
	if err := st.Release(ctx, child); err != nil {
		t.Fatal(err)
	}
	early := sdk.Seq(1) // before the child's {inherited: true} marker
	v, err := st.View(ctx, "c", &early)
	if err != nil {
		t.Fatalf("a fork child's prefix before its marker: %v", err)
	}
	if h := v.Header(); h.IsSeeded || h.InheritedEventCount != 0 {
		t.Errorf("prefix lineage %+v", h)
	}
	full, err := st.View(ctx, "c", nil)
	if err != nil {
		t.Fatalf("a log with a plugin-declared type: %v", err)
	}
	if last, _ := full.Event(sdk.Seq(full.Len() - 1)); last.Type() != "acme:note" {
		t.Errorf("last event %s", last.Type())
	}

	live, err := st.Create(ctx, CreateOptions{ID: "live"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, live, user("a"), user("b"))
	first := sdk.Seq(0)
	lv, err := st.View(ctx, "live", &first)
	if err != nil || lv.Len() != 1 {
		t.Fatalf("view of a live session: %v, %v", lv, err)
	}
	if msgs, _ := lv.Messages(); msgs.Len() != 1 {
		t.Errorf("live prefix has %d messages", msgs.Len())
	}
}
