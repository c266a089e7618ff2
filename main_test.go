package logbook_test

import (
	"os"
	"testing"

	"github.com/seed-e5e476df/logbook"
)

// TestMain lets the test binary run the bundled plugins: Open starts them
// as `<test binary> plugin <name>`, and ServePlugins serves them there.
func TestMain(m *testing.M) {
	logbook.ServePlugins()
	os.Exit(m.Run())
}
