package providerview

import (
	"context"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// open returns a session holding a turn whose step announced call c1 and
// has no result for it, and a function that appends the result.
func open(t *testing.T, header bool) (s *session.Session, answer func()) {
	t.Helper()
	s, err := session.New(session.Options{Header: sdk.Header{ID: "pv"}, Clock: session.ClockFunc(func() int64 { return 1 })})
	if err != nil {
		t.Fatal(err)
	}
	app := &session.SurfaceOp{}
	add := func(typ string, op *session.SurfaceOp, data string) {
		t.Helper()
		if _, err := s.Append(context.Background(), session.AppendInput{Type: typ, SurfaceOp: op, Data: []byte(data)}); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
	}
	if header {
		add(session.TypeRequestHeader, nil, `{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}`)
	}
	add(session.TypeTurnStart, nil, `{"turn":1}`)
	add(session.TypeUserMessage, app, `{"id":"u1","role":"user","content":[{"type":"text","text":"go"}],"source":{"kind":"prompt"}}`)
	add(session.TypeStepStart, nil, `{"turn":1,"step":1}`)
	add(session.TypeAssistantMessage, app, `{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`)
	return s, func() {
		add(session.TypeToolResult, app, `{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"a.go"}],"source":{"kind":"tool","callId":"c1"}}}`)
	}
}

// An error that names a message names its event and the session too; the
// logbook format renders an open step; a format is checked first.
func TestErrorsNameTheEvent(t *testing.T) {
	s, answer := open(t, true)
	assistantSeq := int64(s.Len() - 1)
	for name, render := range map[string]func(string, *session.Session) (Rendering, error){"messages": Messages, "request": Request} {
		_, err := render(provider.FormatAnthropic, s)
		e := sdk.ErrorOf(err)
		if e == nil || e.Code != sdk.CodeToolCallsPending || e.Seq == nil || *e.Seq != assistantSeq || e.SessionID != "pv" || e.Meta["callIds"] != `["c1"]` {
			t.Errorf("%s: %v; want TOOL_CALLS_PENDING at seq %d of session pv naming c1", name, err, assistantSeq)
		}
		if _, err := render(provider.FormatLogbook, s); err != nil {
			t.Errorf("%s logbook: %v", name, err)
		}
		if _, err := render("gemini", s); !errors.Is(err, sdk.CodeUsage) {
			t.Errorf("%s gemini: %v", name, err)
		}
	}
	answer()
	r, err := Request(provider.FormatAnthropic, s)
	if err != nil || provider.CheckRequest(provider.FormatAnthropic, r.Body) != nil || r.Omitted != nil {
		t.Fatalf("answered: %s, %v, omitted %v", r.Body, err, r.Omitted)
	}
}

// A provider request without a request/header is REQUEST_HEADER_MISSING
// naming the session.
func TestRequestHeaderMissing(t *testing.T) {
	s, answer := open(t, false)
	answer()
	_, err := Request(provider.FormatOpenAI, s)
	if e := sdk.ErrorOf(err); e == nil || e.Code != sdk.CodeRequestHeaderMissing || e.SessionID != "pv" {
		t.Fatalf("%v; want REQUEST_HEADER_MISSING of session pv", err)
	}
	if _, err := Request(provider.FormatLogbook, s); err != nil {
		t.Fatalf("logbook: %v", err)
	}
}

// A provider rendering of a lenient log lists what it left out with the
// seq of its message, from the same read as its body; logbook's own
// format leaves nothing out and lists nothing.
func TestRenderingListsWhatItLeftOut(t *testing.T) {
	s, err := session.New(session.Options{Header: sdk.Header{ID: "pv", Protocol: sdk.ProtocolLenient}, Clock: session.ClockFunc(func() int64 { return 1 })})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []session.AppendInput{
		{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{}, Data: []byte(`{"id":"u1","role":"user","content":[{"type":"text","text":"go"}],"source":{"kind":"prompt"}}`)},
		{Type: session.TypeToolResult, SurfaceOp: &session.SurfaceOp{}, Data: []byte(`{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"zz","content":[{"type":"text","text":"x"}],"source":{"kind":"tool","callId":"zz"}}}`)},
	} {
		if _, err := s.Append(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Messages(provider.FormatOpenAI, s)
	if err != nil || len(r.Omitted) != 1 || r.Omitted[0].Seq != 1 || r.Omitted[0].String() != `seq 1: tool result for call "zz" left out (TOOL_RESULT_UNMATCHED)` {
		t.Fatalf("openai: %s, %v, omitted %v", r.Body, err, r.Omitted)
	}
	if r, err := Messages(provider.FormatLogbook, s); err != nil || r.Omitted != nil {
		t.Fatalf("logbook: %v, omitted %v", err, r.Omitted)
	}
}
