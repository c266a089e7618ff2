package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// ids returns the ids GET /v1/sessions lists.
func (s *server) ids(t testing.TB) []string {
	t.Helper()
	var d struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions", "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range d.Sessions {
		out = append(out, e.ID)
	}
	return out
}

// Every state-changing route requires its media type, with a body or
// without: the three types a page may send without a preflight, and none
// at all, are 415 UNSUPPORTED_MEDIA_TYPE, and nothing changes (no session
// created, forked or resumed, no hold placed or lifted, nothing flushed
// or released).
func TestV1WritesRequireTheirMediaType(t *testing.T) {
	s := startServe(t)
	for _, id := range []string{"stored", "live", "held"} {
		s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"`+id+`"}`))
	}
	s.ok(t, 200, "POST", "/v1/sessions/stored/events", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "hi")))
	for _, id := range []string{"stored", "held"} {
		s.ok(t, 204, "POST", "/v1/sessions/"+id+"/release", "application/json", nil)
	}
	s.ok(t, 200, "POST", "/v1/sessions/held/hold", "application/json", nil)
	storedLen := s.length(t, "stored")

	routes := []struct{ path, want, body string }{
		{"/v1/sessions", "application/json", `{"id":"new"}`},
		{"/v1/sessions/stored/events", "application/x-ndjson", userLine("u2", "x") + "\n"},
		{"/v1/sessions/stored/events/group", "application/x-ndjson", userLine("u2", "x") + "\n"},
		{"/v1/sessions/stored/open", "application/json", `{}`},
		{"/v1/sessions/stored/fork", "application/json", `{"as":"child"}`},
		{"/v1/sessions/live/flush", "application/json", `{}`},
		{"/v1/sessions/stored/compact", "application/json", `{}`},
		{"/v1/sessions/live/release", "application/json", `{}`},
		{"/v1/sessions/stored/hold", "application/json", `{"reason":"r"}`},
		{"/v1/sessions/held/release-hold", "application/json", `{"reason":"r"}`},
	}
	for _, rt := range routes {
		types := []string{"", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain; charset=utf-8"}
		if rt.want == "application/x-ndjson" {
			types = append(types, "application/json")
		} else {
			types = append(types, "application/x-ndjson")
		}
		for _, ct := range types {
			for _, body := range []string{"", rt.body} {
				p := s.failed(t, 415, "UNSUPPORTED_MEDIA_TYPE", "POST", rt.path, ct, []byte(body))
				if !strings.Contains(p.Detail, rt.want) {
					t.Errorf("POST %s as %q: %q does not name %s", rt.path, ct, p.Detail, rt.want)
				}
			}
		}
	}
	// Connect's JSON takes application/json only, too.
	for _, ct := range []string{"", "text/plain"} {
		if r := s.do(t, "POST", "/logbook.v1.Sessions/Create", ct, []byte(`{"sessionId":"rpc"}`)); r.status != http.StatusUnsupportedMediaType {
			t.Errorf("Connect Create as %q: %d %s", ct, r.status, r.body)
		}
	}

	if got := s.ids(t); !slices.Equal(got, []string{"held", "live", "stored"}) {
		t.Errorf("sessions after the refused writes: %v", got)
	}
	if s.live(t, "stored") || !s.live(t, "live") || s.live(t, "held") {
		t.Errorf("live after the refused writes: stored %v, live %v, held %v; want false, true, false", s.live(t, "stored"), s.live(t, "live"), s.live(t, "held"))
	}
	if n := s.length(t, "stored"); n != storedLen {
		t.Errorf("stored has %d events, had %d", n, storedLen)
	}
	if r := s.ok(t, 200, "POST", "/v1/sessions/stored/hold", "application/json", nil); !strings.Contains(string(r.body), `"changed":true`) {
		t.Errorf("stored was held by a refused request: %s", r.body)
	}
	if r := s.ok(t, 200, "POST", "/v1/sessions/held/release-hold", "application/json", nil); !strings.Contains(string(r.body), `"changed":true`) {
		t.Errorf("held lost its hold to a refused request: %s", r.body)
	}
}

// A failed write leaves the session as it was: a compaction or an append
// that fails on a session that was not live leaves it not live (the
// resume it needed is undone), on /v1 and on Connect; on a live session
// it stays live; the other writes that fail (flush, release, fork, hold)
// never make it live.
func TestV1FailedWriteLeavesSessionAsItWas(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"c"}`))
	s.ok(t, 200, "POST", "/v1/sessions/c/events", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "hi"), turnEndLine(1)))
	s.ok(t, 204, "POST", "/v1/sessions/c/release", "application/json", nil)
	stored := s.length(t, "c")

	failing := []struct {
		name, path, ctype, body string
	}{
		{"compact", "/v1/sessions/c/compact", "application/json", `{}`},
		{"compact of a region", "/v1/sessions/c/compact", "application/json", `{"startSeq":0,"endSeq":0}`},
		{"append of a bad first line", "/v1/sessions/c/events", "application/x-ndjson", `{"type":"user/message","surfaceOp":"append","data":{"id":"u"}}` + "\n"},
		{"append at a wrong length", "/v1/sessions/c/events?expectedSeq=99", "application/x-ndjson", userLine("u2", "x") + "\n"},
		{"Connect compact", "/logbook.v1.Sessions/Compact", "application/json", `{"sessionId":"c"}`},
		{"Connect append", "/logbook.v1.Sessions/Append", "application/json", `{"sessionId":"c","events":[{"type":"user/message","surfaceOp":{},"data":"{\"id\":\"u\"}"}]}`},
		{"Connect append group", "/logbook.v1.Sessions/AppendGroup", "application/json", `{"sessionId":"c","events":[{"type":"user/message","surfaceOp":{},"data":"{\"id\":\"u\"}"}]}`},
		{"flush", "/v1/sessions/c/flush", "application/json", ``},
		{"release", "/v1/sessions/c/release", "application/json", ``},
		{"fork past the end", "/v1/sessions/c/fork", "application/json", `{"at":99,"as":"c2"}`},
		{"fork onto itself", "/v1/sessions/c/fork", "application/json", `{"as":"c"}`},
	}
	for _, f := range failing {
		r := s.do(t, "POST", f.path, f.ctype, []byte(f.body))
		if r.status < 400 {
			t.Fatalf("%s: %d %s; want a failure", f.name, r.status, r.body)
		}
		if s.live(t, "c") {
			t.Errorf("%s failed (%d %s) and left c live", f.name, r.status, r.body)
			s.ok(t, 204, "POST", "/v1/sessions/c/release", "application/json", nil)
		}
	}
	// What a resume writes (its lifecycle marker) and a failed
	// compaction's record of itself may stay; no event of the failed
	// appends does.
	for _, line := range lines(s.ok(t, 200, "GET", fmt.Sprintf("/v1/sessions/c/events?from=%d", stored), "", nil).body) {
		var e struct{ Type string }
		if err := json.Unmarshal(line, &e); err != nil || e.Type != "session/end-seed" && !strings.HasPrefix(e.Type, "compaction/") {
			t.Errorf("a failed request appended %s", line)
		}
	}
	if got := s.ids(t); !slices.Equal(got, []string{"c"}) {
		t.Errorf("sessions: %v", got)
	}

	// On a live session a failed compaction leaves it live.
	s.ok(t, 200, "POST", "/v1/sessions/c/events", "application/x-ndjson", ndjson(turnLine(2), userLine("u3", "again")))
	s.do(t, "POST", "/v1/sessions/c/compact", "application/json", []byte(`{}`))
	if !s.live(t, "c") {
		t.Error("a failed compaction released a session that was live")
	}
}
