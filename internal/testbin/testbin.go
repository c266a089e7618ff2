// Package testbin builds the logbook binary once per test process, for tests
// that launch real plugin subprocesses (`logbook plugin <name>`).
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Runner runs the tests: a *testing.M, or a wrapper of one.
type Runner interface{ Run() int }

// Main builds the logbook binary into a temporary directory, runs the tests
// with its path, removes the directory and exits with the tests' status. Use
// it as a package's TestMain body:
//
//	func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }
//
// m is the *testing.M, or a Runner around it that does more before and
// after the tests with the binary (starts a `logbook serve` for Examples).
//
// When LOGBOOK_TEST_BIN names a binary, the tests use it instead: a
// benchmark can then compare two builds of the plugins with one test binary.
func Main(m Runner, path *string) {
	if prebuilt := os.Getenv("LOGBOOK_TEST_BIN"); prebuilt != "" {
		*path = prebuilt
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "logbook-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		os.Exit(1)
	}
	*path = filepath.Join(dir, "logbook")
	build := exec.Command("go", "build", "-o", *path, "github.com/seed-e5e476df/logbook/cmd/logbook")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "testbin: building the logbook binary:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
