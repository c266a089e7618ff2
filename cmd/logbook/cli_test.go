package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func TestUsageErrorsExitTwo(t *testing.T) {
	data := t.TempDir()
	for name, args := range map[string][]string{
		"no command":          {},
		"unknown command":     {"bogus"},
		"unknown flag":        {"events", "s", "--nope"},
		"missing argument":    {"events"},
		"extra argument":      {"events", "a", "b"},
		"bad --at":            {"messages", "s", "--at", "x"},
		"negative --at":       {"surface", "s", "--at", "-1"},
		"bad --from":          {"events", "s", "--from", "1.5"},
		"unknown --format":    {"messages", "s", "--format", "gemini"},
		"markdown request":    {"request", "s", "--at", "0", "--format", "markdown"},
		"missing --to":        {"migrate"},
		"--to names no block": {"migrate", "--to", "nope"},
		"--to the primary":    {"migrate", "--to", "jsonl"},
		"bad --log-level":     {"--log-level", "loud", "sessions"},
		"bad why SEQ":         {"why", "s", "x"},
		"bad --json value":    {"sessions", "--json=maybe"},
	} {
		t.Run(name, func(t *testing.T) {
			fail(t, data, "", sdk.CodeUsage, args...)
		})
	}
}

func TestPluginModeRefusesUnknownPlugin(t *testing.T) {
	r := runIn(t, t.TempDir(), "", "plugin", "nope")
	if r.code != 2 || !strings.HasPrefix(r.lastLine(), "logbook: USAGE: no bundled plugin \"nope\"") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestGlobalFlagsBeforeOrAfterCommand(t *testing.T) {
	data := t.TempDir()
	ok(t, data, "", "create", "s")
	before := runIn(t, data, "", "--data", data, "--json", "sessions")
	after := runIn(t, data, "", "sessions", "--json", "--data", data)
	if before.code != 0 || after.code != 0 || before.stdout != after.stdout || !strings.Contains(before.stdout, `"id":"s"`) {
		t.Fatalf("before: %+v\nafter: %+v", before, after)
	}
}

func TestCreate(t *testing.T) {
	data := t.TempDir()
	r := ok(t, data, "", "create", "s1", "--cwd", ".")
	golden(t, "create", normalize(r.stdout, data))
	var h map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &h); err != nil || h["cwd"] != data {
		t.Fatalf("header %s: cwd must be the absolute data dir %s (%v)", r.stdout, data, err)
	}
	// Created and materialized: the session is stored, with no events.
	if ev := ok(t, data, "", "events", "s1"); ev.stdout != "" {
		t.Fatalf("events of a new session: %q", ev.stdout)
	}
	fail(t, data, "", sdk.CodeSessionAlreadyExists, "create", "s1")
	fail(t, data, "", sdk.CodeInvalidSessionID, "create", strings.Repeat("x", 81))
}

func TestSessions(t *testing.T) {
	data := t.TempDir()
	if r := ok(t, data, "", "sessions", "--json"); r.stdout != "[]\n" {
		t.Fatalf("no sessions: %q", r.stdout)
	}
	finished(t, data, "a")
	ok(t, data, "", "fork", "a", "--as", "b", "--at", "5")
	r := ok(t, data, "", "sessions")
	golden(t, "sessions", normalize(r.stdout, data))
	r = ok(t, data, "", "sessions", "--json")
	golden(t, "sessions.json", normalize(r.stdout, data))
	// --limit keeps the most recently active: the fork, written after a.
	if r = ok(t, data, "", "sessions", "--limit", "1", "--json"); !strings.HasPrefix(r.stdout, `[{"id":"b",`) || strings.Count(r.stdout, `"id"`) != 1 {
		t.Errorf("sessions --limit 1: %s", r.stdout)
	}
	fail(t, data, "", sdk.CodeUsage, "sessions", "--limit", "0")

	// A session that cannot be read is listed with its error; the list
	// itself succeeds.
	if err := os.WriteFile(filepath.Join(data, "a", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = ok(t, data, "", "sessions", "--json")
	var entries []sessionEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatal(err)
	}
	// Its last write is unknown: it comes last.
	if len(entries) != 2 || entries[1].ID != "a" || entries[1].Error == "" || entries[1].Events != nil || entries[1].LastActivity != nil {
		t.Fatalf("entries %s", r.stdout)
	}
	fail(t, data, "", sdk.CodeCorruptLog, "events", "a")
}

func TestPlugins(t *testing.T) {
	data := t.TempDir()
	r := ok(t, data, "", "plugins")
	lines := r.lines()
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("table:\n%s", r.stdout)
	}
	for i, want := range []string{"jsonl persistence dev 1", "compactor-summary summarizer dev 1", "pruner pruner dev 1"} {
		f := strings.Fields(lines[i+1])
		if got := strings.Join(f[:4], " "); got != want || len(f[4]) != 64 || f[5] != "yes" {
			t.Errorf("row %d: %q, want %q, a sha256 and running", i, lines[i+1], want)
		}
	}

	// A plugin that cannot start is listed as not running; why goes to
	// stderr.
	cfg := writeConfig(t, data, "ghost.hcl", `
persistence "jsonl" {}
plugin "ghost" {
  command = "/nonexistent/logbook-ghost"
}
`)
	r = lb(t, data, "", "plugins", "--json", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rows []service.PluginStatus
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Name != "ghost" || rows[1].Running || rows[1].Error == "" || !strings.Contains(r.stderr, "ghost does not start") {
		t.Fatalf("rows %s\nstderr %s", r.stdout, r.stderr)
	}
}

func TestUnknownSession(t *testing.T) {
	data := t.TempDir()
	ok(t, data, "", "create", "other")
	for _, args := range [][]string{
		{"events", "nope"},
		{"messages", "nope"},
		{"messages", "nope", "--at", "0"},
		{"transcript", "nope"},
		{"surface", "nope"},
		{"header", "nope"},
		{"request", "nope", "--at", "0"},
		{"inspect", "nope"},
		{"why", "nope", "0"},
		{"export", "nope"},
		{"resume", "nope"},
		{"fork", "nope", "--as", "child"},
	} {
		fail(t, data, "", sdk.CodeSessionNotFound, args...)
	}
	// Nothing was created on the way.
	if r := ok(t, data, "", "sessions", "--json"); strings.Count(r.stdout, `"id"`) != 1 {
		t.Fatalf("sessions after failures: %s", r.stdout)
	}
}

// TestJSONRefusedWhereNotOffered: a command that has no JSON output refuses
// --json with USAGE before it does anything, instead of printing text.
func TestJSONRefusedWhereNotOffered(t *testing.T) {
	data := t.TempDir()
	// demo would write a store; refused, it writes nothing.
	dir := filepath.Join(data, "demo")
	r := fail(t, data, "", sdk.CodeUsage, "demo", "--data", dir, "--json")
	if !strings.Contains(r.lastLine(), "does not offer --json") {
		t.Errorf("last line %q does not name the rule", r.lastLine())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("demo --json made %s: %v", dir, err)
	}
}
