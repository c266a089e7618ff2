package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

func TestExportImportRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	finished(t, src, "s")
	ok(t, src, "", "fork", "s", "--as", "child", "--at", "5")
	for _, id := range []string{"s", "child"} {
		exported := ok(t, src, "", "export", id).stdout
		lines := strings.Split(strings.TrimSuffix(exported, "\n"), "\n")
		if !strings.HasPrefix(lines[0], `{"type":"session","version":`+strconv.Itoa(sdk.FormatVersion)+`,"id":"`+id+`"`) {
			t.Fatalf("export header line %s", lines[0])
		}
		if got := strings.Join(lines[1:], "\n") + "\n"; got != ok(t, src, "", "events", id).stdout {
			t.Fatalf("export events differ from events")
		}
		file := filepath.Join(dst, id+".jsonl")
		if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
			t.Fatal(err)
		}
		r := ok(t, dst, "", "import", file)
		if r.stdout != lines[0]+"\n" {
			t.Fatalf("import printed %s, want the exported header %s", r.stdout, lines[0])
		}
		if !strings.Contains(r.stderr, "logbook import: ") {
			t.Errorf("no progress on stderr: %q", r.stderr)
		}
		// Verbatim: the same header, byte-identical events, nothing added.
		if again := ok(t, dst, "", "export", id).stdout; again != exported {
			t.Fatalf("re-export differs:\n%s\nexported:\n%s", again, exported)
		}
		// Again: the import that completed is there byte for byte, so a
		// retry succeeds and prints the same; nothing is written twice.
		if r := ok(t, dst, "", "import", file); r.stdout != lines[0]+"\n" {
			t.Fatalf("the repeated import printed %s, want the exported header %s", r.stdout, lines[0])
		}
		if again := ok(t, dst, "", "export", id).stdout; again != exported {
			t.Fatalf("re-export after the repeated import differs:\n%s", again)
		}
	}
	// Another import under a stored id is refused: one event fewer, and
	// the same events under another header.
	exported := ok(t, src, "", "export", "s").stdout
	shorter := exported[:strings.LastIndex(strings.TrimSuffix(exported, "\n"), "\n")+1]
	for name, text := range map[string]string{
		"one event fewer": shorter,
		"another header":  strings.Replace(exported, `"createdAt":`, `"createdAt":1`, 1),
	} {
		file := filepath.Join(dst, "other.jsonl")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		r := lb(t, dst, "", "import", file)
		wantFail(t, r, sdk.CodeSessionAlreadyExists, "import", name)
	}
	// --as: the same session under another id; only the header's id differs.
	exported = ok(t, src, "", "export", "child").stdout
	file := filepath.Join(dst, "child.jsonl")
	r := ok(t, dst, "", "import", file, "--as", "copy")
	wantHeader := strings.Replace(strings.SplitN(exported, "\n", 2)[0], `"id":"child"`, `"id":"copy"`, 1)
	if r.stdout != wantHeader+"\n" {
		t.Fatalf("import --as printed %s, want %s", r.stdout, wantHeader)
	}
	if again := ok(t, dst, "", "export", "copy").stdout; again != strings.Replace(exported, `"id":"child"`, `"id":"copy"`, 1) {
		t.Fatalf("the export of the copy is not the original with its id replaced:\n%s\noriginal:\n%s", again, exported)
	}
	fail(t, dst, "", sdk.CodeSessionAlreadyExists, "import", file, "--as", "s")
	fail(t, dst, "", sdk.CodeInvalidSessionID, "import", file, "--as", "bad\x01id")
	// From stdin too.
	other := t.TempDir()
	exported = ok(t, src, "", "export", "s").stdout
	if r := ok(t, other, exported, "import", "-"); !strings.Contains(r.stdout, `"id":"s"`) {
		t.Fatalf("import - printed %q", r.stdout)
	}
}

func TestImportRejectsBadExports(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	exported := ok(t, data, "", "export", "s").stdout
	lines := strings.Split(strings.TrimSuffix(exported, "\n"), "\n")
	for name, tc := range map[string]struct {
		text string
		code sdk.Code
	}{
		"empty":        {"", sdk.CodeSeedInvalid},
		"bad header":   {`{"type":"session"}` + "\n", sdk.CodeSeedInvalid},
		"newer format": {strings.Replace(lines[0], `"version":`+strconv.Itoa(sdk.FormatVersion), `"version":`+strconv.Itoa(sdk.FormatVersion+1), 1) + "\n", sdk.CodeFormatTooNew},
		"missing event": {strings.Join(append([]string{strings.Replace(lines[0], `"id":"s"`, `"id":"t"`, 1)},
			lines[2:]...), "\n") + "\n", sdk.CodeSeedInvalid},
		"missing file": {"", sdk.CodeIOError},
	} {
		t.Run(name, func(t *testing.T) {
			dst := t.TempDir()
			file := filepath.Join(dst, "in.jsonl")
			if name != "missing file" {
				if err := os.WriteFile(file, []byte(tc.text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			fail(t, dst, "", tc.code, "import", file)
			if r := ok(t, dst, "", "sessions", "--json"); r.stdout != "[]\n" {
				t.Fatalf("a rejected import stored %s", r.stdout)
			}
		})
	}
}

func TestMigrateThenVerify(t *testing.T) {
	data := t.TempDir()
	one := writeConfig(t, data, "one.hcl", `persistence "jsonl" {}`+"\n")
	two := writeConfig(t, data, "two.hcl", "persistence \"jsonl\" {}\npersistence \"sqlite\" {\n  path = \"mirror.db\"\n}\n")
	ok(t, data, input(crashLines), "append", "a", "--config", one)
	ok(t, data, input(crashLines, finishLines), "append", "b", "--config", one)
	ok(t, data, "", "create", "empty", "--config", one)

	// Before the migration the mirror misses every session.
	r := lb(t, data, "", "verify", "--config", two)
	if r.code != 1 || !strings.HasPrefix(r.lastLine(), "logbook: MIRROR_DIVERGED: 3 of 3 comparisons differ") || strings.Count(r.stdout, "missing") != 3 {
		t.Fatalf("verify before migrate: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = ok(t, data, "", "migrate", "--to", "sqlite", "--config", two)
	if r.stdout != "migrated 3 sessions to sqlite: 3 copied (18 events), 0 already complete, 0 failed\n" {
		t.Fatalf("migrate: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "logbook migrate: 3/3 sessions done") {
		t.Errorf("no progress on stderr: %q", r.stderr)
	}
	r = ok(t, data, "", "verify", "--config", two)
	golden(t, "verify", r.stdout)
	r = ok(t, data, "", "verify", "b", "--config", two, "--json")
	var results []service.Comparison
	if err := json.Unmarshal([]byte(r.stdout), &results); err != nil || len(results) != 1 || results[0].Status != "ok" || results[0].Events != 11 {
		t.Fatalf("verify --json: %s (%v)", r.stdout, err)
	}

	// Resumable: the primary grows (written without the mirror), the
	// mirror is behind; a second migration copies only the rest.
	ok(t, data, `{"type":"turn/start","data":{"turn":2}}`+"\n", "append", "a", "--config", one)
	r = lb(t, data, "", "verify", "a", "--config", two)
	if r.code != 1 || !strings.Contains(r.stdout, "behind") {
		t.Fatalf("verify of a grown primary: exit %d\n%s", r.code, r.stdout)
	}
	r = ok(t, data, "", "migrate", "--to", "sqlite", "--config", two)
	// a's resume wrote 4 events, the append 1.
	if r.stdout != "migrated 3 sessions to sqlite: 1 copied (5 events), 2 already complete, 0 failed\n" {
		t.Fatalf("second migrate: %q", r.stdout)
	}
	ok(t, data, "", "verify", "--config", two)

	// A session written with both blocks is mirrored as it goes.
	ok(t, data, input(crashLines), "append", "c", "--config", two)
	ok(t, data, "", "verify", "c", "--config", two)
	fail(t, data, "", sdk.CodeSessionNotFound, "verify", "nope", "--config", two)
	if r := ok(t, data, "", "verify"); r.stdout != "no mirror is configured; nothing to compare\n" {
		t.Fatalf("verify without mirrors: %q", r.stdout)
	}
}

// jsonlFile is the plain JSONL log of session id (an id of lowercase
// letters is its own directory name).
func jsonlFile(data, id string) string {
	return filepath.Join(data, id, "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl")
}

func TestCorruptLog(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines, finishLines), "append", "s", "--config", cfg)
	path := jsonlFile(data, "s")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Damage event 3 (line 5); the turn/end on a later line proves the
	// damage is inside the committed log.
	lines := strings.SplitAfter(string(b), "\n")
	lines[4] = `{"seq":3,"time":1,"type":"request/hea` + "\n"
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"events", "s"}, {"messages", "s"}, {"messages", "s", "--at", "1"}, {"transcript", "s"},
		{"surface", "s"}, {"header", "s"}, {"request", "s", "--at", "1"}, {"why", "s", "1"}, {"inspect", "s"},
		{"export", "s"}, {"resume", "s"}, {"fork", "s", "--as", "c"}, {"append", "s"}} {
		r := fail(t, data, "", sdk.CodeCorruptLog, append(args, "--config", cfg)...)
		if !strings.Contains(r.lastLine(), "line 5") {
			t.Errorf("%v: %q does not name line 5", args, r.lastLine())
		}
	}
	// Corruption is never reported as an empty log or absence; the list
	// still works and names the broken session.
	r := ok(t, data, "", "sessions", "--json", "--config", cfg)
	if !strings.Contains(r.stdout, `"error":`) || !strings.Contains(r.stdout, "CORRUPT_LOG") {
		t.Fatalf("sessions: %s", r.stdout)
	}
}

func TestTornTail(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg)
	f, err := os.OpenFile(jsonlFile(data, "s"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const partial = `{"seq":7,"time":1,"type":"tool/res`
	f.WriteString(partial)
	f.Close()
	torn := fmt.Sprintf(`"tornBytes":%d`, len(partial))
	// Readers show the valid prefix; inspect reports what a write open
	// would cut; resume cuts it and records it in the log.
	if n := len(ok(t, data, "", "events", "s", "--config", cfg).lines()); n != len(crashLines) {
		t.Fatalf("%d events readable", n)
	}
	if r := ok(t, data, "", "inspect", "s", "--json", "--config", cfg); !strings.Contains(r.stdout, torn) {
		t.Fatalf("inspect: %s", r.stdout)
	}
	r := ok(t, data, "", "resume", "s", "--config", cfg)
	if lines := r.lines(); len(lines) != 5 || !strings.Contains(lines[0], `"type":"session/recovered","data":{`+torn+`,"tornFromSeq":7`) {
		t.Fatalf("resume printed:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, fmt.Sprintf("cut %d torn bytes from seq 7", len(partial))) {
		t.Errorf("stderr %q", r.stderr)
	}
}

// TestMigrateThroughPostgres moves sessions JSONL → PostgreSQL → SQLite
// with migrate, verify agreeing at each step, and every session's export
// from each backend alone is byte-identical to the JSONL original.
func TestMigrateThroughPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	data := t.TempDir()
	pg := fmt.Sprintf("persistence \"postgres\" {\n  dsn = %q\n  schema = %q\n}\n", dsn, schema)
	jsonl := writeConfig(t, data, "jsonl.hcl", `persistence "jsonl" {}`+"\n")
	toPG := writeConfig(t, data, "to-pg.hcl", "persistence \"jsonl\" {}\n"+pg)
	pgOnly := writeConfig(t, data, "pg.hcl", pg)
	toSQLite := writeConfig(t, data, "to-sqlite.hcl", pg+"persistence \"sqlite\" {\n  path = \"copy.db\"\n}\n")
	sqliteOnly := writeConfig(t, data, "sqlite.hcl", "persistence \"sqlite\" {\n  path = \"copy.db\"\n}\n")
	ok(t, data, input(crashLines), "append", "a", "--config", jsonl)
	ok(t, data, input(crashLines, finishLines), "append", "b", "--config", jsonl)
	ok(t, data, "", "create", "empty", "--config", jsonl)

	if r := ok(t, data, "", "migrate", "--to", "postgres", "--config", toPG); r.stdout != "migrated 3 sessions to postgres: 3 copied (18 events), 0 already complete, 0 failed\n" {
		t.Fatalf("migrate to postgres: %q", r.stdout)
	}
	ok(t, data, "", "verify", "--config", toPG)
	if r := ok(t, data, "", "migrate", "--to", "sqlite", "--config", toSQLite); r.stdout != "migrated 3 sessions to sqlite: 3 copied (18 events), 0 already complete, 0 failed\n" {
		t.Fatalf("migrate to sqlite: %q", r.stdout)
	}
	ok(t, data, "", "verify", "--config", toSQLite)
	for _, id := range []string{"a", "b", "empty"} {
		want := ok(t, data, "", "export", id, "--config", jsonl).stdout
		for _, cfg := range []string{pgOnly, sqliteOnly} {
			if got := ok(t, data, "", "export", id, "--config", cfg).stdout; got != want {
				t.Fatalf("export of %s through %s differs from the JSONL original:\n%s\nwant:\n%s", id, filepath.Base(cfg), got, want)
			}
		}
	}
}
