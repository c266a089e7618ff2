package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestResumeRepairsDurably(t *testing.T) {
	data := t.TempDir()
	crashed(t, data, "s")
	pending := ok(t, data, "", "inspect", "s", "--json").stdout
	r := ok(t, data, "", "resume", "s")
	golden(t, "resume", normalize(r.stdout, data))
	if !strings.Contains(r.stderr, `wrote 4 events (seq 7–10): 3 closers`) {
		t.Errorf("stderr %q", r.stderr)
	}
	// What inspect predicted is what resume wrote (plus the marker).
	var rep inspectReport
	if err := json.Unmarshal([]byte(pending), &rep); err != nil {
		t.Fatal(err)
	}
	for i, env := range rep.PendingRepair {
		if r.lines()[i] != string(env) {
			t.Errorf("resume wrote %s, inspect predicted %s", r.lines()[i], env)
		}
	}
	// Stored: the next resume has nothing to write.
	if n := len(ok(t, data, "", "events", "s").lines()); n != 11 {
		t.Fatalf("%d events stored after resume", n)
	}
	r = ok(t, data, "", "resume", "s")
	if r.stdout != "" || !strings.Contains(r.stderr, "nothing to repair") {
		t.Fatalf("second resume: stdout %q stderr %q", r.stdout, r.stderr)
	}
	if !strings.Contains(ok(t, data, "", "inspect", "s", "--json").stdout, `"openTurn":null,"pendingRepair":[]`) {
		t.Fatal("inspect after resume still shows a pending repair")
	}
}

// uuidv7RE matches a lowercase UUIDv7, the ids the store generates.
var uuidv7RE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestFork(t *testing.T) {
	data := t.TempDir()
	crashed(t, data, "s")
	// At an open cut (the tool call requested, not started): the child
	// gets the prefix, the inherited marker and forked closers.
	r := ok(t, data, "", "fork", "s", "--as", "child", "--at", "5")
	var h map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	if h["id"] != "child" || h["isSeeded"] != true || h["inheritedEventCount"] != 6.0 || h["parentSession"] != "s" || h["type"] != "session" {
		t.Fatalf("child header %s", r.stdout)
	}
	golden(t, "fork-child-events", normalize(ok(t, data, "", "events", "child").stdout, data))
	golden(t, "fork-child-why-7", ok(t, data, "", "why", "child", "7").stdout)
	// The source is untouched: forking from a stored session reads it.
	if n := len(ok(t, data, "", "events", "s").lines()); n != len(crashLines) {
		t.Fatalf("the source has %d events", n)
	}
	// The default boundary is the source's last event.
	ok(t, data, "", "fork", "s", "--as", "whole")
	if n := len(ok(t, data, "", "events", "whole").lines()); n != len(crashLines)+4 {
		t.Fatalf("the whole fork has %d events", n)
	}
	fail(t, data, "", sdk.CodeInvalidBoundary, "fork", "s", "--as", "late", "--at", "7")
	fail(t, data, "", sdk.CodeSessionAlreadyExists, "fork", "s", "--as", "child")
	fail(t, data, "", sdk.CodeSessionNotFound, "fork", "nope", "--as", "x")
	// Without --as the child's id is generated (a UUIDv7) and printed in
	// its header; stderr names it too.
	r = ok(t, data, "", "fork", "s", "--at", "5")
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil {
		t.Fatal(err)
	}
	gen, _ := h["id"].(string)
	if !uuidv7RE.MatchString(gen) || h["parentSession"] != "s" || !strings.Contains(r.stderr, `logbook fork: the child is "`+gen+`"`) {
		t.Fatalf("fork without --as: stdout %s stderr %q", r.stdout, r.stderr)
	}
	if got, want := ok(t, data, "", "events", gen).stdout, ok(t, data, "", "events", "child").stdout; normalize(got, data) != normalize(want, data) {
		t.Fatalf("the generated child's events differ from child's:\n%s\nwant\n%s", got, want)
	}
	// An empty source, no boundary: only the inherited marker.
	ok(t, data, "", "create", "empty")
	fail(t, data, "", sdk.CodeInvalidBoundary, "fork", "empty", "--as", "e1", "--at", "0")
	ok(t, data, "", "fork", "empty", "--as", "e2")
	if ev := ok(t, data, "", "events", "e2").stdout; !strings.Contains(ev, `"type":"session/end-seed","data":{"inherited":true}`) {
		t.Fatalf("events of an empty fork: %s", ev)
	}
}
