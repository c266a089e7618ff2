package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// followFixture is a Claude Code session of package claudecode's fixtures
// (its SOURCE.md says what it holds); followSID is its sessionId.
const (
	followFixture = "../../runtime/internal/foreign/claudecode/testdata/session.jsonl"
	followSID     = "7f3c2a10-5b6e-4d21-9c8a-0e1f2a3b4c5d"
	followID      = "claude-code-" + followSID
)

// mirrorProc is a running `logbook import --follow --json`.
type mirrorProc struct {
	cmd    *exec.Cmd
	passes chan map[string]any
	exited chan struct{}
}

// startMirror starts `logbook import --follow dir --json` on data and waits
// for its first pass.
func startMirror(t *testing.T, data, dir string) *mirrorProc {
	t.Helper()
	cmd := exec.Command(logbookBin, "import", "--follow", dir, "--data", data, "--json")
	cmd.Dir = data
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &mirrorProc{cmd: cmd, passes: make(chan map[string]any, 1000), exited: make(chan struct{})}
	go func() {
		defer close(f.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var p map[string]any
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				t.Errorf("a pass that is not JSON: %q", sc.Text())
				continue
			}
			f.passes <- p
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	select {
	case p := <-f.passes:
		// Either mode must lose and duplicate nothing; which one runs
		// depends on the machine's inotify limits.
		if p["first"] != true || (p["mode"] != "fsnotify" && p["mode"] != "polling") {
			t.Fatalf("first pass %v; want first, in fsnotify or polling mode", p)
		}
	case <-f.exited:
		cmd.Wait()
		t.Fatalf("import --follow exited: %v\n%s", cmd.ProcessState, stderr.String())
	case <-time.After(cmdTimeout):
		t.Fatal("no first pass")
	}
	return f
}

// stop sends sig and waits for the exit; it returns the exit code.
func (f *mirrorProc) stop(t *testing.T, sig syscall.Signal) int {
	t.Helper()
	if err := f.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-f.exited:
	case <-time.After(cmdTimeout):
		t.Fatalf("import --follow did not stop on %v", sig)
	}
	f.cmd.Wait()
	return f.cmd.ProcessState.ExitCode()
}

// sourceLines counts the source/line records of the session (0 while it does
// not exist).
func sourceLines(t *testing.T, data, id string) int {
	t.Helper()
	r := lb(t, data, "", "events", id)
	if r.code != 0 {
		if strings.Contains(r.lastLine(), "SESSION_NOT_FOUND") {
			return 0
		}
		t.Fatalf("logbook events: exit %d\n%s", r.code, r.stderr)
	}
	n := 0
	for _, l := range r.lines() {
		var env struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &env); err != nil {
			t.Fatalf("event %q: %v", l, err)
		}
		if env.Type == "source/line" {
			n++
		}
	}
	return n
}

// A writer appends a Claude Code session line by line while `logbook
// import --follow` runs; the mirror is killed with SIGKILL halfway (with a
// line half written) and started again. Every line reaches the session
// exactly once: the session exports back to the file byte for byte, and a
// clean stop (SIGINT) exits 0.
func TestImportFollowLosesAndDuplicatesNothingAcrossSIGKILL(t *testing.T) {
	src, data := t.TempDir(), t.TempDir()
	b, err := os.ReadFile(followFixture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = lines[:len(lines)-1] // the text after the last line feed: ""
	file := filepath.Join(src, followSID+".jsonl")
	write := func(s string) {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	// Lines before the first that names the session (Claude Code starts
	// with a file-history-snapshot) wait in the file until it comes.
	named := -1
	for k, l := range lines {
		if strings.Contains(l, `"sessionId":"`+followSID+`"`) {
			named = k
			break
		}
	}
	if named < 0 || named >= len(lines)/2 {
		t.Fatalf("the fixture names its session at line %d", named+1)
	}
	waitFor := func(k int) {
		t.Helper()
		if k <= named {
			return
		}
		// Generous: this checks every line once, not how fast (see
		// BenchmarkMirrorLineLatency); -race on a loaded CI box is slow.
		deadline := time.Now().Add(30 * time.Second)
		for {
			n := sourceLines(t, data, followID)
			if n == k {
				return
			}
			if n > k {
				t.Fatalf("after line %d the session holds %d source lines", k, n)
			}
			if time.Now().After(deadline) {
				t.Fatalf("line %d not imported within 30s (%d source lines)", k, n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	f := startMirror(t, data, src)
	kill := len(lines) / 2
	for k, line := range lines {
		if k == kill {
			half := len(line) / 2
			write(line[:half])
			if code := f.stop(t, syscall.SIGKILL); code != -1 {
				t.Fatalf("SIGKILL: exit %d", code)
			}
			write(line[half:])
			write(lines[k+1]) // a line written while no mirror runs
			f = startMirror(t, data, src)
			waitFor(k + 2)
			continue
		}
		if k == kill+1 {
			continue
		}
		write(line)
		waitFor(k + 1)
	}
	if code := f.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("SIGINT: exit %d, want 0", code)
	}
	if n := sourceLines(t, data, followID); n != len(lines) {
		t.Fatalf("%d source lines, want %d", n, len(lines))
	}
	got := ok(t, data, "", "export", followID, "--format", "claude-code").stdout
	if got != string(b) {
		t.Fatalf("the export back differs from the file: %d bytes, want %d", len(got), len(b))
	}
}

// --poll needs --follow, --as refuses it; --follow without a DIR and without any tool's
// directory is USAGE.
func TestImportFollowUsage(t *testing.T) {
	data := t.TempDir()
	r := lb(t, data, "", "import", "--poll", "x.jsonl")
	wantFail(t, r, sdk.CodeUsage)
	if !strings.Contains(r.lastLine(), "--poll needs --follow") {
		t.Errorf("last line %q", r.lastLine())
	}
	r = lb(t, data, "", "import", "--follow", data, "--as", "mine")
	wantFail(t, r, sdk.CodeUsage)
	if !strings.Contains(r.lastLine(), "--as cannot be used with --follow") {
		t.Errorf("last line %q", r.lastLine())
	}
	r = lb(t, data, "", "import", "--follow") // HOME is an empty temporary directory
	wantFail(t, r, sdk.CodeUsage)
	if !strings.Contains(r.lastLine(), ".claude/projects") {
		t.Errorf("last line %q: want the directories it looked for", r.lastLine())
	}
	r = lb(t, data, "", "import", "--follow", filepath.Join(data, "missing"))
	wantFail(t, r, sdk.CodeIOError)
}
