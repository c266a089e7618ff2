package httpapi_test

import (
	"bytes"
	"strings"
	"testing"
)

// POST /v1/sessions with "protocol": "lenient" stores a lenient header,
// which create, the session's description and a fork child all show;
// "strict" is the default, stored as no member; any other value is 400
// USAGE naming the allowed values, and nothing is created.
func TestV1CreateProtocol(t *testing.T) {
	s := startServe(t)
	created := s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"l1","protocol":"lenient"}`))
	if !bytes.Contains(created.body, []byte(`"protocol":"lenient"`)) {
		t.Fatalf("create answered %s; want the lenient header", created.body)
	}
	if got := s.ok(t, 200, "GET", "/v1/sessions/l1", "", nil); !bytes.Contains(got.body, []byte(`"protocol":"lenient"`)) {
		t.Fatalf("GET /v1/sessions/l1 answered %s; want the lenient header", got.body)
	}
	s.ok(t, 200, "POST", "/v1/sessions/l1/events?flush=true", "application/x-ndjson", []byte(`{"type":"app/note","ignorable":true,"data":1}`+"\n"))
	child := s.ok(t, 201, "POST", "/v1/sessions/l1/fork", "application/json", []byte(`{"as":"l1-child"}`))
	if !bytes.Contains(child.body, []byte(`"protocol":"lenient"`)) {
		t.Fatalf("fork answered %s; want the child lenient too", child.body)
	}

	strict := s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"s1","protocol":"strict"}`))
	if bytes.Contains(strict.body, []byte(`"protocol"`)) {
		t.Fatalf("create of a strict session answered %s; want no protocol member", strict.body)
	}
	for _, bad := range []string{`"loose"`, `"LENIENT"`} {
		body := []byte(`{"id":"bad","protocol":` + bad + `}`)
		p := s.failed(t, 400, "USAGE", "POST", "/v1/sessions", "application/json", body)
		if !strings.Contains(p.Detail, `"strict"`) || !strings.Contains(p.Detail, `"lenient"`) {
			t.Errorf("protocol %s: detail %q does not name the allowed values", bad, p.Detail)
		}
		s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/bad", "", nil)
	}
}
