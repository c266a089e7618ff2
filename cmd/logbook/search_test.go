package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TestSearch: over a JSONL (zstd) and a SQLite store of several sessions,
// search prints the matching messages and tool results newest first —
// the newest session first, the latest event first in each — with a
// snippet; --session, --type and --limit narrow it; --json is an array.
func TestSearch(t *testing.T) {
	for name, body := range map[string]string{
		"jsonl":  "persistence \"jsonl\" {\n  compression = \"zstd\"\n}\n",
		"sqlite": "persistence \"sqlite\" {\n  path = \"sessions.db\"\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, data, name+".hcl", body)
			ok(t, data, input(crashLines, finishLines), "append", "x1", "--config", cfg)
			ok(t, data, input(crashLines), "append", "x0", "--config", cfg)
			ok(t, data, `{"type":"todo/write","data":{"todos":[{"content":"List the files","status":"pending"}]}}`+"\n", "append", "other", "--config", cfg)

			r := ok(t, data, "", "search", "list THE", "--config", cfg)
			var got []string
			for _, l := range r.lines() {
				f := strings.Split(l, "\t")
				if len(f) != 5 {
					t.Fatalf("search line %q has %d fields", l, len(f))
				}
				got = append(got, f[0]+f[1]+" "+f[3]+" "+f[4])
			}
			want := []string{"x0#1 user/message List the files", "x1#1 user/message List the files"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("search:\n got %q\nwant %q", got, want)
			}
			if r := ok(t, data, "", "search", "b.go", "--config", cfg); len(r.lines()) != 1 || !strings.HasPrefix(r.stdout, "x1\t#7\t") || !strings.HasSuffix(r.lines()[0], "tool/result\ta.go b.go") {
				t.Fatalf("search b.go: %q", r.stdout)
			}
			if r := ok(t, data, "", "search", "list", "--session", "x1", "--config", cfg); len(r.lines()) != 2 || !strings.Contains(r.lines()[0], "assistant/message\tListing.") {
				t.Fatalf("search --session: %q", r.stdout)
			}
			if r := ok(t, data, "", "search", "list", "--type", "assistant/message", "--limit", "1", "--config", cfg); len(r.lines()) != 1 || !strings.HasPrefix(r.stdout, "x0\t#5\t") {
				t.Fatalf("search --type --limit: %q", r.stdout)
			}
			if r := ok(t, data, "", "search", "LIST", "--case-sensitive", "--config", cfg); r.stdout != "" {
				t.Fatalf("search --case-sensitive: %q", r.stdout)
			}
			var hits []struct {
				Session string `json:"session"`
				Seq     int64  `json:"seq"`
				Time    int64  `json:"time"`
				Type    string `json:"type"`
				Snippet string `json:"snippet"`
			}
			r = ok(t, data, "", "search", "files", "--json", "--config", cfg)
			if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) != 2 || hits[0].Session != "x0" || hits[0].Seq != 1 || hits[0].Time == 0 || hits[0].Snippet != "List the files" {
				t.Fatalf("search --json: %v %s", err, r.stdout)
			}
			if r := ok(t, data, "", "search", "nowhere", "--json", "--config", cfg); strings.TrimSpace(r.stdout) != "[]" {
				t.Fatalf("search --json without hits: %q", r.stdout)
			}
		})
	}
}

// TestSearchRefusesBadInput: USAGE naming the rule, nothing printed.
func TestSearchRefusesBadInput(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", ""}, "the search text is empty"},
		{[]string{"search", "x", "--limit", "0"}, "--limit 0: the limit must be at least 1"},
		{[]string{"search", "x", "--type", "todo/write"}, `unknown type "todo/write"; a search reports user/message, assistant/message, tool/result, system/message, developer/message`},
	} {
		r := fail(t, data, "", sdk.CodeUsage, tc.args...)
		if !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: stderr %q stdout %q, want %q", tc.args, r.stderr, r.stdout, tc.want)
		}
	}
	fail(t, data, "", sdk.CodeSessionNotFound, "search", "x", "--session", "absent")
}

// TestSearchPastADamagedSession: a session whose log is damaged does not
// hide the others: their hits are printed, then search fails with the
// damaged session's CORRUPT_LOG naming it.
func TestSearchPastADamagedSession(t *testing.T) {
	for _, c := range salvageCases() {
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, t.TempDir(), "logbook.hcl", c.config)
			ok(t, data, input(salvageCrash), "append", "s", "--config", cfg)
			ok(t, data, input(salvageTurn), "append", "s", "--config", cfg)
			ok(t, data, input(crashLines), "append", "good", "--config", cfg)
			c.damage(t, data)
			r := lb(t, data, "", "search", "files", "--config", cfg)
			if r.code != 1 || !strings.Contains(r.lastLine(), "CORRUPT_LOG") || !strings.HasPrefix(r.stdout, "good\t#1\t") || !strings.Contains(r.stderr, `session "s"`) {
				t.Fatalf("search past a damaged session: stdout %q, stderr %q", r.stdout, r.stderr)
			}
		})
	}
}
