package session

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// fuzzBase builds a small valid session: a system node 0, a turn, a
// header, a step with an assistant message with a tool call and its
// result, a user message.
func fuzzBase(tb testing.TB) *Session {
	s := mustNew(tb)
	ctx := context.Background()
	app := &SurfaceOp{}
	for _, in := range []AppendInput{
		{Type: TypeSystemMessage, SurfaceOp: app, Data: []byte(`{"turn":0,"step":0,"message":{"id":"s","role":"system","content":[{"type":"text","text":"sys"}],"source":{"kind":"system-prompt"}}}`)},
		{Type: TypeTurnStart, Data: []byte(`{"turn":1}`)},
		{Type: TypeRequestHeader, Data: []byte(`{"header":{"config":{"provider":"p","model":"m"},"tools":[{"name":"search","description":"d","parameters":{}}]},"reason":"initial"}`)},
		{Type: TypeStepStart, Data: []byte(`{"turn":1,"step":1}`)},
		{Type: TypeAssistantMessage, SurfaceOp: app, Data: []byte(`{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":"c","name":"search","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`)},
		{Type: TypeToolResult, SurfaceOp: app, Data: []byte(`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c","content":[{"type":"text","text":"out"}],"source":{"kind":"tool","callId":"c"}}}`)},
		{Type: TypeUserMessage, SurfaceOp: app, Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)},
	} {
		if _, err := s.Append(ctx, in); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

type fuzzState struct {
	n     sdk.Offset
	nodes []sdk.Seq
	gen   uint64
	msgs  []string
}

func captureFuzz(tb testing.TB, s *Session) fuzzState {
	v, err := s.Surface()
	if err != nil {
		tb.Fatal(err)
	}
	l, err := s.Messages()
	if err != nil {
		tb.Fatal(err)
	}
	st := fuzzState{n: s.Len(), nodes: v.Nodes(), gen: v.ContentGeneration()}
	for _, m := range l.All() {
		st.msgs = append(st.msgs, string(m.JSON()))
	}
	return st
}

// FuzzAppend feeds arbitrary appends to a small valid session: the pipeline
// never panics, a rejection carries a code and changes nothing, and an
// accepted event replays to the same state.
func FuzzAppend(f *testing.F) {
	f.Add("user/message", []byte(`{"id":"x","role":"user","content":[],"source":{"kind":"user"}}`), uint8(1), int64(0), int64(0), []byte{})
	f.Add("user/message", []byte(`{"id":"x","role":"user","content":[],"source":{"kind":"user"}}`), uint8(2), int64(3), int64(5), []byte{3, 4, 5})
	f.Add("tool/result", []byte(`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c","content":[],"source":{"kind":"tool","callId":"c"}}}`), uint8(2), int64(4), int64(4), []byte{4})
	f.Add("system/message", []byte(`{"turn":0,"step":0,"message":{"id":"s2","role":"system","content":[],"source":{"kind":"system-prompt"}}}`), uint8(2), int64(0), int64(0), []byte{0})
	f.Add("todo/write", []byte(`{"todos":[{"content":"a","status":"pending"}],"x":-0}`), uint8(0), int64(0), int64(0), []byte(nil))
	f.Add("x-ext/thing", []byte(`{"a":[1,2,{"b":null}]}`), uint8(1), int64(-1), int64(9), []byte{200})
	// Call ids at, past and far past sdk.MaxCallIDBytes, ASCII and not.
	for _, id := range []string{strings.Repeat("c", 128), strings.Repeat("c", 129), strings.Repeat("c", 240), strings.Repeat("é", 64), strings.Repeat("é", 120) + "x"} {
		q := tcQuote(id)
		f.Add("tool/call", []byte(`{"turn":1,"step":1,"callId":`+q+`,"name":"search","arguments":"{}"}`), uint8(0), int64(0), int64(0), []byte(nil))
		f.Add("tool/result", []byte(`{"turn":1,"step":1,"message":{"id":"r2","role":"tool","toolCallId":`+q+`,"content":[],"source":{"kind":"tool","callId":`+q+`}}}`), uint8(1), int64(0), int64(0), []byte(nil))
		f.Add("assistant/message", []byte(`{"turn":1,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"tool-call","id":`+q+`,"name":"search","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`), uint8(1), int64(0), int64(0), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte, opKind uint8, start, end int64, src []byte) {
		s := fuzzBase(t)
		before := captureFuzz(t, s)
		held, _ := s.Messages()
		in := AppendInput{Type: typ, Data: data, Ignorable: opKind&4 != 0}
		switch opKind % 4 {
		case 1:
			in.SurfaceOp = &SurfaceOp{}
		case 2:
			in.SurfaceOp = &SurfaceOp{Replace: true, StartSeq: sdk.Seq(start), EndSeq: sdk.Seq(end)}
		}
		if src != nil {
			in.SourceEventSeqs = []sdk.Seq{}
			for _, b := range src {
				in.SourceEventSeqs = append(in.SourceEventSeqs, sdk.Seq(b)-1)
			}
		}
		e, err := s.Append(context.Background(), in)
		after := captureFuzz(t, s)
		if err != nil {
			if sdk.CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			if after.n != before.n || !slices.Equal(after.nodes, before.nodes) || after.gen != before.gen || !slices.Equal(after.msgs, before.msgs) {
				t.Fatalf("rejected append (%v) changed the session", err)
			}
			if held.Len() != len(before.msgs) {
				t.Fatal("an earlier snapshot changed")
			}
			return
		}
		if after.n != before.n+1 || e.Seq() != sdk.Seq(before.n) {
			t.Fatalf("accepted append: len %d → %d, seq %d", before.n, after.n, e.Seq())
		}
		replayed, err := RestoreEvents(context.Background(), Options{}, RestoreOptions{}, s.Events().Slice())
		if err != nil {
			t.Fatalf("accepted event does not replay: %v\n%s", err, e.Envelope())
		}
		if got := captureFuzz(t, replayed); !slices.Equal(got.nodes, after.nodes) || !slices.Equal(got.msgs, after.msgs) {
			t.Fatal("replay != live")
		}
		if _, err := ParseEnvelope(e.Envelope(), 0); err != nil {
			t.Fatalf("canonical envelope does not parse: %v", err)
		}
		// Whatever was accepted, crash repair's closers fit the log.
		if closers := InterruptedTurnClosers(s.Events().Slice()); len(closers) > 0 {
			if _, err := RestoreEvents(context.Background(), Options{}, RestoreOptions{}, append(s.Events().Slice(), closers...)); err != nil {
				t.Fatalf("the closers of an accepted log do not restore: %v", err)
			}
		}
	})
}

// FuzzRestore feeds arbitrary newline-separated envelopes to the restore
// pipeline: it never panics, failures are coded, and an accepted log
// restores again from its own canonical envelopes to the same state.
func FuzzRestore(f *testing.F) {
	base := fuzzBase(f)
	var log bytes.Buffer
	for _, e := range base.Events().All() {
		log.Write(e.Envelope())
		log.WriteByte('\n')
	}
	f.Add(log.Bytes())
	f.Add([]byte(`{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}`))
	f.Add([]byte(`{"type":"turn/start","seq":0,"data":{"turn":1},"time":1}`))
	f.Add([]byte(`{"seq":0,"time":1,"type":"x-ext/y","data":{},"surfaceOp":{"weird":[1]},"ignorable":true}`))
	f.Add([]byte(`{"seq":0,"time":1,"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":{"op":"replace","startSeq":0}}`))
	f.Add([]byte(`{"seq":1,"time":1,"type":"turn/start","data":{"turn":1}}`))
	// A log stored before call ids were bounded: a 240-byte call id, open.
	long := tcQuote(strings.Repeat("c", 240))
	f.Add([]byte(`{"seq":0,"time":1,"type":"turn/start","data":{"turn":1}}
{"seq":1,"time":1,"type":"step/start","data":{"turn":1,"step":1}}
{"seq":2,"time":1,"type":"assistant/message","data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"tool-call","id":` + long + `,"name":"n","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]},"surfaceOp":"append"}
{"seq":3,"time":1,"type":"tool/call","data":{"turn":1,"step":1,"callId":` + long + `,"name":"n","arguments":"{}"}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var envs [][]byte
		for line := range bytes.SplitSeq(in, []byte{'\n'}) {
			if len(line) > 0 {
				envs = append(envs, line)
			}
		}
		s, err := Restore(context.Background(), Options{}, RestoreOptions{}, envs)
		if err != nil {
			if sdk.CodeOf(err) == "" {
				t.Fatalf("error without a code: %v", err)
			}
			return
		}
		var again [][]byte
		for _, e := range s.Events().All() {
			again = append(again, e.Envelope())
		}
		s2, err := Restore(context.Background(), Options{}, RestoreOptions{}, again)
		if err != nil {
			t.Fatalf("canonical envelopes do not restore: %v", err)
		}
		a, b := captureFuzz(t, s), captureFuzz(t, s2)
		if !slices.Equal(a.nodes, b.nodes) || !slices.Equal(a.msgs, b.msgs) {
			t.Fatal("restore of canonical envelopes differs")
		}
		for i, e := range s2.Events().All() {
			if !bytes.Equal(e.Envelope(), again[i]) {
				t.Fatal("canonical envelope not idempotent")
			}
		}
	})
}

func TestParseEnvelopeCanonicalizesMemberOrder(t *testing.T) {
	// Envelope members come out in docs/format.md order; an unknown (class U)
	// event keeps its uninterpreted surfaceOp byte-exact.
	in := []byte(`{"surfaceOp":{"endSeq":0,"startSeq":0,"op":"replace"},"data":{"b":1,"a":1.50},"type":"x-ext/y","time":5,"seq":1,"ignorable":true,"sourceEventSeqs":[0]}`)
	e, err := ParseEnvelope(in, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"time":5,"type":"x-ext/y","data":{"b":1,"a":1.50},"surfaceOp":{"endSeq":0,"startSeq":0,"op":"replace"},"sourceEventSeqs":[0],"ignorable":true}`
	if string(e.Envelope()) != want {
		t.Fatalf("got  %s\nwant %s", e.Envelope(), want)
	}
	// A surface event's replace op is rendered canonically.
	user := []byte(`{"seq":1,"time":5,"type":"user/message","data":{},"surfaceOp":{"startSeq":0,"op":"replace","endSeq":0}}`)
	e, err = ParseEnvelope(user, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"seq":1,"time":5,"type":"user/message","data":{},"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0}}`; string(e.Envelope()) != want {
		t.Fatalf("replace op not canonical: %s", e.Envelope())
	}
}
