package session

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// ParseStored's early checks change nothing a restore decides: events it
// checked fold to the same session, events it could not check are checked
// by the restore, and a record folded once is checked again when another
// session restores it (a fork seed).
func TestParseStoredThenAddEventsEqualsRestore(t *testing.T) {
	ctx := context.Background()
	envs := [][]byte{
		[]byte(`{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}`),
		[]byte(`{"seq":1,"time":1,"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`),
		[]byte(`{"seq":2,"time":1,"type":"request/header","data":{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}}`),
		[]byte(`{"seq":3,"time":1,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`),
	}
	opts := Options{Header: sdk.Header{ID: "s", FormatVersion: sdk.FormatVersion}}
	want, err := Restore(ctx, opts, RestoreOptions{Source: FromStorage}, envs)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]Event, len(envs))
	for i, b := range envs {
		if events[i], err = ParseStored(b, 0); err != nil {
			t.Fatal(err)
		}
		if checked := events[i].r.checked; checked == (events[i].Type() == TypeRequestHeader) {
			t.Errorf("%s: checked = %v", events[i].Type(), checked)
		}
	}
	r, err := NewRestorer(ctx, opts, RestoreOptions{Source: FromStorage})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddEvents(events); err != nil {
		t.Fatal(err)
	}
	got, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	gm, _ := got.Messages()
	wm, _ := want.Messages()
	if gm.Len() != wm.Len() || string(gm.At(0).JSON()) != string(wm.At(0).JSON()) || got.Len() != want.Len() {
		t.Fatalf("AddEvents folded %d events / %d messages, Restore %d / %d", got.Len(), gm.Len(), want.Len(), wm.Len())
	}
	for _, e := range got.Events().All() {
		if e.r.checked {
			t.Fatalf("seq %d still marked checked after its restore", e.Seq())
		}
	}

	bad, err := ParseStored([]byte(`{"seq":0,"time":1,"type":"turn/start","data":{"turn":"one"}}`), 0)
	if err != nil || bad.r.checked {
		t.Fatalf("a bad payload: err %v, checked %v", err, bad.r.checked)
	}
	r, _ = NewRestorer(ctx, opts, RestoreOptions{Source: FromStorage})
	if err := r.AddEvents([]Event{bad}); !errors.Is(err, sdk.ErrPayloadInvalid) || !errors.Is(err, sdk.ErrCorruptLog) {
		t.Fatalf("AddEvents of a bad payload: %v", err)
	}
}
