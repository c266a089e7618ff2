package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logbook demo runs offline in well under 10 seconds through real plugin
// subprocesses, kills its crash worker, repairs, compacts and forks, and
// leaves a store the printed commands can read.
func TestDemo(t *testing.T) {
	t.Parallel() // its own data directories
	dir := filepath.Join(t.TempDir(), "demo")
	start := time.Now()
	r := runIn(t, t.TempDir(), "", "demo", "--data", dir)
	if r.code != 0 {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("demo took %v, want < 10 s", d)
	}
	for _, want := range []string{
		"got SIGKILL",
		"a resume would append 3 closers",
		"tool/result        TOOL_OUTCOME_UNKNOWN",
		"session/end-seed",
		"<conversation-summary>",
		"surface after compaction (3 nodes",
		"demo-fork: parent demo, 19 inherited events",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q\n%s", want, r.stdout)
		}
	}
	cfg := filepath.Join(dir, "demo.hcl")
	events := runIn(t, dir, "", "--config", cfg, "events", "demo")
	if events.code != 0 {
		t.Fatalf("events: %s", events.stderr)
	}
	for _, typ := range []string{`"type":"compaction/summary"`, `"type":"compaction/end"`, `"TOOL_OUTCOME_UNKNOWN"`, `"reason":"resume"`} {
		if !strings.Contains(events.stdout, typ) {
			t.Errorf("the stored log lacks %s", typ)
		}
	}
	sessions := runIn(t, dir, "", "--config", cfg, "sessions")
	if !strings.Contains(sessions.stdout, "demo-fork") {
		t.Errorf("sessions: %s", sessions.stdout)
	}
	// Every logbook command the demo prints at its end runs.
	_, tail, _ := strings.Cut(r.stdout, "Look at what was stored:\n")
	printed := 0
	for _, line := range strings.Split(tail, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != "--config" {
			continue
		}
		printed++
		if c := runIn(t, dir, "", f[1:]...); c.code != 0 || c.stdout == "" {
			t.Errorf("the printed %q: exit %d, stdout %q, stderr %q", line, c.code, c.stdout, c.stderr)
		}
	}
	if printed < 8 {
		t.Errorf("the demo printed %d logbook commands, want 8:\n%s", printed, tail)
	}
	// A second run refuses a directory that is not empty.
	again := runIn(t, t.TempDir(), "", "demo", "--data", dir)
	if again.code != 2 || !strings.HasPrefix(again.lastLine(), "logbook: USAGE: ") {
		t.Errorf("demo into a used directory: exit %d, %q", again.code, again.lastLine())
	}
}
