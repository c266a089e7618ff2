package server_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveUnderUlimit runs `logbook serve` with its open file limit (and so
// its plugins') lowered to nofile, and returns its exit error and output
// once it exits, or kills it after wait and reports it still running.
func serveUnderUlimit(t *testing.T, nofile, cfg string, wait time.Duration) (running bool, out string) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", `ulimit -n "$1" && shift && exec "$@"`, "sh", nofile,
		logbookBin, "serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--config", cfg)
	b, err := cmd.CombinedOutput()
	return ctx.Err() != nil && err != nil, string(b)
}

// writeConfig writes an HCL config into a temporary directory.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "logbook.hcl")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// serve refuses to start with a max_live_sessions its JSONL plugin's file
// descriptor limit cannot hold (2 per live session), naming the cap, the
// limit and both fixes; a cap that fits starts.
func TestServeRefusesACapAboveTheDescriptorLimit(t *testing.T) {
	running, out := serveUnderUlimit(t, "64", writeConfig(t, `persistence "jsonl" {}`), serveTimeout)
	if running {
		t.Fatalf("serve started with max_live_sessions = 1000 under ulimit -n 64:\n%s", out)
	}
	for _, want := range []string{"CONFIG_INVALID", "max_live_sessions = 1000", "plugin jsonl", "limit of 64", "ulimit -n", "lower max_live_sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	running, out = serveUnderUlimit(t, "256", writeConfig(t, "max_live_sessions = 10\npersistence \"jsonl\" {}\n"), 5*time.Second)
	if !running {
		t.Fatalf("serve with max_live_sessions = 10 under ulimit -n 256 did not run:\n%s", out)
	}
}
