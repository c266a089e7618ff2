package logbook_test

import (
	"os"
	"testing"

	"github.com/seed-e5e476df/logbook"

	// The embedded default configuration names the summarizer, which
	// package logbook does not link. The SQL backends stay out, as in an
	// embedder that keeps its sessions in JSONL.
	_ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle"
)

// TestMain lets the test binary run the bundled plugins: Open starts them
// as `<test binary> plugin <name>`, and ServePlugins serves them there.
func TestMain(m *testing.M) {
	logbook.ServePlugins()
	os.Exit(m.Run())
}
