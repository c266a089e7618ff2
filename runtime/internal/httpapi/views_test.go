package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// openTurnLines is a turn left open mid-tool-call: started, prompted, a
// step whose assistant message requests a tool call that has started.
func openTurnLines() []byte {
	return ndjson(
		`{"type":"turn/start","data":{"turn":1}}`,
		userLine("u1", "list the files"),
		`{"type":"step/start","data":{"turn":1,"step":1}}`,
		`{"type":"assistant/message","surfaceOp":"append","data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}}`,
		`{"type":"tool/call","data":{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}}`,
	)
}

// The derived views, fork, flush, inspect, compact and release against a
// real `logbook serve`.
func TestV1ViewsAndLifecycle(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"v"}`))
	envs := lines(s.ok(t, 200, "POST", "/v1/sessions/v/events", "application/x-ndjson", openTurnLines()).body)

	var msgs []json.RawMessage
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/v/messages", "", nil).body, &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("messages: %d (%v)", len(msgs), err)
	}
	if got := s.ok(t, 200, "GET", "/v1/sessions/v/messages?at=1", "", nil).body; !bytes.Equal(bytes.TrimSpace(got), []byte("["+string(msgs[0])+"]")) {
		t.Errorf("messages?at=1 = %s", got)
	}
	if got := bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/surface", "", nil).body); string(got) != "[1,3]" {
		t.Errorf("surface = %s", got)
	}
	if got := bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/surface?at=2", "", nil).body); string(got) != "[1]" {
		t.Errorf("surface?at=2 = %s", got)
	}
	var tr []struct {
		Seq       int64           `json:"seq"`
		Type      string          `json:"type"`
		Message   json.RawMessage `json:"message"`
		OnSurface bool            `json:"onSurface"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/v/transcript", "", nil).body, &tr); err != nil || len(tr) != 2 || tr[0].Seq != 1 || tr[1].Type != "assistant/message" || !tr[1].OnSurface {
		t.Fatalf("transcript %+v (%v)", tr, err)
	}
	if got := bytes.TrimSpace(s.ok(t, 200, "GET", "/v1/sessions/v/header", "", nil).body); string(got) != "null" {
		t.Errorf("header = %s", got)
	}
	var req struct {
		Header   json.RawMessage   `json:"header"`
		Context  json.RawMessage   `json:"context"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/v/request?at=3", "", nil).body, &req); err != nil || string(req.Header) != "null" || len(req.Messages) != 2 {
		t.Fatalf("request?at=3: %+v (%v)", req, err)
	}
	s.failed(t, 400, "INVALID_SEQ", "GET", "/v1/sessions/v/messages?at=-1", "", nil)

	var fl struct {
		Participated bool `json:"participated"`
		Backends     []struct {
			Name       string `json:"name"`
			DurableSeq int64  `json:"durableSeq"`
		} `json:"backends"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "POST", "/v1/sessions/v/flush", "application/json", nil).body, &fl); err != nil || !fl.Participated || len(fl.Backends) != 1 || fl.Backends[0].DurableSeq != 4 {
		t.Fatalf("flush: %+v (%v)", fl, err)
	}

	var in struct {
		ID            string            `json:"id"`
		Events        int64             `json:"events"`
		Live          bool              `json:"live"`
		OpenTurn      *int64            `json:"openTurn"`
		PendingRepair []json.RawMessage `json:"pendingRepair"`
		TornBytes     int64             `json:"tornBytes"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/v/inspect", "", nil).body, &in); err != nil || in.Events != 5 || !in.Live || in.OpenTurn == nil || *in.OpenTurn != 1 || len(in.PendingRepair) == 0 {
		t.Fatalf("inspect: %+v (%v)", in, err)
	}

	// A fork at seq 1 keeps the first two events byte for byte.
	child := s.ok(t, 201, "POST", "/v1/sessions/v/fork", "application/json", []byte(`{"at":1,"as":"v2"}`))
	if !bytes.Contains(child.body, []byte(`"id":"v2"`)) || child.header.Get("Location") != "/v1/sessions/v2" {
		t.Fatalf("fork answered %s", child.body)
	}
	forked := lines(s.ok(t, 200, "GET", "/v1/sessions/v2/events?to=2", "", nil).body)
	if len(forked) != 2 || !bytes.Equal(forked[0], envs[0]) || !bytes.Equal(forked[1], envs[1]) {
		t.Fatalf("the fork's prefix differs:\n%s\n%s", forked, envs[:2])
	}
	s.failed(t, 409, "SESSION_ALREADY_EXISTS", "POST", "/v1/sessions/v/fork", "application/json", []byte(`{"as":"v2"}`))
	s.failed(t, 404, "SESSION_NOT_FOUND", "POST", "/v1/sessions/none/fork", "application/json", nil)

	// A manual compaction refuses a session whose turn is open.
	s.failed(t, 409, "COMPACTION_TURN_OPEN", "POST", "/v1/sessions/v/compact", "application/json", nil)

	s.ok(t, 204, "POST", "/v1/sessions/v/release", "application/json", nil)
	s.failed(t, 409, "SESSION_NOT_LIVE", "POST", "/v1/sessions/v/release", "application/json", nil)
	s.failed(t, 409, "SESSION_NOT_LIVE", "POST", "/v1/sessions/v/flush", "application/json", nil)
	// Stored, not live: inspect reads it and shows what a resume would add.
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/v/inspect", "", nil).body, &in); err != nil || in.Live || in.Events != 5 || len(in.PendingRepair) == 0 {
		t.Fatalf("inspect after release: %+v (%v)", in, err)
	}
}

// completeTurnLines is turn n as a proper agent loop with no request
// header: started, prompted, one step whose assistant message calls ls,
// the call and its result, the step and the turn closed.
func completeTurnLines(n string) []string {
	call := `"c` + n + `"`
	return []string{
		`{"type":"turn/start","data":{"turn":` + n + `}}`,
		userLine("u"+n, "list the files"),
		`{"type":"step/start","data":{"turn":` + n + `,"step":1}}`,
		`{"type":"assistant/message","surfaceOp":"append","data":{"turn":` + n + `,"step":1,"message":{"id":"a` + n + `","role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"tool-call","id":` + call + `,"name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}}`,
		`{"type":"tool/call","data":{"turn":` + n + `,"step":1,"callId":` + call + `,"name":"ls","arguments":"{}"}}`,
		`{"type":"tool/result","surfaceOp":"append","data":{"turn":` + n + `,"step":1,"message":{"id":"r` + n + `","role":"tool","toolCallId":` + call + `,"content":[{"type":"text","text":"a.go"}],"source":{"kind":"tool","callId":` + call + `}}}}`,
		`{"type":"step/end","data":{"turn":` + n + `,"step":1}}`,
		`{"type":"turn/end","data":{"turn":` + n + `,"reason":{"kind":"completed"}}}`,
	}
}

// A provider request of a session with no request/header as of the asked
// seq is 409 REQUEST_HEADER_MISSING naming the format and the seq, not a
// payload error; logbook's request shows the header as null, and
// messages?format= renders every format whether the log has a header or
// not: empty, header-less, and before the header of a session that has one.
func TestV1RequestWithoutAHeaderIsRequestHeaderMissing(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"h"}`))
	allMessages := func(at string) {
		t.Helper()
		for _, f := range []string{"logbook", "openai", "anthropic", "openai-responses", "markdown"} {
			s.ok(t, 200, "GET", "/v1/sessions/h/messages?format="+f+at, "", nil)
		}
	}
	missing := func(path, format, at string) {
		t.Helper()
		s.failed(t, 409, "REQUEST_HEADER_MISSING", "GET", path, "", nil)
		var p struct {
			Meta map[string]string `json:"meta"`
		}
		if err := json.Unmarshal(s.do(t, "GET", path, "", nil).body, &p); err != nil || p.Meta["format"] != format || p.Meta["at"] != at {
			t.Errorf("%s: meta %v (%v), want format %s at %q", path, p.Meta, err, format, at)
		}
	}
	allMessages("")
	missing("/v1/sessions/h/request?format=openai", "openai", "")

	s.ok(t, 200, "POST", "/v1/sessions/h/events", "application/x-ndjson", ndjson(completeTurnLines("1")...))
	allMessages("")
	allMessages("&at=1")
	// At seq 3 the step's call has no result: the provider formats refuse,
	// logbook's own still shows the messages.
	s.ok(t, 200, "GET", "/v1/sessions/h/messages?format=logbook&at=3", "", nil)
	s.failed(t, 409, "TOOL_CALLS_PENDING", "GET", "/v1/sessions/h/messages?format=anthropic&at=3", "", nil)
	for _, f := range []string{"openai", "anthropic"} {
		missing("/v1/sessions/h/request?format="+f, f, "7")
	}
	var req struct {
		Header   json.RawMessage   `json:"header"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/h/request", "", nil).body, &req); err != nil || string(req.Header) != "null" || len(req.Messages) != 3 {
		t.Fatalf("request (logbook) of a header-less session: %+v (%v)", req, err)
	}

	// With a header from seq 8 on: the provider body after it, the
	// missing header before it.
	s.ok(t, 200, "POST", "/v1/sessions/h/events", "application/x-ndjson", ndjson(append([]string{
		`{"type":"request/header","data":{"header":{"config":{"provider":"openai","model":"gpt-4.1","maxTokens":100},"tools":[{"name":"ls","parameters":{"type":"object"}}]},"reason":"initial"}}`,
	}, completeTurnLines("2")...)...))
	for _, f := range []string{"openai", "anthropic"} {
		var body struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/h/request?format="+f, "", nil).body, &body); err != nil || body.Model != "gpt-4.1" {
			t.Errorf("request?format=%s with a header: model %q (%v)", f, body.Model, err)
		}
		s.ok(t, 200, "GET", "/v1/sessions/h/request?at=8&format="+f, "", nil)
		missing("/v1/sessions/h/request?at=7&format="+f, f, "7")
	}
	allMessages("")
	allMessages("&at=7")
	if n := s.length(t, "h"); n != 17 {
		t.Fatalf("the session holds %d events, want the 17 appended", n)
	}
}

// A provider rendering of a lenient session whose log holds a tool result
// no call asked for leaves the result out, and the answer says which
// message it was in (Logbook-Omitted: its seq); logbook's own format keeps
// everything and says nothing.
func TestV1ProviderRenderingNamesWhatItLeftOut(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"o","protocol":"lenient"}`))
	s.ok(t, 200, "POST", "/v1/sessions/o/events", "application/x-ndjson", ndjson(
		`{"type":"request/header","data":{"header":{"config":{"provider":"openai","model":"gpt-4.1"}},"reason":"initial"}}`,
		`{"type":"user/message","surfaceOp":"append","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}}}`,
		`{"type":"tool/result","surfaceOp":"append","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"zz","content":[{"type":"text","text":"out"}],"source":{"kind":"tool","callId":"zz"}}}}`,
	))
	for _, path := range []string{"/v1/sessions/o/messages?format=openai", "/v1/sessions/o/request?format=anthropic", "/v1/sessions/o/messages?format=openai-responses"} {
		r := s.ok(t, 200, "GET", path, "", nil)
		if got := r.header.Get("Logbook-Omitted"); got != "2" {
			t.Errorf("%s: Logbook-Omitted %q, want 2 (the orphan result's seq)", path, got)
		}
		if strings.Contains(string(r.body), "zz") {
			t.Errorf("%s: the orphan result was sent: %s", path, r.body)
		}
	}
	r := s.ok(t, 200, "GET", "/v1/sessions/o/messages", "", nil)
	if r.header.Get("Logbook-Omitted") != "" || !strings.Contains(string(r.body), `"toolCallId":"zz"`) {
		t.Errorf("logbook format: Logbook-Omitted %q, body %s; want everything and no header", r.header.Get("Logbook-Omitted"), r.body)
	}
}
