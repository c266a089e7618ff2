package main

import (
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// `append --operation-id`: the whole input is one operation. A second run
// with the same id and lines prints the same envelopes and "replayed" on
// stderr, appending nothing; other lines under the id are
// OPERATION_CONFLICT; a rejected line appends none of the lines before
// it; a malformed id is refused before anything is opened or created.
func TestAppendOperationID(t *testing.T) {
	data := t.TempDir()
	turn := input(turnLines(1, "u1", "hi"))
	first := ok(t, data, turn, "append", "s", "--operation-id", "turn 1")
	if n := len(first.lines()); n != 3 || strings.Contains(first.stderr, "replayed") {
		t.Fatalf("first run: %d envelopes, stderr %q", n, first.stderr)
	}
	again := ok(t, data, turn, "append", "s", "--operation-id", "turn 1", "--continue")
	if again.stdout != first.stdout || !strings.Contains(again.stderr, `replayed operation "turn 1"`) {
		t.Fatalf("the retry printed\n%s\nstderr %q; want the original envelopes\n%s", again.stdout, again.stderr, first.stdout)
	}
	r := fail(t, data, input(turnLines(1, "u1", "other")), sdk.CodeOperationConflict, "append", "s", "--operation-id", "turn 1", "--continue")
	if !strings.Contains(r.lastLine(), "turn 1") {
		t.Errorf("the conflict does not name the id: %q", r.lastLine())
	}

	bad := input(turnLines(2, "u2", "two")[:2], []string{`{"type":"turn/start","data":{"turn":3}}`})
	r = fail(t, data, bad, sdk.CodeTurnAlreadyOpen, "append", "s", "--operation-id", "turn 2", "--continue")
	if !strings.Contains(r.lastLine(), "line 3") {
		t.Errorf("the rejected line is not named: %q", r.lastLine())
	}
	if n := len(ok(t, data, "", "events", "s").lines()); n != 3 {
		t.Fatalf("the log holds %d events, want 3", n)
	}

	for _, id := range []string{"", "caf\u00e9", strings.Repeat("x", 129)} {
		fail(t, data, turn, sdk.CodeOperationIDInvalid, "append", "fresh", "--operation-id", id)
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "fresh")
}

// `create --label KEY=VALUE`, repeatable: the labels are in the stored
// header; a flag without "=", a key given twice and a label the rules
// refuse are USAGE, and nothing is created.
func TestCreateLabels(t *testing.T) {
	data := t.TempDir()
	r := ok(t, data, "", "create", "s", "--label", "framework=langgraph", "--label", "key=thread=7")
	if want := `"labels":{"framework":"langgraph","key":"thread=7"}`; !strings.Contains(r.stdout, want) {
		t.Fatalf("the header %s does not hold %s", r.stdout, want)
	}
	if h := ok(t, data, "", "sessions", "--json").stdout; !strings.Contains(h, `"labels":{"framework":"langgraph","key":"thread=7"}`) {
		t.Fatalf("the listing %s does not show the labels", h)
	}
	for _, args := range [][]string{
		{"--label", "framework"},
		{"--label", "k=1", "--label", "k=2"},
		{"--label", "Upper=x"},
		{"--label", "k=a\x01b"},
	} {
		fail(t, data, "", sdk.CodeUsage, append([]string{"create", "t"}, args...)...)
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "t")
}
