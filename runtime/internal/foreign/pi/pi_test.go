package pi_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/pi"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current mapping")

// fixtures returns the well-formed fixtures (not damaged-*).
func fixtures(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if !strings.HasPrefix(filepath.Base(f), "damaged-") {
			out = append(out, f)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d fixtures, want at least 5", len(out))
	}
	return out
}

func run(t *testing.T, path string) foreigntest.Result {
	t.Helper()
	return foreigntest.Run(t, pi.New(), foreigntest.ReadLines(t, path))
}

func TestDebug(t *testing.T) {
	for _, f := range fixtures(t) {
		r := run(t, f)
		t.Logf("%s: damaged %v refused %v branches %v", f, r.Damaged, r.Refused, r.Branches)
		for _, e := range r.Session.Events().All() {
			t.Logf("%s", e.Envelope())
		}
		for _, fm := range []string{"openai", "anthropic"} {
			b, err := r.Messages(fm)
			t.Logf("%s %s err=%v", fm, b, err)
		}
	}
}
var _ = update
var _ = os.ReadFile
