package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TestReadCommandsWarnAboutATornTail: on a session ending in a torn tail
// each read command still succeeds and shows the valid prefix, and it
// says so (never a short log without a word): it warns on stderr naming
// the torn bytes and the seq they start at, and the JSON objects it prints
// carry tornBytes.
func TestReadCommandsWarnAboutATornTail(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "plain.hcl", "persistence \"jsonl\" {\n  compression = \"none\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg)
	ok(t, data, input(crashLines), "append", "clean", "--config", cfg)
	f, err := os.OpenFile(jsonlFile(data, "s"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const partial = `{"seq":7,"time":1,"type":"tool/res`
	f.WriteString(partial)
	f.Close()
	warning := fmt.Sprintf("session \"s\" ends in a torn tail of %d bytes from seq 7", len(partial))
	for _, args := range [][]string{
		{"events", "s"}, {"messages", "s"}, {"transcript", "s"}, {"transcript", "s", "--json"}, {"surface", "s"},
		{"header", "s"}, {"request", "s", "--at", "5"}, {"why", "s", "6"}, {"inspect", "s"}, {"export", "s"},
		{"sessions"}, {"sessions", "--json"},
	} {
		r := ok(t, data, "", append(args, "--config", cfg)...)
		if !strings.Contains(r.stderr, "logbook "+args[0]+": warning: "+warning) {
			t.Errorf("logbook %v: stderr %q does not warn %q", args, r.stderr, warning)
		}
		if strings.Count(r.stderr, "torn tail") != 1 {
			t.Errorf("logbook %v: stderr %q warns about other than the one torn session", args, r.stderr)
		}
	}
	if r := ok(t, data, "", "events", "s", "--config", cfg); len(r.lines()) != len(crashLines) {
		t.Fatalf("events printed %d lines; want the %d before the torn tail", len(r.lines()), len(crashLines))
	}
	r := ok(t, data, "", "sessions", "--json", "--config", cfg)
	if !strings.Contains(r.stdout, fmt.Sprintf(`{"id":"s","events":7,"tornBytes":%d`, len(partial))) || !strings.Contains(r.stdout, `{"id":"clean","events":7,"tornBytes":0`) {
		t.Fatalf("sessions --json: %s", r.stdout)
	}
	if r := ok(t, data, "", "inspect", "s", "--json", "--config", cfg); !strings.Contains(r.stdout, fmt.Sprintf(`"tornBytes":%d`, len(partial))) {
		t.Fatalf("inspect --json: %s", r.stdout)
	}
	if r := ok(t, data, "", "events", "clean", "--config", cfg); r.stderr != "" {
		t.Fatalf("events of a clean session warned: %q", r.stderr)
	}
}

// TestSQLiteSessionsOfRowsPastNextSeq: `logbook sessions` never prints
// next_seq as the event count of a SQLite session whose rows do not match
// it: the session is listed with an error naming the mismatch (exit 0: the
// list itself works), the intact one beside it with its count; events
// shows the valid prefix and warns about the torn rows.
func TestSQLiteSessionsOfRowsPastNextSeq(t *testing.T) {
	data := t.TempDir()
	cfg := writeConfig(t, data, "sqlite.hcl", "persistence \"sqlite\" {\n  path = \"sessions.db\"\n}\n")
	ok(t, data, input(crashLines), "append", "s", "--config", cfg)
	ok(t, data, input(crashLines), "append", "clean", "--config", cfg)
	db, err := sql.Open("sqlite", filepath.Join(data, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE sessions SET next_seq = 5 WHERE id = 's'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r := ok(t, data, "", "sessions", "--json", "--config", cfg)
	if !strings.Contains(r.stdout, `{"id":"s","error":"sqlite: CORRUPT_LOG: `) || !strings.Contains(r.stdout, "next_seq 5") || !strings.Contains(r.stdout, `{"id":"clean","events":7,`) {
		t.Fatalf("sessions --json: %s", r.stdout)
	}
	r = ok(t, data, "", "events", "s", "--config", cfg)
	if len(r.lines()) != 5 || !strings.Contains(r.stderr, "torn tail of ") || !strings.Contains(r.stderr, "from seq 5") {
		t.Fatalf("events printed %d lines, stderr %q; want 5 and a warning about the torn rows from seq 5", len(r.lines()), r.stderr)
	}
}

// TestResumeOfDamageBeforeIntactDataCutsNothing: `resume` never cuts
// committed events as a torn tail: with one byte flipped (or a row's data
// broken) inside the committed log and intact data after it, resume and
// append refuse with CORRUPT_LOG and the stored log stays byte for byte
// (row for row) what it was; sessions lists a damaged file log with the
// error.
func TestResumeOfDamageBeforeIntactDataCutsNothing(t *testing.T) {
	for _, c := range salvageCases() {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, t.TempDir(), "logbook.hcl", c.config)
			ok(t, data, input(salvageCrash), "append", "s", "--config", cfg)
			ok(t, data, input(salvageTurn), "append", "s", "--config", cfg)
			c.damage(t, data)
			before := c.source(t, data)
			fail(t, data, "", sdk.CodeCorruptLog, "resume", "s", "--config", cfg)
			fail(t, data, input(salvageTurn), sdk.CodeCorruptLog, "append", "s", "--config", cfg)
			if after := c.source(t, data); !reflect.DeepEqual(after, before) {
				t.Fatal("a refused write open changed the stored log")
			}
			if c.file == "" {
				return // SQLite's List checks the rows' count and range, not their data
			}
			r := ok(t, data, "", "sessions", "--json", "--config", cfg)
			if !strings.Contains(r.stdout, `{"id":"s","error":`) || !strings.Contains(r.stdout, "CORRUPT_LOG") {
				t.Fatalf("sessions --json: %s", r.stdout)
			}
		})
	}
}
