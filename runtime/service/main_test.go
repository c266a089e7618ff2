package service_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
)

// logbookBin is the logbook binary the service re-execs for its plugins.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }
