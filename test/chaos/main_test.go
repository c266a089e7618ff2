package chaos

import (
	"flag"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
)

// logbookBin is the logbook binary: serve, its plugins and the CLI the
// verifier and the second writers run.
var logbookBin string

var (
	// The short run's faults per backend leave out some kinds on each
	// backend, but every kind runs on some backend (nextKind).
	flagFaults   = flag.Int("chaos.faults", 10, "faults per backend")
	flagSeed     = flag.Uint64("chaos.seed", 0, "seed of the fault order and parameters (0: from the clock)")
	flagBackends = flag.String("chaos.backends", "jsonl-zstd,jsonl-none,sqlite,postgres,memory", "comma-separated backends to run")
	flagClients  = flag.Int("chaos.clients", 3, "concurrent appending clients per backend")
	flagKinds    = flag.String("chaos.kinds", "", "comma-separated fault kinds to run (default: all)")
	flagStopAt   = flag.String("chaos.stop-at", "", "RFC 3339 time after which no backend starts a fault: the run verifies, stops and prints the table of the faults done")
)

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }
