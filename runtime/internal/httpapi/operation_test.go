package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// operationProblem is the problem of a refused operation.
type operationProblem struct {
	problem
	Meta map[string]string `json:"meta"`
}

// An operation id on every append route, the "-" forms included: the
// first append answers its envelopes, a retry replays them byte for byte
// with Logbook-Replay: true, other events under the id are 409
// OPERATION_CONFLICT naming the original, and the log holds the
// operation once.
func TestOperationIDRoutes(t *testing.T) {
	s := startServe(t)
	for i, route := range []string{
		"/v1/sessions/op-a/events?operationId=",
		"/v1/sessions/op-b/events/group?operationId=",
		"/v1/sessions/-/events?id=op-c&operationId=",
		"/v1/sessions/-/events/group?id=op-d&operationId=",
	} {
		id := []string{"op-a", "op-b", "op-c", "op-d"}[i]
		s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"`+id+`"}`))
		s.ok(t, 200, "POST", "/v1/sessions/"+id+"/events", "application/x-ndjson", ndjson(turnLine(1)))
		path := route + "turn%201%20prompt" // the id "turn 1 prompt"
		body := ndjson(userLine("u1", "hi"), `{"type":"step/start","data":{"turn":1,"step":1}}`)
		first := s.ok(t, 200, "POST", path, "application/x-ndjson", body)
		if got := first.header.Get("Logbook-Replay"); got != "" || len(lines(first.body)) != 2 {
			t.Fatalf("%s: first append: Logbook-Replay %q, body %s", route, got, first.body)
		}
		again := s.ok(t, 200, "POST", path, "application/x-ndjson", body)
		if again.header.Get("Logbook-Replay") != "true" || !bytes.Equal(again.body, first.body) {
			t.Fatalf("%s: the retry: Logbook-Replay %q, body %s; want a replay of %s", route, again.header.Get("Logbook-Replay"), again.body, first.body)
		}
		r := s.do(t, "POST", path, "application/x-ndjson", ndjson(userLine("u1", "other")))
		var p operationProblem
		if err := json.Unmarshal(r.body, &p); err != nil || r.status != 409 || p.Code != "OPERATION_CONFLICT" {
			t.Fatalf("%s: other events under the id: %d %s", route, r.status, r.body)
		}
		if p.FirstSeq == nil || *p.FirstSeq != 1 || p.Appended == nil || *p.Appended != 0 ||
			p.Meta["operationId"] != "turn 1 prompt" || p.Meta["count"] != "2" {
			t.Fatalf("%s: the conflict's problem: %s", route, r.body)
		}
		if n := s.length(t, id); n != 3 {
			t.Fatalf("%s: the log holds %d events, want 3", route, n)
		}
	}
}

// A malformed operationId is 400 OPERATION_ID_INVALID, found before the
// body is read (a body that is not NDJSON at all is not what the problem
// names), and appends nothing; a present but empty one is malformed too.
func TestOperationIDInvalid(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"bad-ids"}`))
	long := strings.Repeat("x", 129)
	for _, q := range []string{"", "caf%C3%A9", "a%09b", long} {
		for _, sub := range []string{"/events", "/events/group"} {
			p := s.failed(t, 400, "OPERATION_ID_INVALID", "POST", "/v1/sessions/bad-ids"+sub+"?operationId="+q, "application/x-ndjson", []byte("not json\n"))
			if p.Appended == nil || *p.Appended != 0 {
				t.Fatalf("operationId=%q on %s: appended %v, want 0", q, sub, p.Appended)
			}
		}
	}
	if n := s.length(t, "bad-ids"); n != 0 {
		t.Fatalf("the log holds %d events, want none", n)
	}
	// The longest id there may be is accepted.
	s.ok(t, 200, "POST", "/v1/sessions/bad-ids/events?operationId="+long[:128], "application/x-ndjson", ndjson(turnLine(1)))
}

// With an operation id, POST …/events is one atomic group: a rejected
// line appends none of the lines before it, and the id stays free.
func TestOperationIDAllOrNothing(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"atomic"}`))
	p := s.failed(t, 409, "TURN_ALREADY_OPEN", "POST", "/v1/sessions/atomic/events?operationId=t1", "application/x-ndjson",
		ndjson(turnLine(1), userLine("u1", "hi"), turnLine(2)))
	if p.Appended == nil || *p.Appended != 0 || p.Line == nil || *p.Line != 3 || p.Index == nil || *p.Index != 2 {
		t.Fatalf("the refused operation's problem: %+v", p)
	}
	if n := s.length(t, "atomic"); n != 0 {
		t.Fatalf("the log holds %d events, want none", n)
	}
	r := s.ok(t, 200, "POST", "/v1/sessions/atomic/events?operationId=t1", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "hi")))
	if r.header.Get("Logbook-Replay") != "" || len(lines(r.body)) != 2 {
		t.Fatalf("the corrected operation: %s", r.body)
	}
}

// Create keeps its labels in the stored header, which every read of the
// header shows; labels the rules refuse are 400 USAGE and create nothing.
func TestCreateLabels(t *testing.T) {
	s := startServe(t)
	body := `{"id":"lab","labels":{"framework":"claude-agent-sdk","key":"project/abc"}}`
	h := s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(body)).body
	want := `"labels":{"framework":"claude-agent-sdk","key":"project/abc"}`
	if !bytes.Contains(h, []byte(want)) {
		t.Fatalf("the stored header %s does not hold %s", h, want)
	}
	if got := s.ok(t, 200, "GET", "/v1/sessions/lab", "", nil).body; !bytes.Contains(got, []byte(want)) {
		t.Fatalf("GET /v1/sessions/lab: %s", got)
	}
	for _, bad := range []string{`{"Key":"v"}`, `{"k":1}`, `{"k":"a\u0001b"}`} {
		s.failed(t, 400, "USAGE", "POST", "/v1/sessions", "application/json", []byte(`{"id":"lab2","labels":`+bad+`}`))
	}
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/lab2", "", nil)
}
