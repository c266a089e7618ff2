package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// v1 sends a /v1 request with a JSON body ("" for none) and returns the
// status and body.
func v1(t *testing.T, r *running, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	code, _, out := do(t, req)
	return code, out
}

// Over /v1, one live session past max_live_sessions is refused with 503
// TOO_MANY_LIVE_SESSIONS naming the cap, and nothing is created; a release
// makes room for it.
func TestV1RefusesASessionPastTheCap(t *testing.T) {
	cfg := headless(t.TempDir())
	cfg.MaxLiveSessions = 2
	r := serve(t, startEngine(t, cfg), server.Options{})
	for _, id := range []string{"a", "b"} {
		if code, body := v1(t, r, http.MethodPost, "/v1/sessions", `{"id":"`+id+`"}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, code, body)
		}
	}
	code, body := v1(t, r, http.MethodPost, "/v1/sessions", `{"id":"c"}`)
	var p struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%d %s: %v", code, body, err)
	}
	if code != http.StatusServiceUnavailable || p.Code != "TOO_MANY_LIVE_SESSIONS" || !strings.Contains(p.Detail, "max_live_sessions = 2") {
		t.Fatalf("create past the cap: %d %s", code, body)
	}
	if code, body := v1(t, r, http.MethodGet, "/v1/sessions/c", ""); code != http.StatusNotFound {
		t.Fatalf("the refused session: %d %s", code, body)
	}
	if code, body := v1(t, r, http.MethodPost, "/v1/sessions/a/release", ""); code != http.StatusNoContent {
		t.Fatalf("release a: %d %s", code, body)
	}
	if code, body := v1(t, r, http.MethodPost, "/v1/sessions", `{"id":"c"}`); code != http.StatusCreated {
		t.Fatalf("create after a release: %d %s", code, body)
	}
}
