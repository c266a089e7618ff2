package codex_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/codex"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
)

// FuzzMapper feeds arbitrary bytes to the dialect as a rollout: it never
// panics, and every input it derives passes the payload rules of a lenient
// session (foreigntest reports a refused input).
func FuzzMapper(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	meta := []byte(`{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}` + "\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		d := codex.New()
		lines := foreigntest.SplitLines(append(meta[:len(meta):len(meta)], b...))
		for _, l := range lines {
			d.Claims(l.Text)
		}
		r := foreigntest.Run(t, d, lines)
		for n, err := range r.Refused {
			t.Errorf("line %d refused: %v", n, err)
		}
	})
}
