package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the raw view of a SQLite store, to damage a row

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The session every salvage test damages: an interrupted turn (seq 0–2),
// the closers and marker of the resume that follows (3–5), then a whole
// turn (6–8); each append is its own batch, so with zstd each is a frame.
var (
	salvageCrash = []string{
		`{"type":"turn/start","data":{"turn":1}}`,
		`{"type":"user/message","data":{"id":"u1","role":"user","content":[{"type":"text","text":"List the files"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`,
		`{"type":"step/start","data":{"turn":1,"step":1}}`,
	}
	salvageTurn = []string{
		`{"type":"turn/start","data":{"turn":2}}`,
		`{"type":"user/message","data":{"id":"u2","role":"user","content":[{"type":"text","text":"again"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`,
		`{"type":"turn/end","data":{"turn":2,"reason":{"kind":"completed"}}}`,
	}
)

// salvageCase is one backend a salvage runs against end to end, through
// the real plugin subprocess.
type salvageCase struct {
	name   string
	config string // HCL
	// file is the stored log of session s under its directory; "" for
	// SQLite, whose damage is a row's data.
	file string
	// unit finds the unit (frame or line) of a file log holding seq 3.
	unit func(t *testing.T, log []byte) (start, end int)
	// excluded is how many intact events the damage leaves out.
	excluded int
}

func salvageCases() []salvageCase {
	return []salvageCase{
		{name: "jsonl-zstd", config: `persistence "jsonl" { compression = "zstd" }`, file: "events.v" + strconv.Itoa(sdk.FormatVersion) + ".jsonl.zst", unit: zstdFrame, excluded: 3},
		{name: "jsonl-none", config: `persistence "jsonl" { compression = "none" }`, file: "events.v" + strconv.Itoa(sdk.FormatVersion) + ".jsonl", unit: plainLine, excluded: 5},
		{name: "sqlite", config: `persistence "sqlite" {}`, excluded: 5},
	}
}

// damage damages seq 3 of session s inside its committed log (intact
// events follow it): one flipped byte in the middle of its unit, or data
// that is not JSON in its row. It returns the byte offset the damage
// starts at, -1 for a row.
func (c salvageCase) damage(t *testing.T, data string) int64 {
	t.Helper()
	if c.file == "" {
		if _, err := sqliteDB(t, data).Exec(`UPDATE events SET data = 'not json' WHERE session_id = 's' AND seq = 3`); err != nil {
			t.Fatal(err)
		}
		return -1
	}
	path := filepath.Join(data, "s", c.file)
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start, end := c.unit(t, log)
	log[(start+end)/2] ^= 0xff
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	return int64(start)
}

// source is what must not change about session s: its log file byte for
// byte and the names beside it, or every column of its rows.
func (c salvageCase) source(t *testing.T, data string) any {
	t.Helper()
	if c.file == "" {
		return sqliteRows(t, data)
	}
	b, err := os.ReadFile(filepath.Join(data, "s", c.file))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(data, "s"))
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return fmt.Sprintf("%x %v", b, names)
}

// zstdFrame finds the frame holding seq 3: the third after the header's
// (header, seqs 0–2, seqs 3–5, seqs 6–8).
func zstdFrame(t *testing.T, log []byte) (int, int) {
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	var starts []int
	for i := 0; ; i++ {
		j := bytes.Index(log[i:], magic)
		if j < 0 {
			break
		}
		i += j
		starts = append(starts, i)
	}
	if len(starts) != 4 {
		t.Fatalf("the log holds %d zstd frames at %v; want 4", len(starts), starts)
	}
	return starts[2], starts[3]
}

// plainLine finds the line of seq 3.
func plainLine(t *testing.T, log []byte) (int, int) {
	start := bytes.Index(log, []byte(`{"seq":3,`))
	if start < 0 {
		t.Fatal("no line of seq 3")
	}
	return start, start + bytes.IndexByte(log[start:], '\n')
}

func sqliteDB(t *testing.T, data string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "sessions.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// sqliteRows is every column of every row of session s, and its sessions row.
func sqliteRows(t *testing.T, data string) any {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT quote(session_id), seq, quote(type), time, quote(data), quote(surface_op), quote(source_event_seqs) FROM events WHERE session_id = 's' ORDER BY seq`,
		`SELECT * FROM sessions WHERE id = 's'`,
	} {
		rows, err := sqliteDB(t, data).Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// salvagedEvent is the data of a session/salvaged event.
type salvagedEvent struct {
	SalvagedFrom         string `json:"salvagedFrom"`
	DamagedAtOffset      int64  `json:"damagedAtOffset"`
	DamagedBytes         int64  `json:"damagedBytes"`
	IntactEventsExcluded int    `json:"intactEventsExcluded"`
	Artifact             string `json:"artifact"`
}

// Salvage end to end on a really damaged log of each backend: the read
// commands refuse it naming salvage; the child holds exactly what a fork of
// the valid prefix holds, then session/salvaged; the artifact holds the
// damaged part; the source is unchanged, byte for byte.
func TestSalvageOfADamagedLog(t *testing.T) {
	for _, c := range salvageCases() {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, t.TempDir(), "logbook.hcl", c.config)
			run := func(args ...string) result { return ok(t, data, "", append(args, "--config", cfg)...) }
			ok(t, data, input(salvageCrash), "append", "s", "--config", cfg)
			ok(t, data, input(salvageTurn), "append", "s", "--config", cfg)
			intact := run("events", "s").lines()
			if len(intact) != 9 {
				t.Fatalf("the source has %d events; want 9", len(intact))
			}
			// What a fork of the valid prefix (seq 0–2) makes, before the damage.
			run("fork", "s", "--as", "expected", "--at", "2")
			expected := run("events", "expected").lines()

			offset := c.damage(t, data)
			before := c.source(t, data)
			for _, args := range [][]string{{"events", "s"}, {"inspect", "s"}, {"messages", "s"}, {"transcript", "s"}} {
				r := fail(t, data, "", sdk.CodeCorruptLog, append(args, "--config", cfg)...)
				if !strings.Contains(r.lastLine(), "`logbook salvage s`") {
					t.Errorf("%v: the CORRUPT_LOG line does not name logbook salvage s: %s", args, r.lastLine())
				}
			}

			r := run("salvage", "s", "--as", "child")
			if r.stdout != "child\n" || !strings.Contains(r.stderr, `session "child" holds the 3 valid events of "s"`) {
				t.Fatalf("salvage printed %q, stderr %q", r.stdout, r.stderr)
			}
			var rep service.SalvageReport
			if r := run("salvage", "s", "--as", "child-json", "--json"); json.Unmarshal([]byte(r.stdout), &rep) != nil ||
				rep.ID != "child-json" || rep.From != "s" || rep.ValidEvents != 3 || rep.IntactEventsExcluded != int64(c.excluded) || rep.Artifact == "" {
				t.Fatalf("salvage --json printed %q", r.stdout)
			}
			got := run("events", "child").lines()
			if len(got) != len(expected)+1 || !reflect.DeepEqual(got[:len(expected)], expected) {
				t.Fatalf("the child's events\n%s\nwant the fork's\n%s\nthen session/salvaged", strings.Join(got, "\n"), strings.Join(expected, "\n"))
			}
			var last struct {
				Seq  int64         `json:"seq"`
				Type string        `json:"type"`
				Data salvagedEvent `json:"data"`
			}
			if err := json.Unmarshal([]byte(got[len(got)-1]), &last); err != nil {
				t.Fatal(err)
			}
			ev := last.Data
			if last.Type != "session/salvaged" || last.Seq != int64(len(expected)) || ev.SalvagedFrom != "s" ||
				ev.IntactEventsExcluded != c.excluded || !filepath.IsAbs(ev.Artifact) {
				t.Fatalf("last event %s", got[len(got)-1])
			}
			// Beside the sessions: under the JSONL root, beside the database.
			wantDir := filepath.Join(data, ".salvaged")
			if c.file == "" {
				wantDir = filepath.Join(data, "sessions.db.salvaged")
			}
			if dir, name := filepath.Split(ev.Artifact); filepath.Clean(dir) != wantDir || !strings.HasPrefix(name, "child-") {
				t.Fatalf("artifact %s; want child-… in %s", ev.Artifact, wantDir)
			}
			artifact, err := os.ReadFile(ev.Artifact)
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(ev.Artifact); fi.Mode().Perm() != 0o600 {
				t.Errorf("artifact mode %v; want 0600", fi.Mode().Perm())
			}
			if offset >= 0 {
				// A file backend keeps the source's bytes from the damage on.
				log, err := os.ReadFile(filepath.Join(data, "s", c.file))
				if err != nil {
					t.Fatal(err)
				}
				if ev.DamagedAtOffset != offset || ev.DamagedBytes != int64(len(log))-offset || !bytes.Equal(artifact, log[offset:]) {
					t.Fatalf("damage at %d of %d bytes, artifact of %d bytes; want the %d bytes from offset %d",
						ev.DamagedAtOffset, ev.DamagedBytes, len(artifact), int64(len(log))-offset, offset)
				}
			} else {
				// A row backend keeps the rows from the damage on as lines:
				// the damaged row described, then the intact ones verbatim.
				lines := strings.Split(strings.TrimSuffix(string(artifact), "\n"), "\n")
				if ev.DamagedAtOffset != 3 || ev.DamagedBytes != 6 || len(lines) != 6 || !reflect.DeepEqual(lines[1:], intact[4:]) {
					t.Fatalf("damage at %d over %d rows, artifact\n%s\nwant the damaged row of seq 3, then\n%s",
						ev.DamagedAtOffset, ev.DamagedBytes, artifact, strings.Join(intact[4:], "\n"))
				}
			}
			if h := run("inspect", "child", "--json").stdout; !strings.Contains(h, `"id":"child","events":7`) {
				t.Fatalf("inspect child: %s", h)
			}
			if after := c.source(t, data); !reflect.DeepEqual(after, before) {
				t.Fatalf("the source changed:\n%v\nwant\n%v", after, before)
			}

			// Without --as the child's id is generated and printed.
			gen := strings.TrimSpace(run("salvage", "s").stdout)
			if len(gen) != 36 || len(run("events", gen).lines()) != len(got) {
				t.Fatalf("generated child %q", gen)
			}
			r = fail(t, data, "", sdk.CodeSessionAlreadyExists, "salvage", "s", "--as", "child", "--config", cfg)
			if !strings.Contains(r.lastLine(), `"child"`) {
				t.Errorf("SESSION_ALREADY_EXISTS does not name the child: %s", r.lastLine())
			}
			r = fail(t, data, "", sdk.CodeInvalidBoundary, "salvage", "expected", "--as", "x", "--config", cfg)
			if !strings.Contains(r.lastLine(), "use fork") {
				t.Errorf("INVALID_BOUNDARY for an intact session does not name fork: %s", r.lastLine())
			}
			fail(t, data, "", sdk.CodeSessionNotFound, "salvage", "nope", "--as", "y", "--config", cfg)
			if after := c.source(t, data); !reflect.DeepEqual(after, before) {
				t.Fatal("the source changed after the later salvages")
			}
		})
	}
}

// The hint names the session the error is about, quoted for a shell when
// it needs to be, and a placeholder when no error in the chain names one.
func TestSalvageHint(t *testing.T) {
	inner := &sdk.Error{Code: sdk.CodeCorruptLog, Op: "jsonl", SessionID: "it's mine"}
	outer := &sdk.Error{Code: sdk.CodeCorruptLog, Op: "store", Err: inner}
	for _, c := range []struct {
		err  error
		want string
	}{
		{outer, "`logbook salvage 'it'\\''s mine'`"},
		{&sdk.Error{Code: sdk.CodeCorruptLog, SessionID: "a-1.b_c:d/e"}, "`logbook salvage a-1.b_c:d/e`"},
		{sdk.CodeCorruptLog, "`logbook salvage ID`"},
	} {
		if got := salvageHint(c.err); !strings.Contains(got, c.want) {
			t.Errorf("salvageHint(%v) = %q; want it to contain %q", c.err, got, c.want)
		}
	}
	if got := salvageHint(&sdk.Error{Code: sdk.CodeCorruptLog, Op: "restore", SessionID: "s", Err: sdk.CodePayloadInvalid}); got != "" {
		t.Errorf("a restore's CORRUPT_LOG got the hint %q", got)
	}
}

// A log whose storage is intact but one of whose events breaks an event
// rule is CORRUPT_LOG from the host's restore, not storage damage: no
// command suggests salvage, which refuses it with that error and creates
// nothing.
func TestSalvageOfALogThatBreaksAnEventRule(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), "logbook.hcl", `persistence "jsonl" { compression = "none" }`)
	ok(t, data, input(salvageCrash), "append", "s", "--config", cfg)
	path := filepath.Join(data, "s", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl")
	log, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(log, []byte(`"data":{"turn":1}`), []byte(`"data":{"turn":-1}`), 1)
	if bytes.Equal(bad, log) {
		t.Fatal("no turn/start to break")
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	r := fail(t, data, "", sdk.CodeCorruptLog, "inspect", "s", "--config", cfg)
	if strings.Contains(r.lastLine(), "logbook salvage") {
		t.Errorf("inspect names salvage for a log salvage cannot help: %s", r.lastLine())
	}
	r = fail(t, data, "", sdk.CodeCorruptLog, "salvage", "s", "--as", "child", "--config", cfg)
	if !strings.Contains(r.lastLine(), "PAYLOAD_INVALID") || strings.Contains(r.lastLine(), "logbook salvage") {
		t.Fatalf("salvage of a log breaking an event rule: %s", r.lastLine())
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "events", "child", "--config", cfg)
	if after, _ := os.ReadFile(path); !bytes.Equal(after, bad) {
		t.Fatal("the source changed")
	}
}

// A create of an id whose stored log is damaged (here SQLite rows that do
// not match next_seq, which Stat reports as CORRUPT_LOG) is refused as the
// create of any stored id is: SESSION_ALREADY_EXISTS, without a hint to
// salvage, and nothing changes.
func TestCreateOfADamagedStoredSessionAlreadyExists(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), "logbook.hcl", `persistence "sqlite" {}`)
	ok(t, data, input(salvageTurn), "append", "s", "--config", cfg)
	if _, err := sqliteDB(t, data).Exec(`DELETE FROM events WHERE session_id = 's' AND seq = (SELECT max(seq) FROM events WHERE session_id = 's')`); err != nil {
		t.Fatal(err)
	}
	before := sqliteRows(t, data)
	r := fail(t, data, "", sdk.CodeSessionAlreadyExists, "create", "s", "--config", cfg)
	if !strings.Contains(r.lastLine(), `"s"`) || strings.Contains(r.lastLine(), "salvage") {
		t.Fatalf("the refused create says %q", r.lastLine())
	}
	if after := sqliteRows(t, data); !reflect.DeepEqual(after, before) {
		t.Fatalf("the refused create changed the rows:\n%v\nwas\n%v", after, before)
	}
}
