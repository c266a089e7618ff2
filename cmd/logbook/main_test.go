package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The tests drive the built binary end to end: every command, its output
// and its error contract (last stderr line `logbook: <CODE>: …`, exit status
// 1 or 2, stdout carrying results only). Each test keeps its sessions in its
// own --data directory.

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// logbookBin is the binary under test, built once by TestMain.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(isolated{m}, &logbookBin) }

// isolated runs the tests with an environment of their own: HOME and
// XDG_DATA_HOME in a temporary directory, so that a command without --data
// never writes into the user's data directory, and no LOGBOOK_CONFIG or
// LOGBOOK_DATA of the shell that started them.
type isolated struct{ m *testing.M }

func (r isolated) Run() int {
	home, err := os.MkdirTemp("", "logbook-test-home")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	os.Setenv("HOME", home)
	os.Unsetenv("XDG_DATA_HOME")
	os.Unsetenv(configEnv)
	os.Unsetenv(dataEnv)
	return r.m.Run()
}

// cmdTimeout bounds one invocation of the binary.
const cmdTimeout = 2 * time.Minute

// result is what one invocation printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

// lastLine returns the last line of stderr.
func (r result) lastLine() string {
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	return lines[len(lines)-1]
}

// lines returns the stdout lines.
func (r result) lines() []string {
	out := strings.TrimRight(r.stdout, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// runIn runs the binary in dir with args and stdin.
func runIn(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	return runEnv(t, dir, nil, stdin, args...)
}

// runEnv runs the binary in dir with args and stdin, and env (KEY=value)
// added to the test's environment.
func runEnv(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, logbookBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("logbook %v: %v", args, err)
	}
	return r
}

// lb runs the binary with --data data placed after the command's other
// arguments (global flags work anywhere), from the data directory.
func lb(t *testing.T, data, stdin string, args ...string) result {
	t.Helper()
	return runIn(t, data, stdin, append(args, "--data", data)...)
}

// ok runs the binary and fails the test unless it succeeds.
func ok(t *testing.T, data, stdin string, args ...string) result {
	t.Helper()
	r := lb(t, data, stdin, args...)
	if r.code != 0 {
		t.Fatalf("logbook %v: exit %d\nstderr:\n%s", args, r.code, r.stderr)
	}
	return r
}

// wantFail checks a failure: the exit status, the code on the last stderr
// line, and an empty stdout.
func wantFail(t *testing.T, r result, code sdk.Code, args ...string) {
	t.Helper()
	exit := 1
	if code == sdk.CodeUsage || code == sdk.CodeTenantInvalid {
		exit = 2
	}
	if r.code != exit {
		t.Errorf("logbook %v: exit %d, want %d\nstderr:\n%s", args, r.code, exit, r.stderr)
	}
	if want := "logbook: " + string(code) + ": "; !strings.HasPrefix(r.lastLine(), want) {
		t.Errorf("logbook %v: last stderr line %q, want prefix %q", args, r.lastLine(), want)
	}
	if r.stdout != "" {
		t.Errorf("logbook %v: stdout %q, want nothing on failure", args, r.stdout)
	}
}

// fail runs the binary and checks that it fails with code.
func fail(t *testing.T, data, stdin string, code sdk.Code, args ...string) result {
	t.Helper()
	r := lb(t, data, stdin, args...)
	wantFail(t, r, code, args...)
	return r
}

var (
	timeRE    = regexp.MustCompile(`"(time|createdAt|lastActivity)":\d+`)
	createdRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

// normalize replaces what differs between runs (times, the data
// directory) and the current format version with placeholders.
func normalize(s, data string) string {
	s = timeRE.ReplaceAllString(s, `"$1":T`)
	s = createdRE.ReplaceAllString(s, "CREATED")
	// The format version this build writes is V, so a version bump does
	// not rewrite the goldens.
	v := strconv.Itoa(sdk.FormatVersion)
	s = strings.ReplaceAll(s, `"version":`+v+`,`, `"version":V,`)
	s = strings.ReplaceAll(s, "  v"+v+"\n", "  vV\n")
	return strings.ReplaceAll(s, data, "DATA")
}

// golden compares got with testdata/<name>.golden (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// writeConfig writes an HCL config file into dir and returns its path.
func writeConfig(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The input lines of a scripted coding-agent turn. crashLines stop in the
// middle of a tool call (the call started, no result): the turn and step are
// open. finishLines answer the call, close the step and the turn, then
// rewrite the tool result (a replacement of node 7).
var (
	crashLines = []string{
		`{"type":"turn/start","data":{"turn":1}}`,
		`{"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"List the files"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`,
		`{"type":"step/start","data":{"turn":1,"step":1}}`,
		`{"type":"request/header","data":{"header":{"config":{"provider":"mock","model":"m1"},"tools":[{"name":"ls","description":"list a directory","parameters":{"type":"object"}}]},"reason":"initial"}}`,
		`{"type":"request/context","data":{"provider":"mock","model":"m1","contextWindow":1000}}`,
		`{"type":"assistant/message","data":{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"text","text":"Listing."},{"type":"tool-call","id":"c1","name":"ls","arguments":"{}"}],"source":{"kind":"model","provider":"mock","model":"m1"}},"stream":[]},"surfaceOp":"append"}`,
		`{"type":"tool/call","data":{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{}"}}`,
	}
	finishLines = []string{
		`{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"a.go\nb.go"}],"source":{"kind":"tool","callId":"c1"}}},"surfaceOp":"append","sourceEventSeqs":[6]}`,
		`{"type":"step/end","data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`,
		`{"type":"tool/result","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"(pruned)"}],"source":{"kind":"tool","callId":"c1"}}},"surfaceOp":{"op":"replace","startSeq":7,"endSeq":7},"sourceEventSeqs":[7]}`,
	}
)

// turnLines are the input lines of a whole turn numbered turn with one
// user message (id, text): what a harness writes after a crash repair
// closed its turn, which it does not go on with but follows with a new one.
func turnLines(turn int, id, text string) []string {
	return []string{
		fmt.Sprintf(`{"type":"turn/start","data":{"turn":%d}}`, turn),
		fmt.Sprintf(`{"type":"user/message","data":{"id":%q,"role":"user","content":[{"type":"text","text":%q}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`, id, text),
		fmt.Sprintf(`{"type":"turn/end","data":{"turn":%d,"reason":{"kind":"completed"}}}`, turn),
	}
}

// input joins lines into append's input.
func input(lines ...[]string) string {
	var b strings.Builder
	for _, ls := range lines {
		for _, l := range ls {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// crashed stores session id ending in the middle of a tool call.
func crashed(t *testing.T, data, id string) {
	t.Helper()
	ok(t, data, input(crashLines), "append", id)
}

// finished stores session id with the whole scripted turn (11 events).
func finished(t *testing.T, data, id string) {
	t.Helper()
	ok(t, data, input(crashLines, finishLines), "append", id)
}
