package pluginhost

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
)

// logbookBin is the logbook binary built once for the process tests.
var logbookBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("LOGBOOK_TEST_HOST_PROCESS"); bin != "" {
		hostProcess(bin) // the test binary re-executed as a plugin host
		return
	}
	testbin.Main(m, &logbookBin)
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
