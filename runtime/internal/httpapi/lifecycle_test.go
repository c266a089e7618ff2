package httpapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// holdResult is the answer of the hold routes.
type holdResult struct {
	Changed bool `json:"changed"`
	Record  *struct {
		Op      string `json:"op"`
		Session string `json:"session"`
		Events  int64  `json:"events"`
		Digest  string `json:"digest"`
		Reason  string `json:"reason"`
		By      string `json:"by"`
	} `json:"record"`
}

// DELETE, hold and release-hold against a real `logbook serve`: a live
// session and a held one are refused (409) with the log unchanged, and
// the CLI cannot delete a session the server writes either.
func TestV1DeleteAndHolds(t *testing.T) {
	dir := t.TempDir()
	s := startServeIn(t, dir)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"d"}`))
	s.ok(t, 200, "POST", "/v1/sessions/d/events?flush=true", "application/x-ndjson", openTurnLines())
	before := s.length(t, "d")

	s.failed(t, 409, "ALREADY_OWNED", "DELETE", "/v1/sessions/d", "", nil)
	cmd := exec.Command(logbookBin, "--data", dir, "delete", "d")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "ALREADY_OWNED") {
		t.Fatalf("logbook delete of a session the server writes: %v, %s; want ALREADY_OWNED", err, stderr.String())
	}
	if n := s.length(t, "d"); n != before {
		t.Fatalf("the log holds %d events after the refused deletes; want %d", n, before)
	}
	if _, err := os.Stat(filepath.Join(dir, ".audit.jsonl")); err == nil {
		if b, _ := os.ReadFile(filepath.Join(dir, ".audit.jsonl")); len(b) > 0 {
			t.Fatalf("a refused delete wrote an audit record: %s", b)
		}
	}
	s.ok(t, 204, "POST", "/v1/sessions/d/release", "application/json", nil)

	var h holdResult
	if err := json.Unmarshal(s.ok(t, 200, "POST", "/v1/sessions/d/hold", "application/json", []byte(`{"reason":"LEGAL-1"}`)).body, &h); err != nil ||
		!h.Changed || h.Record == nil || h.Record.Op != "hold" || h.Record.By != "api" || h.Record.Reason != "LEGAL-1" || h.Record.Events != before {
		t.Fatalf("hold: %+v, %v", h, err)
	}
	var again holdResult
	if err := json.Unmarshal(s.ok(t, 200, "POST", "/v1/sessions/d/hold", "application/json", nil).body, &again); err != nil || again.Changed || again.Record != nil {
		t.Fatalf("hold again: %+v, %v; want no change", again, err)
	}
	s.failed(t, 409, "SESSION_HELD", "DELETE", "/v1/sessions/d", "", nil)
	if n := s.length(t, "d"); n != before {
		t.Fatalf("the log holds %d events after the refused delete; want %d", n, before)
	}
	s.ok(t, 200, "POST", "/v1/sessions/d/release-hold", "application/json", nil)
	s.ok(t, 204, "DELETE", "/v1/sessions/d?reason=done", "", nil)
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/d", "", nil)
	s.failed(t, 404, "SESSION_NOT_FOUND", "DELETE", "/v1/sessions/d", "", nil)
	s.failed(t, 404, "SESSION_NOT_FOUND", "POST", "/v1/sessions/d/hold", "application/json", nil)

	out, err := exec.Command(logbookBin, "--data", dir, "audit", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(recs) != 3 || !strings.Contains(recs[2], `"op":"delete"`) || !strings.Contains(recs[2], `"reason":"done","by":"api"`) {
		t.Fatalf("audit: %s; want hold, release-hold, delete by api", out)
	}
	// The id can be created again.
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"d"}`))
}
