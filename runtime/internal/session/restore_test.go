package session

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A StoredParser's early checks change nothing a restore decides: events it
// checked fold to the same session, events it could not check are checked
// by the restore, and a record folded once is checked again when another
// session restores it (a fork seed).
func TestStoredParserThenAddEventsEqualsRestore(t *testing.T) {
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
	var p StoredParser // one parser for all: its reused tape must not leak into the events
	for i, b := range envs {
		if events[i], err = p.Parse(b, 0); err != nil {
			t.Fatal(err)
		}
		if checked := events[i].r.flags&flagChecked != 0; checked == (events[i].Type() == TypeRequestHeader) {
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
		if e.r.flags&flagChecked != 0 {
			t.Fatalf("seq %d still marked checked after its restore", e.Seq())
		}
	}

	bad, err := p.Parse([]byte(`{"seq":0,"time":1,"type":"turn/start","data":{"turn":"one"}}`), 0)
	if err != nil || bad.r.flags&flagChecked != 0 {
		t.Fatalf("a bad payload: err %v, checked %v", err, bad.r.flags&flagChecked != 0)
	}
	r, _ = NewRestorer(ctx, opts, RestoreOptions{Source: FromStorage})
	if err := r.AddEvents([]Event{bad}); !errors.Is(err, sdk.CodePayloadInvalid) || !errors.Is(err, sdk.CodeCorruptLog) {
		t.Fatalf("AddEvents of a bad payload: %v", err)
	}
}

// A StoredParser's events alias a canonical input, copy a non-canonical
// one, keep no parse of their own once settled and still read back the same
// data and messages after the parser moved on to other envelopes.
func TestStoredParserEventsStayIntact(t *testing.T) {
	canonical := []byte(`{"seq":0,"time":1,"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}`)
	reordered := []byte(`{"time":1,"seq":1,"type":"turn/start","data":{"turn":1}}`)
	spaced := []byte(`{"seq":2, "time":1,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`)
	var p StoredParser
	var got []Event
	for _, b := range [][]byte{canonical, reordered, spaced} {
		e, err := p.Parse(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if &got[0].r.env[0] != &canonical[0] {
		t.Error("a canonical envelope was copied instead of aliased")
	}
	for i, b := range [][]byte{reordered, spaced} {
		if &got[i+1].r.env[0] == &b[0] {
			t.Errorf("non-canonical envelope %d aliased", i+1)
		}
	}
	for i, want := range []string{
		`{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`,
		`{"turn":1}`,
		`{"turn":1,"reason":{"kind":"completed"}}`,
	} {
		e := got[i]
		if e.r.data.Exists() {
			t.Errorf("event %d keeps its parse", i)
		}
		if string(e.Data()) != want || string(e.DataView().Bytes()) != want {
			t.Errorf("event %d: Data %s, DataView %s; want %s", i, e.Data(), e.DataView().Bytes(), want)
		}
	}
	m, ok := MessageOf(got[0], nil)
	if !ok || m.ID() != "u1" || m.Role() != "user" || string(m.JSON()) != `{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}` {
		t.Errorf("message of a settled event: ok %v, id %q, role %q, %s", ok, m.ID(), m.Role(), m.JSON())
	}
	if got := m.View().Get("content").Len(); got != 1 {
		t.Errorf("message view: %d content blocks, want 1", got)
	}
}
