package pluginhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

func newHost(t *testing.T, opts Options) *Host {
	t.Helper()
	if opts.Executable == "" {
		opts.Executable = logbookBin
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func TestStartBundledPluginAndGetInfo(t *testing.T) {
	h := newHost(t, Options{})
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	info := p.Info()
	if info.Name != "memory" || len(info.Kinds) != 1 || info.Kinds[0] != sdk.KindPersistence || p.Pid() == 0 {
		t.Fatalf("info %+v pid %d", info, p.Pid())
	}
	d, err := p.Persistence().Describe(context.Background())
	if err != nil || d.Name == "" {
		t.Fatalf("describe: %+v %v", d, err)
	}
}

// A killed plugin is detected and restarted; calls in between fail with
// PLUGIN_UNAVAILABLE, never hang.
func TestKilledPluginIsRestarted(t *testing.T) {
	h := newHost(t, Options{RestartMin: 10 * time.Millisecond})
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.Restarts() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("plugin not restarted within 20 s")
		}
		_, err := p.Persistence().Describe(context.Background())
		if err != nil && !errors.Is(err, sdk.CodePluginUnavailable) {
			t.Fatalf("call during restart: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Pid() == pid || p.Pid() == 0 {
		t.Fatalf("new pid %d (old %d)", p.Pid(), pid)
	}
	if _, err := p.Persistence().Describe(context.Background()); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

func TestWrongSHA256IsRefusedBeforeItRuns(t *testing.T) {
	h := newHost(t, Options{})
	_, err := h.Start(context.Background(), Spec{Name: "memory", Command: logbookBin, Args: []string{"plugin", "memory"}, SHA256: strings.Repeat("ab", 32)})
	if !errors.Is(err, sdk.CodeConfigInvalid) || !strings.Contains(err.Error(), "refused before it ran") || !strings.Contains(err.Error(), strings.Repeat("ab", 32)) {
		t.Fatalf("wrong sha256: %v", err)
	}
}

func TestRightSHA256Starts(t *testing.T) {
	sum := sha256File(t, logbookBin)
	h := newHost(t, Options{})
	if _, err := h.Start(context.Background(), Spec{Name: "memory", Command: logbookBin, Args: []string{"plugin", "memory"}, SHA256: sum}); err != nil {
		t.Fatal(err)
	}
}

// A binary that never completes the handshake fails within the start
// timeout with a message saying what is wrong.
func TestHandshakeTimeout(t *testing.T) {
	script := filepath.Join(t.TempDir(), "silent")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{StartTimeout: 500 * time.Millisecond})
	began := time.Now()
	_, err := h.Start(context.Background(), Spec{Name: "silent", Command: script})
	if !errors.Is(err, sdk.CodePluginUnavailable) || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("silent plugin: %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Fatalf("start took %v with a 500 ms timeout", took)
	}
}

// A plugin speaking another protocol version is refused with both versions
// and what to do.
func TestProtocolVersionMismatch(t *testing.T) {
	script := filepath.Join(t.TempDir(), "future")
	// A go-plugin handshake line announcing app protocol version 2.
	body := "#!/bin/sh\necho '1|2|tcp|127.0.0.1:1|grpc'\nexec sleep 30\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Options{InsecureNoMTLS: true})
	_, err := h.Start(context.Background(), Spec{Name: "future", Command: script})
	if err == nil || !strings.Contains(err.Error(), "Plugin version: 2") || !strings.Contains(err.Error(), "rebuild the plugin") {
		t.Fatalf("version mismatch: %v", err)
	}
}
