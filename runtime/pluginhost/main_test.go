package pluginhost

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// logbookBin is the logbook binary built once for the process tests.
var logbookBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("LOGBOOK_TEST_HOST_PROCESS"); bin != "" {
		hostProcess(bin) // the test binary re-executed as a plugin host
		return
	}
	dir, err := os.MkdirTemp("", "logbook-pluginhost-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	logbookBin = filepath.Join(dir, "logbook")
	build := exec.Command("go", "build", "-o", logbookBin, "github.com/seed-e5e476df/logbook/cmd/logbook")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the logbook binary:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// hostProcess starts the memory plugin, prints its pid and waits to be
// killed: the host side of TestHostKillLeavesNoPlugin.
func hostProcess(bin string) {
	h, err := New(Options{Executable: bin})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", p.Pid())
	select {}
}
