package httpapi_test

import (
	"bytes"
	"encoding/json"
	"testing"
)

// noteLine is the append input of an ignorable log-only event.
func noteLine(n string) string { return `{"type":"app/note","ignorable":true,"data":` + n + `}` }

// A group append is all or nothing: a rejected member, a malformed line or
// a stale expectedSeq appends none of the group and answers the problem an
// append would, with appended 0, no firstSeq, and the member's line and
// index; an accepted group gets consecutive seqs.
func TestV1AppendGroupIsAllOrNothing(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"g"}`))
	const path = "/v1/sessions/g/events/group"
	cases := []struct {
		name, code  string
		status      int
		path        string
		body        []byte
		line, index int
	}{
		{"a rejected member", "PAYLOAD_INVALID", 422, path, ndjson(noteLine("1"), "", `{"type":"user/message","surfaceOp":"append","data":{"id":"u3"}}`, noteLine("2")), 3, 1},
		{"a second surface member", "SURFACE_OP_NOT_ALLOWED", 422, path, ndjson(turnLine(1), userLine("u1", "one"), userLine("u2", "two")), 3, 2},
		{"a malformed line", "JSON_SYNTAX", 400, path, ndjson(noteLine("1"), noteLine("2"), `{"type":`), 3, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := s.failed(t, c.status, c.code, "POST", c.path, "application/x-ndjson", c.body)
			if p.Appended == nil || *p.Appended != 0 || p.FirstSeq != nil || p.Line == nil || *p.Line != c.line || p.Index == nil || *p.Index != c.index {
				t.Fatalf("problem %+v: want appended 0, no firstSeq, line %d, index %d", p, c.line, c.index)
			}
			if n := s.length(t, "g"); n != 0 {
				t.Fatalf("the log holds %d events after a refused group", n)
			}
		})
	}
	p := s.failed(t, 409, "SEQ_CONFLICT", "POST", path+"?expectedSeq=1", "application/x-ndjson", ndjson(noteLine("1")))
	if p.Appended == nil || *p.Appended != 0 || p.Expected == nil || *p.Expected != 1 || p.Actual == nil || *p.Actual != 0 {
		t.Fatalf("SEQ_CONFLICT problem %+v", p)
	}
	got := lines(s.ok(t, 200, "POST", path+"?expectedSeq=0&flush=true", "application/x-ndjson", ndjson(noteLine("1"), turnLine(1), userLine("u1", "one"), noteLine("2"))).body)
	if len(got) != 4 || !bytes.HasPrefix(got[0], []byte(`{"seq":0,`)) || !bytes.HasPrefix(got[3], []byte(`{"seq":3,`)) {
		t.Fatalf("the group answered %s", got)
	}
	if n := s.length(t, "g"); n != 4 {
		t.Fatalf("the log holds %d events after the group, want 4", n)
	}
	s.failed(t, 415, "UNSUPPORTED_MEDIA_TYPE", "POST", path, "application/json", ndjson(noteLine("1")))
	s.failed(t, 404, "SESSION_NOT_FOUND", "POST", "/v1/sessions/none/events/group", "application/x-ndjson", ndjson(noteLine("1")))
}

// POST /v1/sessions takes every header field a new session may set, as the
// Connect Create does.
func TestV1CreateTakesEveryHeaderField(t *testing.T) {
	s := startServe(t)
	body := s.ok(t, 201, "POST", "/v1/sessions", "application/json",
		[]byte(`{"id":"sub","cwd":"/work","origin":"subagent","delegationDepth":2,"agentPreset":"coder","parentSession":"lead"}`)).body
	var h struct {
		ID, CWD, Origin, AgentPreset, ParentSession string
		DelegationDepth                             int64
	}
	if err := json.Unmarshal(body, &h); err != nil || h.ID != "sub" || h.CWD != "/work" || h.Origin != "subagent" || h.DelegationDepth != 2 ||
		h.AgentPreset != "coder" || h.ParentSession != "lead" {
		t.Fatalf("created header %s (%v)", body, err)
	}
	s.failed(t, 422, "SEED_INVALID", "POST", "/v1/sessions", "application/json", []byte(`{"origin":"robot"}`))
}

// POST …/open resumes a stored session for write and answers what the
// resume repaired: the closers of the interrupted turn that inspect said a
// resume would append; a second open finds it live and repairs nothing.
func TestV1OpenResumesAndReportsTheRepair(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"o"}`))
	s.ok(t, 200, "POST", "/v1/sessions/o/events?flush=true", "application/x-ndjson", openTurnLines())
	s.ok(t, 204, "POST", "/v1/sessions/o/release", "application/json", nil)
	var in struct {
		Events        int64             `json:"events"`
		PendingRepair []json.RawMessage `json:"pendingRepair"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/o/inspect", "", nil).body, &in); err != nil || len(in.PendingRepair) == 0 {
		t.Fatalf("inspect: %+v (%v); want closers pending", in, err)
	}
	type opened struct {
		ID          string            `json:"id"`
		NextSeq     int64             `json:"nextSeq"`
		AlreadyLive bool              `json:"alreadyLive"`
		Repaired    []json.RawMessage `json:"repaired"`
	}
	s.failed(t, 415, "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/sessions/o/open", "", nil)
	var o opened
	if err := json.Unmarshal(s.ok(t, 200, "POST", "/v1/sessions/o/open", "application/json", nil).body, &o); err != nil {
		t.Fatal(err)
	}
	if o.ID != "o" || o.AlreadyLive || len(o.Repaired) != len(in.PendingRepair) || o.NextSeq != in.Events+int64(len(in.PendingRepair))+1 {
		t.Fatalf("open: %+v; want %d repaired and nextSeq %d (the closers and the marker after %d events)",
			o, len(in.PendingRepair), in.Events+int64(len(in.PendingRepair))+1, in.Events)
	}
	for i, e := range o.Repaired {
		var got, want struct{ Type string }
		_ = json.Unmarshal(e, &got)
		_ = json.Unmarshal(in.PendingRepair[i], &want)
		if got.Type != want.Type {
			t.Errorf("repaired[%d] is %s; inspect said %s", i, got.Type, want.Type)
		}
	}
	if !s.live(t, "o") {
		t.Fatal("the opened session is not live")
	}
	var again opened
	if err := json.Unmarshal(s.ok(t, 200, "POST", "/v1/sessions/o/open", "application/json", nil).body, &again); err != nil ||
		!again.AlreadyLive || len(again.Repaired) != 0 || again.NextSeq != o.NextSeq {
		t.Fatalf("a second open: %+v (%v); want already live, nothing repaired", again, err)
	}
	s.failed(t, 404, "SESSION_NOT_FOUND", "POST", "/v1/sessions/none/open", "application/json", nil)
}
