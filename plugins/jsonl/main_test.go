package jsonl

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
	if spec := os.Getenv(holdEnv); spec != "" {
		holdProcess(spec) // the test binary re-executed as a second writer
		return
	}
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzz") {
			os.Exit(m.Run()) // fuzzing (and its workers) never starts a subprocess
		}
	}
	testbin.Main(m, &logbookBin)
}
