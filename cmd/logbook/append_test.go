package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestAppendPrintsCanonicalEnvelopes(t *testing.T) {
	data := t.TempDir()
	// data keeps its member order and number literals; whitespace goes.
	r := ok(t, data, `{ "data" : {"todos":[{"status":"pending","content":"x"}]} , "type":"todo/write"}`+"\r\n"+
		`{"type":"plugin:demo/note","data":{"b":1.50,"a":1E3},"ignorable":true}`+"\n\n", "append", "s")
	golden(t, "append", normalize(r.stdout, data))
	if !strings.Contains(r.stderr, `session "s" is new`) {
		t.Errorf("stderr %q", r.stderr)
	}
	// The events are stored exactly as printed.
	if ev := ok(t, data, "", "events", "s"); ev.stdout != r.stdout {
		t.Fatalf("events:\n%s\nappend printed:\n%s", ev.stdout, r.stdout)
	}
}

func TestAppendResumesAndSummarizesTheRepair(t *testing.T) {
	data := t.TempDir()
	crashed(t, data, "s")
	r := ok(t, data, `{"type":"turn/start","data":{"turn":2}}`+"\n", "append", "s")
	// Only the appended line is printed; the resume's closers and marker
	// (seqs 7–10) are summarized on stderr.
	if lines := r.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":11,`) {
		t.Fatalf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, `resumed session "s": wrote 4 events (seq 7–10): 3 closers`) {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestAppendFromFile(t *testing.T) {
	data := t.TempDir()
	path := writeConfig(t, data, "lines.jsonl", input(crashLines))
	r := ok(t, data, "", "append", "s", path)
	if len(r.lines()) != len(crashLines) {
		t.Fatalf("stdout %q", r.stdout)
	}
	fail(t, data, "", sdk.CodeIOError, "append", "s", path+".missing")
}

// TestAppendStopsAtTheFirstRejectedLine checks every rejection of an input
// line: the code, the line number on stderr, that the earlier lines were
// printed, committed and flushed, and that nothing after was read.
func TestAppendStopsAtTheFirstRejectedLine(t *testing.T) {
	good := crashLines[0]
	for name, tc := range map[string]struct {
		line string
		code sdk.Code
	}{
		"bad JSON":              {`{"type":"turn/start","data":{"turn":1}`, sdk.CodeJSONSyntax},
		"not an object":         {`["turn/start"]`, sdk.CodeJSONSyntax},
		"negative zero":         {`{"type":"todo/write","data":{"todos":[],"x":-0}}`, sdk.CodeJSONNegativeZero},
		"missing data":          {`{"type":"turn/start"}`, sdk.CodeEnvelopeInvalid},
		"missing type":          {`{"data":{}}`, sdk.CodeEnvelopeInvalid},
		"extra member":          {`{"type":"turn/start","data":{"turn":2},"seq":1}`, sdk.CodeEnvelopeInvalid},
		"type not a string":     {`{"type":1,"data":{}}`, sdk.CodeEnvelopeInvalid},
		"ignorable false":       {`{"type":"turn/start","data":{"turn":2},"ignorable":false}`, sdk.CodeEnvelopeInvalid},
		"missing surface op":    {`{"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"prompt"}}}`, sdk.CodeSurfaceMarkerRequired},
		"bad surface op":        {`{"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"prompt"}},"surfaceOp":"prepend"}`, sdk.CodeSurfaceOpInvalid},
		"replace of no node":    {`{"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"prompt"}},"surfaceOp":{"op":"replace","startSeq":0,"endSeq":0},"sourceEventSeqs":[0]}`, sdk.CodeReplaceStartNotFound},
		"bad sources":           {`{"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"prompt"}},"surfaceOp":"append","sourceEventSeqs":[-1]}`, sdk.CodeSourcesInvalid},
		"reserved type":         {`{"type":"session/end-seed","data":{}}`, sdk.CodeEventTypeReserved},
		"unknown required type": {`{"type":"x/y","data":{}}`, sdk.CodeUnknownEventType},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each case has its own data directory
			data := t.TempDir()
			r := lb(t, data, good+"\n"+tc.line+"\n"+crashLines[1]+"\n", "append", "s")
			if r.code != 1 {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			if want := "logbook: " + string(tc.code) + ": line 2: "; !strings.HasPrefix(r.lastLine(), want) {
				t.Fatalf("last stderr line %q, want prefix %q", r.lastLine(), want)
			}
			if lines := r.lines(); len(lines) != 1 || !strings.Contains(lines[0], `"type":"turn/start"`) {
				t.Fatalf("stdout %q: want only line 1's event", r.stdout)
			}
			if ev := ok(t, data, "", "events", "s"); ev.stdout != r.stdout {
				t.Fatalf("stored %q, printed %q", ev.stdout, r.stdout)
			}
		})
	}
}

func TestAppendLineTooLarge(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "small.hcl", "max_event_bytes = 1024\npersistence \"jsonl\" {}\n")
	// The limit is 2 × 1024 + 1 MiB bytes per line.
	long := `{"type":"todo/write","data":{"todos":[{"content":"` + strings.Repeat("x", 1<<20+2048) + `","status":"pending"}]}}`
	r := lb(t, data, crashLines[0]+"\n"+long+"\n", "append", "s", "--config", cfg)
	if r.code != 1 || !strings.HasPrefix(r.lastLine(), "logbook: EVENT_TOO_LARGE: line 2: ") || len(r.lines()) != 1 {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	// Below the line limit, the event's own cap applies.
	r = lb(t, data, `{"type":"todo/write","data":{"todos":[{"content":"`+strings.Repeat("x", 4096)+`","status":"pending"}]}}`+"\n", "append", "s", "--config", cfg)
	if r.code != 1 || !strings.HasPrefix(r.lastLine(), "logbook: EVENT_TOO_LARGE: line 1: ") {
		t.Fatalf("exit %d\nstderr %q", r.code, r.stderr)
	}
}

// writer is a running `logbook append ID -` whose stdin stays open.
type writer struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
}

// startWriter starts `logbook append id -` in the background, with flags
// (--config FILE) after its own.
func startWriter(t *testing.T, data, id string, flags ...string) *writer {
	t.Helper()
	cmd := exec.Command(logbookBin, append([]string{"append", id, "-", "--data", data}, flags...)...)
	cmd.Dir = data
	w := &writer{cmd: cmd, lines: make(chan string, 100), stderr: &bytes.Buffer{}}
	cmd.Stderr = w.stderr
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return w
}

// send writes a line to the writer's stdin and waits until it prints the
// accepted event.
func (w *writer) send(t *testing.T, line string) string {
	t.Helper()
	if _, err := io.WriteString(w.stdin, line+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case out, open := <-w.lines:
		if !open {
			t.Fatalf("the writer exited; stderr:\n%s", w.stderr)
		}
		return out
	case <-time.After(cmdTimeout):
		t.Fatalf("no event printed for %s", line)
		return ""
	}
}

// finish closes the writer's stdin and waits for it to exit.
func (w *writer) finish(t *testing.T) {
	t.Helper()
	w.stdin.Close()
	for range w.lines {
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("append: %v\nstderr:\n%s", err, w.stderr)
	}
}

func TestAppendStreamsLinesAsTheyArrive(t *testing.T) {
	data := t.TempDir()
	w := startWriter(t, data, "s")
	// Each line's event is printed while stdin is still open.
	for i, line := range crashLines[:3] {
		out := w.send(t, line)
		if !strings.HasPrefix(out, fmt.Sprintf(`{"seq":%d,`, i)) {
			t.Fatalf("line %d printed %q", i+1, out)
		}
	}
	w.finish(t)
	if n := len(ok(t, data, "", "events", "s").lines()); n != 3 {
		t.Fatalf("%d events stored after the writer exited", n)
	}
}

// waitForEvents polls `events` until the stored log has n events: the
// running writer persists them within its write-behind window.
func waitForEvents(t *testing.T, data, id string, n int) result {
	t.Helper()
	deadline := time.Now().Add(cmdTimeout)
	for {
		r := ok(t, data, "", "events", id)
		if len(r.lines()) >= n {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stored log has %d events, want %d", len(r.lines()), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReadCommandsBesideARunningWriter(t *testing.T) {
	data := t.TempDir()
	w := startWriter(t, data, "live")
	var printed []string
	for _, line := range crashLines {
		printed = append(printed, w.send(t, line))
	}
	r := waitForEvents(t, data, "live", len(crashLines))
	if r.stdout != strings.Join(printed, "\n")+"\n" {
		t.Fatalf("events beside the writer:\n%s\nthe writer printed:\n%s", r.stdout, strings.Join(printed, "\n"))
	}
	// inspect shows the open turn and what a resume would write, and
	// writes nothing.
	r = ok(t, data, "", "inspect", "live", "--json")
	var rep inspectReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Events != int64(len(crashLines)) || rep.OpenTurn == nil || *rep.OpenTurn != 1 || len(rep.PendingRepair) != 3 {
		t.Fatalf("inspect beside the writer: %s", r.stdout)
	}
	for _, args := range [][]string{{"messages", "live"}, {"transcript", "live"}, {"surface", "live"}, {"header", "live"},
		{"request", "live", "--at", "6"}, {"why", "live", "6"}, {"export", "live"}, {"fork", "live", "--as", "copy"}} {
		ok(t, data, "", args...)
	}
	// Write ownership stays with the writer.
	fail(t, data, "", sdk.CodeAlreadyOwned, "resume", "live")
	fail(t, data, "", sdk.CodeAlreadyOwned, "append", "live")
	// The writer goes on, and flushes when its input ends.
	w.send(t, finishLines[0])
	w.finish(t)
	if n := len(ok(t, data, "", "events", "live").lines()); n != len(crashLines)+1 {
		t.Fatalf("%d events after the writer exited", n)
	}
}

func TestAppendFlushesOnSignal(t *testing.T) {
	data := t.TempDir()
	w := startWriter(t, data, "s")
	w.send(t, crashLines[0])
	if err := w.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range w.lines {
	}
	err := w.cmd.Wait()
	if ee, isExit := err.(*exec.ExitError); !isExit || ee.ExitCode() != 1 {
		t.Fatalf("append after SIGINT: %v", err)
	}
	r := result{stderr: w.stderr.String()}
	if !strings.HasPrefix(r.lastLine(), "logbook: IO_ERROR: interrupted after 1 accepted line;") {
		t.Fatalf("stderr %q", r.stderr)
	}
	// The accepted line was flushed and ownership released.
	if n := len(ok(t, data, "", "events", "s").lines()); n != 1 {
		t.Fatalf("%d events stored", n)
	}
	ok(t, data, "", "resume", "s")
}
