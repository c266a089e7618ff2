package pruner

import (
	"os"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
)

// logbookBin is the logbook binary the subprocess tests run, built once by
// TestMain.
var logbookBin string

func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzz") {
			os.Exit(m.Run()) // fuzzing (and its workers) never starts a subprocess
		}
	}
	testbin.Main(m, &logbookBin)
}
