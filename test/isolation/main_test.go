package isolation

import (
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
)

// logbookBin is the logbook binary the servers run and the token
// commands use.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }
