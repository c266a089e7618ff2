package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// turn2Lines is a second turn after finishLines[:3]: a build whose long
// output (a very wide first line, then 30 lines) succeeds and a write
// that fails.
func turn2Lines() []string {
	var out []string
	out = append(out, strings.Repeat("x", 300))
	for i := 1; i <= 30; i++ {
		out = append(out, fmt.Sprintf("line %d of the build log", i))
	}
	build := strings.Join(out, `\n`)
	return []string{
		`{"type":"turn/start","data":{"turn":2}}`,
		`{"type":"user/message","data":{"id":"u2","role":"user","content":[{"type":"text","text":"Build it"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`,
		`{"type":"step/start","data":{"turn":2,"step":1}}`,
		`{"type":"assistant/message","data":{"turn":2,"step":1,"message":{"id":"a2","role":"assistant","content":[{"type":"tool-call","id":"c2","name":"build","arguments":"{}"},{"type":"tool-call","id":"c3","name":"write","arguments":"{\"path\":\"/etc/x\"}"}],"source":{"kind":"model","provider":"mock","model":"m1"}},"stream":[]},"surfaceOp":"append"}`,
		`{"type":"tool/call","data":{"turn":2,"step":1,"callId":"c2","name":"build","arguments":"{}"}}`,
		`{"type":"tool/call","data":{"turn":2,"step":1,"callId":"c3","name":"write","arguments":"{\"path\":\"/etc/x\"}"}}`,
		`{"type":"tool/result","data":{"turn":2,"step":1,"message":{"id":"r2","role":"tool","toolCallId":"c2","content":[{"type":"text","text":"` + build + `"}],"source":{"kind":"tool","callId":"c2"}}},"surfaceOp":"append","sourceEventSeqs":[14]}`,
		`{"type":"tool/result","data":{"turn":2,"step":1,"message":{"id":"r3","role":"tool","toolCallId":"c3","isError":true,"content":[{"type":"text","text":"permission denied"}],"source":{"kind":"tool","callId":"c3"}},"error":{"name":"PermissionError","code":"EACCES"}},"surfaceOp":"append","sourceEventSeqs":[15]}`,
		`{"type":"step/end","data":{"turn":2,"step":1}}`,
		`{"type":"turn/end","data":{"turn":2,"reason":{"kind":"completed"}}}`,
	}
}

// TestTranscriptForAPerson: turn headers with times, tool results with the
// tool and its outcome, long output shortened with a marker (--full shows
// it all), the compaction checkpoint where it replaced history; no colour
// and no pager when stdout is not a terminal; --json keeps its array.
func TestTranscriptForAPerson(t *testing.T) {
	data := t.TempDir()
	ok(t, data, input(crashLines, finishLines[:3], turn2Lines()), "append", "s")
	ok(t, data, "", "compact", "s", "--start", "1", "--end", "17")
	r := ok(t, data, "", "transcript", "s")
	golden(t, "transcript-compacted", normalize(r.stdout, data))
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colour on a pipe: %q", r.stdout)
	}
	full := ok(t, data, "", "transcript", "s", "--full").stdout
	if !strings.Contains(full, "line 30 of the build log") || !strings.Contains(full, strings.Repeat("x", 300)) || strings.Contains(full, "--full shows all") {
		t.Errorf("--full shortened something:\n%s", full)
	}
	if j := ok(t, data, "", "transcript", "s", "--json").stdout; !strings.HasPrefix(j, `[{"seq":1,"type":"user/message","message":`) {
		t.Errorf("--json: %.200s", j)
	}
}

// TestTranscriptOnATerminal runs transcript in a real pseudo-terminal
// (script(1)): colour unless NO_COLOR is set, and $PAGER when the output is
// longer than the screen, not when it fits.
func TestTranscriptOnATerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed")
	}
	data := t.TempDir()
	ok(t, data, input(crashLines, finishLines[:3], turn2Lines()), "append", "s")
	paged := filepath.Join(data, "paged")
	run := func(rows int, env ...string) (string, string) {
		t.Helper()
		os.Remove(paged)
		inner := fmt.Sprintf("stty rows %d cols 120; %s transcript s --data %s", rows, logbookBin, data)
		c := exec.Command("script", "-qec", inner, "/dev/null")
		c.Env = append(os.Environ(), append([]string{"PAGER=cat > " + paged, "NO_COLOR="}, env...)...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("script: %v\n%s", err, out)
		}
		p, _ := os.ReadFile(paged)
		return string(out), string(p)
	}
	out, p := run(200)
	if p != "" || !strings.Contains(out, "\x1b[32mok\x1b[0m") || !strings.Contains(out, "\x1b[31;1merror\x1b[0m") {
		t.Errorf("a transcript that fits a 200-row terminal: paged %q, output %q", p, out)
	}
	out, p = run(10)
	if !strings.Contains(p, "── turn 2 · ") || !strings.Contains(p, "\x1b[") || strings.Contains(out, "Build it") {
		t.Errorf("a transcript longer than a 10-row terminal: paged %q, output %q", p, out)
	}
	out, _ = run(200, "NO_COLOR=1")
	if strings.Contains(out, "\x1b[") || !strings.Contains(out, "write: error") {
		t.Errorf("NO_COLOR: output %q", out)
	}
}
