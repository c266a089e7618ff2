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

// append --expected-seq N refuses a stored log of another length with
// SEQ_CONFLICT before the open writes anything: the closers of the open
// turn, the marker and the cut of a torn tail are not written, and the
// session's files stay byte-identical. The right length appends after the
// repair; an absent session counts as empty.
func TestAppendExpectedSeq(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg) // 7 events, a turn open mid tool call
	line := `{"type":"turn/start","data":{"turn":2}}` + "\n"
	dir := filepath.Join(data, "s")
	before := snapshotDir(t, dir)
	for _, n := range []string{"0", "6", "8", "11"} {
		r := fail(t, data, line, sdk.CodeSeqConflict, "append", "s", "--expected-seq", n, "--config", cfg)
		if !strings.Contains(r.stderr, "holds 7 events, not the "+n+" expected") {
			t.Errorf("--expected-seq %s: stderr %q", n, r.stderr)
		}
		requireSameDir(t, "a refused --expected-seq "+n, dir, before)
	}
	fail(t, data, line, sdk.CodeInvalidSeq, "append", "s", "--expected-seq", "-1", "--config", cfg)
	requireSameDir(t, "--expected-seq -1", dir, before)

	// A torn tail is not cut by a refused append either.
	f, err := os.OpenFile(jsonlFile(data, "s"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":7,"time":1,"type":"tool/res`)
	f.Close()
	torn := snapshotDir(t, dir)
	fail(t, data, line, sdk.CodeSeqConflict, "append", "s", "--expected-seq", "8", "--config", cfg)
	requireSameDir(t, "a refused append of a log with a torn tail", dir, torn)

	// The stored length appends: after the resume's recovered event, three
	// closers and the marker (seqs 7–11), the line is seq 12.
	r := ok(t, data, line, "append", "s", "--expected-seq", "7", "--config", cfg)
	if lines := r.lines(); len(lines) != 1 || !strings.HasPrefix(lines[0], `{"seq":12,`) {
		t.Fatalf("--expected-seq 7: stdout %q, stderr %q", r.stdout, r.stderr)
	}

	// An absent session holds no events: 0 creates it, anything else
	// creates nothing.
	fail(t, data, line, sdk.CodeSeqConflict, "append", "new", "--expected-seq", "1", "--config", cfg)
	if _, err := os.Stat(filepath.Join(data, "new")); !os.IsNotExist(err) {
		t.Fatalf("a refused append created the session: %v", err)
	}
	if r := ok(t, data, line, "append", "new", "--expected-seq", "0", "--config", cfg); !bytes.HasPrefix([]byte(r.stdout), []byte(`{"seq":0,`)) {
		t.Fatalf("--expected-seq 0 of a new session: %q", r.stdout)
	}
}
