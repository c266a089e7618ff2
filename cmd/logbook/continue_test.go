package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// eventTypes returns the types of session id's stored events, in order.
func eventTypes(t *testing.T, data, id string, args ...string) []string {
	t.Helper()
	var types []string
	for _, l := range ok(t, data, "", append([]string{"events", id}, args...)...).lines() {
		var e struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("events line %q: %v", l, err)
		}
		types = append(types, e.Type)
	}
	return types
}

// TestAppendContinueGoesOnWithTheOpenTurn: one turn written by three
// append invocations, the later two with --continue, is stored as one turn
// completed once: no interrupted closers and no lifecycle marker between
// the parts, and each continuing append says so.
func TestAppendContinueGoesOnWithTheOpenTurn(t *testing.T) {
	data := t.TempDir()
	ok(t, data, input(crashLines[:3]), "append", "s")
	r := ok(t, data, input(crashLines[3:]), "append", "s", "--continue")
	if !strings.Contains(r.stderr, `continued session "s"`) || len(r.lines()) != len(crashLines)-3 {
		t.Fatalf("append --continue: stderr %q, %d lines", r.stderr, len(r.lines()))
	}
	ok(t, data, input(finishLines[:3]), "append", "s", "--continue")
	want := []string{"turn/start", "user/message", "step/start", "request/header", "request/context", "assistant/message", "tool/call",
		"tool/result", "step/end", "turn/end"}
	if got := eventTypes(t, data, "s"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stored types:\n got %v\nwant %v", got, want)
	}
	tr := ok(t, data, "", "events", "s").stdout
	if strings.Count(tr, `"interrupted"`) != 0 || strings.Count(tr, `"completed"`) != 1 {
		t.Fatalf("the turn is not completed exactly once:\n%s", tr)
	}
	// Without --continue the open repairs as before, and the harness goes on
	// with a new turn.
	ok(t, data, input(crashLines), "append", "p")
	ok(t, data, input(turnLines(2, "u2", "Again")), "append", "p")
	if tr := ok(t, data, "", "events", "p").stdout; strings.Count(tr, `"interrupted"`) != 1 {
		t.Fatalf("a plain append did not close the interrupted turn:\n%s", tr)
	}
}

// TestAppendContinueAfterATornTailRepairs: when the open cuts a torn tail
// (a JSONL file truncated in the middle of its last line) the previous
// writer crashed, so --continue is ignored: session/recovered, the
// interrupted closers and the marker are written before the new lines (a
// new turn: the repair closed the one the torn line was part of).
func TestAppendContinueAfterATornTailRepairs(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg)
	path := jsonlFile(data, "s")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := strings.LastIndex(strings.TrimSuffix(string(b), "\n"), "\n") + 1
	if err := os.Truncate(path, int64(last+(len(b)-last)/2)); err != nil {
		t.Fatal(err)
	}
	r := ok(t, data, input(turnLines(2, "u2", "Again")), "append", "s", "--continue", "--config", cfg)
	if strings.Contains(r.stderr, "continued") || !strings.Contains(r.stderr, "torn bytes from seq 6") {
		t.Fatalf("append --continue after a torn tail: stderr %q", r.stderr)
	}
	got := strings.Join(eventTypes(t, data, "s", "--config", cfg), " ")
	want := "turn/start user/message step/start request/header request/context assistant/message " +
		"session/recovered tool/result step/end turn/end session/end-seed turn/start user/message turn/end"
	if got != want {
		t.Fatalf("stored types:\n got %s\nwant %s", got, want)
	}
}
