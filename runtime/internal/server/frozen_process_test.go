package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
)

// A real `logbook serve` whose JSONL plugin is frozen (SIGSTOP) is not
// ready: /readyz answers 503 within the probe deadline naming the backend,
// grpc.health.v1 says NOT_SERVING and logbook_plugin_up is 0, although the
// process has not died; after SIGCONT all three recover.
func TestServeFrozenPluginIsNotReady(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jsonl.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, filepath.Join(dir, "data"), "--config", cfg)
	plugins := p.Plugins()
	if len(plugins) != 1 {
		t.Fatalf("plugins %v, want the jsonl plugin alone", plugins)
	}
	pid := plugins[0]
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	state := func() (code int, grpcStatus healthpb.HealthCheckResponse_ServingStatus, up float64) {
		start := time.Now()
		code, _, r := readyz(t, p.addr)
		if took := time.Since(start); took > engine.ProbeTimeout+time.Second {
			t.Errorf("/readyz took %v, above the probe deadline %v", took, engine.ProbeTimeout)
		}
		if code != http.StatusOK && !r.down("backend") {
			t.Errorf("/readyz %d does not name the backend: %+v", code, r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), engine.ProbeTimeout+time.Second)
		defer cancel()
		res, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		up, _ = scrapeServe(t, p).Value("logbook_plugin_up", "plugin", "jsonl")
		return code, res.GetStatus(), up
	}
	// waitFor polls until the state is want, within the probe's reuse
	// and deadline and a margin.
	waitFor := func(wantCode int, wantStatus healthpb.HealthCheckResponse_ServingStatus, wantUp float64) {
		t.Helper()
		deadline := time.Now().Add(engine.ProbeTTL + engine.ProbeTimeout + 10*time.Second)
		for {
			code, st, up := state()
			if code == wantCode && st == wantStatus && up == wantUp {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz %d, health %v, logbook_plugin_up %v; want %d, %v, %v\n%s", code, st, up, wantCode, wantStatus, wantUp, p.log())
			}
		}
	}
	waitFor(http.StatusOK, healthpb.HealthCheckResponse_SERVING, 1)

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	cont := func() { _ = syscall.Kill(pid, syscall.SIGCONT) }
	defer cont()
	waitFor(http.StatusServiceUnavailable, healthpb.HealthCheckResponse_NOT_SERVING, 0)

	cont()
	waitFor(http.StatusOK, healthpb.HealthCheckResponse_SERVING, 1)
}
