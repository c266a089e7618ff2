package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// compactConfig writes a config with the bundled summarizer in its offline
// extractive mode and the pruner, storing under data.
func compactConfig(t *testing.T, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "compact.hcl")
	src := fmt.Sprintf(`data_dir = %q
persistence "jsonl" { compression = "zstd" }
compaction {
  summarizer = "compactor-summary"
  pruner     = "pruner"
}
plugin "compactor-summary" {
  config { mode = "extractive" }
}
`, data)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// conversation renders append lines for turns of a tool-using agent, each
// tool result textLen characters long; open leaves the last turn open.
func conversation(turns, textLen int, open bool) string {
	var b strings.Builder
	line := func(typ string, surface bool, data any) {
		m := map[string]any{"type": typ, "data": data}
		if surface {
			m["surfaceOp"] = "append"
		}
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	src := map[string]any{"kind": "model", "provider": "mock", "model": "m"}
	for t := 1; t <= turns; t++ {
		line("turn/start", false, map[string]any{"turn": t})
		line("user/message", true, map[string]any{"id": fmt.Sprintf("u%d", t), "role": "user", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("request %d: look at file %d", t, t)}}, "source": map[string]any{"kind": "user"}})
		line("step/start", false, map[string]any{"turn": t, "step": 1})
		if t == 1 {
			line("request/header", false, map[string]any{"header": map[string]any{"config": map[string]any{"provider": "mock", "model": "m"}}, "reason": "initial"})
		}
		id := fmt.Sprintf("c%d", t)
		line("assistant/message", true, map[string]any{"turn": t, "step": 1, "stream": []any{}, "message": map[string]any{"id": fmt.Sprintf("a%d", t), "role": "assistant", "source": src,
			"content": []any{map[string]any{"type": "tool-call", "id": id, "name": "read", "arguments": `{"path":"f"}`}}}})
		line("tool/call", false, map[string]any{"turn": t, "step": 1, "callId": id, "name": "read", "arguments": `{"path":"f"}`})
		if open && t == turns {
			return b.String()
		}
		line("tool/result", true, map[string]any{"turn": t, "step": 1, "message": map[string]any{"id": "r" + id, "role": "tool", "toolCallId": id, "source": map[string]any{"kind": "tool", "callId": id},
			"content": []any{map[string]any{"type": "text", "text": strings.Repeat(fmt.Sprintf("line %d of the file\n", t), textLen/18)}}}})
		line("step/end", false, map[string]any{"turn": t, "step": 1})
		line("turn/end", false, map[string]any{"turn": t, "reason": map[string]any{"kind": "completed"}})
	}
	return b.String()
}

// compact condenses the history through the summarizer plugin and prints
// the bracket; prune rewrites oversized tool results once and is then a
// no-op.
func TestCompactAndPrune(t *testing.T) {
	data := t.TempDir()
	cfg := compactConfig(t, data)
	if r := runIn(t, data, conversation(6, 12000, false), "append", "s1", "--config", cfg); r.code != 0 {
		t.Fatalf("append: %s", r.stderr)
	}
	r := runIn(t, data, "", "prune", "s1", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("prune: %s", r.stderr)
	}
	if got := strings.Count(r.stdout, `"type":"compaction/prune"`); got != 6 {
		t.Errorf("prune appended %d compaction/prune events, want 6:\n%s", got, r.stdout)
	}
	if again := runIn(t, data, "", "prune", "s1", "--config", cfg); again.code != 0 || again.stdout != "" {
		t.Errorf("a second prune appended %q (exit %d, %s)", again.stdout, again.code, again.stderr)
	}
	r = runIn(t, data, "", "compact", "s1", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("compact: %s", r.stderr)
	}
	var types []string
	for _, l := range r.lines() {
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("compact printed %q", l)
		}
		types = append(types, ev.Type)
	}
	if want := "compaction/start compaction/summary user/message compaction/end"; strings.Join(types, " ") != want {
		t.Errorf("compact appended %v, want %s", types, want)
	}
	surface := runIn(t, data, "", "surface", "s1", "--config", cfg)
	var nodes []int64
	if err := json.Unmarshal([]byte(surface.stdout), &nodes); err != nil || len(nodes) >= 18 {
		t.Errorf("surface after compaction: %s (%v)", surface.stdout, err)
	}
}

// Refusals change nothing: a headless configuration has no compaction, a
// log that ends inside a turn must be resumed first, and a region must be
// given whole.
func TestCompactRefusals(t *testing.T) {
	data := t.TempDir()
	cfg := compactConfig(t, data)
	if r := runIn(t, data, conversation(2, 100, true), "append", "open", "--config", cfg); r.code != 0 {
		t.Fatalf("append: %s", r.stderr)
	}
	before := runIn(t, data, "", "events", "open", "--config", cfg).stdout
	r := runIn(t, data, "", "compact", "open", "--config", cfg)
	wantFail(t, r, sdk.CodeCompactionTurnOpen, "compact", "open")
	if after := runIn(t, data, "", "events", "open", "--config", cfg).stdout; after != before {
		t.Error("a refused compact changed the log")
	}
	headless := filepath.Join(t.TempDir(), "headless.hcl")
	if err := os.WriteFile(headless, []byte(fmt.Sprintf("data_dir = %q\npersistence \"jsonl\" {}\n", data)), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFail(t, runIn(t, data, "", "compact", "open", "--config", headless), sdk.CodeConfigInvalid, "compact", "headless")
	wantFail(t, runIn(t, data, "", "prune", "open", "--config", headless), sdk.CodeConfigInvalid, "prune", "headless")
	wantFail(t, runIn(t, data, "", "compact", "open", "--start", "1", "--config", cfg), sdk.CodeUsage, "compact", "--start")
	wantFail(t, runIn(t, data, "", "compact", "nope", "--config", cfg), sdk.CodeSessionNotFound, "compact", "nope")
}
