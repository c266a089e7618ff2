package client_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// logbookBin is the logbook binary: the engine re-execs it for its plugins,
// and TestMain runs `logbook serve` from it.
var logbookBin string

// daemon is the host:port of the `logbook serve` process that the
// examples and the handle tests talk to; TestMain runs it over a data
// directory of its own for the whole test binary.
var daemon string

// serveTimeout bounds the start and the stop of the daemon.
const serveTimeout = time.Minute

func TestMain(m *testing.M) { testbin.Main(withDaemon{m}, &logbookBin) }

// withDaemon runs the tests with a `logbook serve` process listening at
// daemon, stopped (SIGTERM, then SIGKILL if it hangs) and its data
// directory removed when they end.
type withDaemon struct{ m *testing.M }

// Run starts the daemon, runs the tests and stops it.
func (w withDaemon) Run() int {
	dir, err := os.MkdirTemp("", "logbook-client-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	p, err := testserve.Start(logbookBin, serveTimeout, "--data", dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	daemon = p.Addr()
	code := w.m.Run()
	if err := p.Signal(syscall.SIGTERM); err != nil || p.Wait(serveTimeout) != nil {
		_ = p.Kill9(serveTimeout)
		fmt.Fprintf(os.Stderr, "logbook serve did not stop on SIGTERM:\n%s", p.Log())
		return max(code, 1)
	}
	return code
}
