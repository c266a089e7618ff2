package memory_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if logbook.dir != "" {
		os.RemoveAll(logbook.dir)
	}
	os.Exit(code)
}

// overGRPC serves b through go-plugin's in-process gRPC connection (the
// production server, client and message limits) and returns the host's
// adapter. Reopen connects a second time to b.Peer(), so every hook works.
func overGRPC(t *testing.T, b *memory.Backend) sdk.Persistence {
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: memory.Name, Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: memory.Capabilities()},
		Persistence: b,
	})
	p, err := c.Persistence()
	if err != nil {
		t.Fatalf("dispensing the persistence adapter: %v", err)
	}
	return p
}

// subprocessHarness reaches a real `logbook plugin memory` child through
// sdk/plugintest.Launch with AutoMTLS on. Every New starts a child of its own,
// so each subtest starts from an empty backend.
//
// Reopen and SetFormatVersion stay nil: the child serves one memory.New()
// and nothing else. The protocol has no call that opens a second instance
// over the same store (a second Start is another process with another
// store, and a second adapter over the same process shares its handles,
// which Reopen must not), and none that rewrites a stored format version;
// the memory backend has no files another process could reach either. The
// grpc-in-memory mode runs the Instances and FormatGate groups over gRPC.
func subprocessHarness() persistencetest.Harness {
	return persistencetest.Harness{
		Name:         memory.Name,
		Capabilities: persistencetest.Capabilities{StatCounts: true},
		Declared:     memory.Capabilities(),
		Served:       memory.New(),
		New: func(t *testing.T) sdk.Persistence {
			bin := logbookBinary(t)
			return plugintest.LaunchedPersistence(t, exec.Command(bin, "plugin", memory.Name), nil)
		},
	}
}

// logbook is the logbook binary the subprocess mode runs: the one
// LOGBOOK_TEST_BIN names, else built on first use so that fuzzing and the
// other tests do not pay for it; TestMain removes dir.
var logbook struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func logbookBinary(t *testing.T) string {
	t.Helper()
	logbook.once.Do(func() {
		if prebuilt := os.Getenv("LOGBOOK_TEST_BIN"); prebuilt != "" {
			logbook.bin = prebuilt
			return
		}
		dir, err := os.MkdirTemp("", "logbook-memory-test")
		if err != nil {
			logbook.err = err
			return
		}
		logbook.dir = dir
		bin := filepath.Join(dir, "logbook")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/seed-e5e476df/logbook/cmd/logbook").CombinedOutput()
		if err != nil {
			logbook.err = fmt.Errorf("%v\n%s", err, out)
			return
		}
		logbook.bin = bin
	})
	if logbook.err != nil {
		t.Fatalf("building the logbook binary: %v", logbook.err)
	}
	return logbook.bin
}
