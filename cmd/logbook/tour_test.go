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

// readmeBlock returns the first sh block after the README heading, which
// must start with the line export, with that line replaced by one pointing
// PATH at bin and D at data, and without the commands that run until
// interrupted (--follow, view).
func readmeBlock(t *testing.T, heading, export, bin, data string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), heading)
	if _, block, ok = strings.Cut(block, "```sh\n"+export+"\n"); !ok {
		t.Fatalf("README.md's %q has no sh block starting with %q", heading, export)
	}
	block, _, _ = strings.Cut(block, "```")
	rest := strings.TrimPrefix(export, "export PATH=$PWD/bin:$PATH D=/tmp/")
	_, rest, _ = strings.Cut(rest, " ") // the variables after D, kept as written
	script := []string{"set -e", strings.TrimSpace("export PATH=" + bin + ":$PATH D=" + data + " " + rest)}
	for _, l := range strings.Split(block, "\n") {
		if strings.Contains(l, " --follow ") || strings.HasPrefix(l, "logbook view ") {
			continue
		}
		script = append(script, l)
	}
	return strings.Join(script, "\n")
}

// tourDirs makes a temporary directory holding bin/logbook (the binary under
// test) and the path of a data directory in it.
func tourDirs(t *testing.T) (dir, bin, data string) {
	t.Helper()
	dir = t.TempDir()
	bin = filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(logbookBin, filepath.Join(bin, "logbook")); err != nil {
		t.Fatal(err)
	}
	return dir, bin, filepath.Join(dir, "data")
}

// runScript runs script with sh -e in dir and returns its stdout and
// stderr; a failure is fatal and shows both.
func runScript(t *testing.T, dir, script string) (stdout, stderr *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nscript:\n%s\nstdout:\n%s\nstderr:\n%s", err, script, out.String(), errb.String())
	}
	return &out, &errb
}

// tourScript returns the shell block of the README's CLI tour.
func tourScript(t *testing.T, bin, data string) string {
	return readmeBlock(t, "## A five-minute tour with the CLI", "export PATH=$PWD/bin:$PATH D=/tmp/lb-tour", bin, data)
}

// The README's tour runs as written from a fresh data directory, and the
// store it leaves is what its comments say: the created session's first
// turn from seq 0 with no marker and nothing interrupted, the second
// turn's first command after the lifecycle marker at 12, its --continue
// with nothing written at open, and no open turn.
func TestREADMETourRunsAsWritten(t *testing.T) {
	dir, bin, data := tourDirs(t)
	_, errb := runScript(t, dir, tourScript(t, bin, data))
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

// The README's import tour runs as written from the repository's root: the
// Claude Code fixture and its subagent become two sessions, the directory
// import adds nothing to them, the export gives the file back byte for
// byte (cmp under set -e) and the OTLP export is written.
func TestREADMEImportTourRunsAsWritten(t *testing.T) {
	_, bin, data := tourDirs(t)
	script := readmeBlock(t, "## Bringing your sessions: Claude Code, Codex and pi",
		"export PATH=$PWD/bin:$PATH D=/tmp/lb-import F=runtime/internal/foreign/claudecode/testdata", bin, data)
	out, _ := runScript(t, filepath.Join("..", ".."), script)
	const s = "claude-code-7f3c2a10-5b6e-4d21-9c8a-0e1f2a3b4c5d"
	for _, want := range []string{"imported 2 file(s)", "  " + s + "\n", "  " + s + "-agent-a7e3f91\n", `"damagedLines":[{`, "TestTotal"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the import tour's stdout lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(data, s+".otlp.json")); err != nil || !bytes.Contains(b, []byte(`"resourceSpans"`)) {
		t.Errorf("the import tour's OTLP export: %v %.200s", err, b)
	}
}
