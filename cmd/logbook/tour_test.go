package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tourScript returns the shell block of the README's CLI tour, with PATH
// and D pointed at bin and data, and without the commands that run until
// interrupted (events --follow, view).
func tourScript(t *testing.T, bin, data string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const export = "export PATH=$PWD/bin:$PATH D=/tmp/lb-tour\n"
	_, block, ok := strings.Cut(string(readme), "## A five-minute tour with the CLI")
	if _, block, ok = strings.Cut(block, "```sh\n"+export); !ok {
		t.Fatalf("README.md's tour has no sh block starting with %q", export)
	}
	block, _, _ = strings.Cut(block, "```")
	script := []string{"set -e", "export PATH=" + bin + ":$PATH D=" + data}
	for _, l := range strings.Split(block, "\n") {
		if strings.Contains(l, " --follow ") || strings.HasPrefix(l, "logbook view ") {
			continue
		}
		script = append(script, l)
	}
	return strings.Join(script, "\n")
}

// The README's tour runs as written from a fresh data directory, and the
// store it leaves is what its comments say: the created session's first
// turn from seq 0 with no marker and nothing interrupted, the second
// turn's first command after the lifecycle marker at 12, its --continue
// with nothing written at open, and no open turn.
func TestREADMETourRunsAsWritten(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(logbookBin, filepath.Join(bin, "logbook")); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", tourScript(t, bin, data))
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the tour: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, want := range []string{`logbook append: session "s1" is new`, `logbook append: resumed session "s1": wrote 1 event (seq 12–12): 0 closers`,
		`logbook append: continued session "s1": the open turn goes on, no events written`} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("the tour's stderr lacks %q:\n%s", want, errb.String())
		}
	}
	evs := ok(t, data, "", "events", "s1").lines()
	if len(evs) != 19 || !strings.HasPrefix(evs[0], `{"seq":0,`) || !strings.Contains(evs[0], `"type":"turn/start"`) ||
		!strings.Contains(evs[11], `"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}`) ||
		!strings.Contains(evs[12], `"type":"session/end-seed"`) || !strings.Contains(evs[18], `"type":"turn/end","data":{"turn":2,"reason":{"kind":"completed"}}`) {
		t.Fatalf("the tour's log (%d events):\n%s", len(evs), strings.Join(evs, "\n"))
	}
	if log := strings.Join(evs, "\n"); strings.Count(log, "session/end-seed") != 1 || strings.Contains(log, "interrupted") {
		t.Errorf("the tour's log holds a repair or a second marker:\n%s", log)
	}
	if in := ok(t, data, "", "inspect", "s1").stdout; !strings.Contains(in, "open turn       none") || !strings.Contains(in, "pending repair  0 events") {
		t.Errorf("inspect after the tour:\n%s", in)
	}
	if _, err := os.Stat(filepath.Join(dir, "s1.jsonl")); err != nil {
		t.Errorf("the tour's export: %v", err)
	}
}
