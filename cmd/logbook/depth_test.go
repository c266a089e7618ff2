package main

import (
	"strings"
	"testing"
)

// deepLine is an append input line whose data nests depth arrays.
func deepLine(depth int) string {
	return `{"type":"x-test/deep","data":` + strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth) + `,"ignorable":true}`
}

// Data nested exactly as deep as allowed (512 levels of its own; the line
// and the envelope around it are not counted) is appended and stored by
// every first-party backend and reads back; one level deeper is refused
// with JSON_TOO_DEEP naming 512 and the pointer of the 513th level, and is
// not stored.
func TestAppendDataAtTheDepthLimit(t *testing.T) {
	for name, hcl := range map[string]string{
		"jsonl-none": "persistence \"jsonl\" {\n  compression = \"none\"\n}\n",
		"jsonl-zstd": "persistence \"jsonl\" {\n  compression = \"zstd\"\n}\n",
		"sqlite":     "persistence \"sqlite\" {\n  path = \"deep.db\"\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, data, "backend.hcl", hcl)
			lines := deepLine(1) + "\n" + deepLine(512) + "\n" + deepLine(2) + "\n"
			r := ok(t, data, lines, "append", "s", "--config", cfg)
			if len(r.lines()) != 3 {
				t.Fatalf("append printed %q", r.stdout)
			}
			stored := ok(t, data, "", "events", "s", "--config", cfg).stdout
			if stored != r.stdout {
				t.Fatalf("stored:\n%s\nappend printed:\n%s", stored, r.stdout)
			}

			r = lb(t, data, deepLine(513)+"\n", "append", "s", "--config", cfg)
			want := `logbook: JSON_TOO_DEEP: line 1: json: JSON_TOO_DEEP: nesting deeper than 512 at JSON pointer "/data` + strings.Repeat("/0", 512) + `"`
			if r.code != 1 || !strings.HasPrefix(r.lastLine(), want) {
				t.Fatalf("exit %d, last stderr line %q; want prefix %q", r.code, r.lastLine(), want)
			}
			// The resume's marker is stored; the refused line is not.
			after := ok(t, data, "", "events", "s", "--config", cfg).stdout
			if rest, found := strings.CutPrefix(after, stored); !found || strings.Contains(rest, "x-test/deep") {
				t.Fatalf("a refused line changed the stored events:\n%s", after)
			}
		})
	}
}
