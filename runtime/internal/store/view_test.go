package store

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
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
	whole, _, err := st.View(ctx, "src", nil)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Len() != 6 || whole.PendingRepair() != 0 || !whole.ReadOnly() {
		t.Fatalf("whole view: %d events, %d pending, read-only %v", whole.Len(), whole.PendingRepair(), whole.ReadOnly())
	}
	at := sdk.Seq(2)
	prefix, _, err := st.View(ctx, "src", &at)
	if err != nil || prefix.Len() != 3 {
		t.Fatalf("prefix view: %v, %v", prefix, err)
	}
	if after, _ := p.Stat(ctx, "src"); after.Revision != before.Revision {
		t.Error("a view changed the stored log")
	}
	far := sdk.Seq(6)
	if _, _, err := st.View(ctx, "src", &far); !errors.Is(err, sdk.CodeInvalidBoundary) {
		t.Errorf("view past the end: %v", err)
	}
	if _, _, err := st.View(ctx, "nope", nil); !errors.Is(err, sdk.CodeSessionNotFound) {
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
	v, _, err := st.View(ctx, "c", &early)
	if err != nil {
		t.Fatalf("a fork child's prefix before its marker: %v", err)
	}
	if h := v.Header(); h.IsSeeded || h.InheritedEventCount != 0 {
		t.Errorf("prefix lineage %+v", h)
	}
	full, _, err := st.View(ctx, "c", nil)
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
	mustAppend(t, live, raw("turn/start", `{"turn":1}`), user("a"), user("b"))
	first := sdk.Seq(1)
	lv, _, err := st.View(ctx, "live", &first)
	if err != nil || lv.Len() != 2 {
		t.Fatalf("view of a live session: %v, %v", lv, err)
	}
	if msgs, _ := lv.Messages(); msgs.Len() != 1 {
		t.Errorf("live prefix has %d messages", msgs.Len())
	}
}

// tornTail is tornLog's interrupted write: no newline.
const tornTail = `{"seq":2,"time":1,"type":"user/mess`

// tornLog returns a store on a jsonl backend whose session "s" holds two
// log-only events and then tornTail, and the path of its log file.
func tornLog(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := jsonl.New(jsonl.Config{Root: dir, Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	st := newTestStore(t, nil, Backend{Name: "jsonl", Persistence: b})
	s, err := st.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"), todo("b"))
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(tornTail); err != nil {
		t.Fatal(err)
	}
	return st, path
}

// View of a stored log that ends in a torn tail shows the events before it
// and reports the tail a write open would cut, without cutting it.
func TestViewReportsATornTail(t *testing.T) {
	st, path := tornLog(t)
	before, _ := os.ReadFile(path)
	v, torn, err := st.View(ctx, "s", nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 2 || torn.Bytes != int64(len(tornTail)) || torn.FromSeq != 2 {
		t.Fatalf("view: %d events, torn %+v; want 2 events and a torn tail of %d bytes from seq 2", v.Len(), torn, len(tornTail))
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a view changed the stored log")
	}
}
