package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// snapshotDir returns every file under dir with its bytes.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// requireSameDir fails unless dir holds exactly the files of before, byte
// for byte.
func requireSameDir(t *testing.T, what, dir string, before map[string]string) {
	t.Helper()
	after := snapshotDir(t, dir)
	for path, b := range before {
		if a, ok := after[path]; !ok || a != b {
			t.Fatalf("%s: %s changed (%d bytes before, %d after, present %v)", what, path, len(b), len(a), ok)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Fatalf("%s: %s appeared", what, path)
		}
	}
}

// append --expected-seq N means what expectedSeq means over the API: N is
// the seq the first line gets, the stored length plus what the open itself
// appends first (the closers of the open turn and the marker; after a torn
// tail also session/recovered). Any other N is SEQ_CONFLICT before the open
// writes anything: the closers, the marker and the cut of a torn tail are
// not written, and the session's files stay byte-identical.
func TestAppendExpectedSeqIsTheFirstLinesSeq(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg) // 7 events, a turn open mid tool call
	line := `{"type":"turn/start","data":{"turn":2}}` + "\n"
	dir := filepath.Join(data, "s")
	before := snapshotDir(t, dir)
	// The open would append 3 closers and the marker (seqs 7–10): the
	// first line gets 11. The stored length 7 is refused like any other.
	for _, n := range []string{"0", "7", "10", "12"} {
		r := fail(t, data, line, sdk.CodeSeqConflict, "append", "s", "--expected-seq", n, "--config", cfg)
		if !strings.Contains(r.stderr, "would get seq 11, not the "+n+" expected (the stored log holds 7 events and the open appends 4 repair events first)") {
			t.Errorf("--expected-seq %s: stderr %q", n, r.stderr)
		}
		requireSameDir(t, "a refused --expected-seq "+n, dir, before)
	}
	fail(t, data, line, sdk.CodeInvalidSeq, "append", "s", "--expected-seq", "-1", "--config", cfg)
	requireSameDir(t, "--expected-seq -1", dir, before)

	// A torn tail is not cut by a refused append either; it adds
	// session/recovered to the open's batch, so 11 is refused now.
	f, err := os.OpenFile(jsonlFile(data, "s"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":7,"time":1,"type":"tool/res`)
	f.Close()
	torn := snapshotDir(t, dir)
	r := fail(t, data, line, sdk.CodeSeqConflict, "append", "s", "--expected-seq", "11", "--config", cfg)
	if !strings.Contains(r.stderr, "would get seq 12, not the 11 expected") {
		t.Errorf("--expected-seq 11 after a torn tail: stderr %q", r.stderr)
	}
	requireSameDir(t, "a refused append of a log with a torn tail", dir, torn)

	// The right seq appends after the resume's recovered event, three
	// closers and the marker (seqs 7–11): the line is seq 12.
	r = ok(t, data, line, "append", "s", "--expected-seq", "12", "--config", cfg)
	if lines := r.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":12,`) {
		t.Fatalf("--expected-seq 12: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	// An absent session holds no events and its open appends none: 0
	// creates it, anything else creates nothing.
	fail(t, data, line, sdk.CodeSeqConflict, "append", "new", "--expected-seq", "1", "--config", cfg)
	if _, err := os.Stat(filepath.Join(data, "new")); !os.IsNotExist(err) {
		t.Fatalf("a refused append created the session: %v", err)
	}
	if r := ok(t, data, line, "append", "new", "--expected-seq", "0", "--config", cfg); !bytes.HasPrefix([]byte(r.stdout), []byte(`{"seq":0,`)) {
		t.Fatalf("--expected-seq 0 of a new session: %q", r.stdout)
	}
}

// With --continue the open appends nothing, so N is the stored length;
// a created, empty session's first line is seq 0 with no marker before it.
func TestAppendExpectedSeqWithContinueAndEmptySession(t *testing.T) {
	t.Parallel() // its own data directory
	data := t.TempDir()
	ok(t, data, input(crashLines), "append", "s")
	fail(t, data, finishLines[0]+"\n", sdk.CodeSeqConflict, "append", "s", "--continue", "--expected-seq", "11")
	r := ok(t, data, finishLines[0]+"\n", "append", "s", "--continue", "--expected-seq", "7")
	if lines := r.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":7,"time":`) || !strings.Contains(lines[0], `"type":"tool/result"`) {
		t.Fatalf("--continue --expected-seq 7: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	ok(t, data, "", "create", "e")
	fail(t, data, crashLines[0]+"\n", sdk.CodeSeqConflict, "append", "e", "--expected-seq", "1")
	r = ok(t, data, crashLines[0]+"\n", "append", "e", "--expected-seq", "0")
	if lines := r.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":0,`) || !strings.Contains(lines[0], `"type":"turn/start"`) {
		t.Fatalf("--expected-seq 0 of a created session: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	if evs := ok(t, data, "", "events", "e").lines(); len(evs) != 1 {
		t.Fatalf("the created session holds %d events, want only the appended turn/start: %q", len(evs), evs)
	}
}
