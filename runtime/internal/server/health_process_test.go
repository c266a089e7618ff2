package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// readyReply is the body of /readyz.
type readyReply struct {
	Title  string       `json:"title"`
	Status int          `json:"status"`
	Detail string       `json:"detail"`
	Checks []readyCheck `json:"checks"`
}

// readyCheck is one check of readyReply.
type readyCheck struct {
	Component string `json:"component"`
	Name      string `json:"name"`
	Ready     bool   `json:"ready"`
	Code      string `json:"code"`
}

// down reports whether the reply says the component is not ready.
func (r readyReply) down(component string) bool {
	return slices.ContainsFunc(r.Checks, func(c readyCheck) bool { return c.Component == component && !c.Ready })
}

// getHealth GETs a health path of a server without a token.
func getHealth(t *testing.T, addr, path string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, hdr, body := do(t, req)
	return code, hdr.Get("Content-Type"), body
}

// readyz GETs /readyz and decodes its body.
func readyz(t *testing.T, addr string) (int, string, readyReply) {
	t.Helper()
	code, ct, body := getHealth(t, addr, "/readyz")
	var r readyReply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("/readyz answered %d %q: %v", code, body, err)
	}
	if r.Status != code {
		t.Fatalf("/readyz answered %d with status %d in its body: %s", code, r.Status, body)
	}
	return code, ct, r
}

// gatedPlugin writes a config whose jsonl persistence plugin runs through
// a script that, while the file gate exists, waits before it becomes the
// bundled plugin: a restart then stays pending until the test removes
// gate. It returns the config's path.
func gatedPlugin(t *testing.T, dir, gate string) string {
	t.Helper()
	script := filepath.Join(dir, "jsonl-gated.sh")
	body := "#!/bin/sh\nwhile [ -e '" + gate + "' ]; do sleep 0.01; done\nexec '" + logbookBin + "' plugin jsonl\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gated.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {}\nplugin \"jsonl\" {\n  command = \""+script+"\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A real `logbook serve` answers /healthz, /readyz and grpc.health.v1
// (Check and Watch) (without credentials; TestServeChecksInOrder covers
// them with); after its persistence plugin is killed it is not ready, naming the
// plugin, until the host has restarted it, and then it is ready again. A
// Watch stream follows each change and ends at shutdown.
func TestServeHealthAndReadiness(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	p := startServe(t, filepath.Join(dir, "data"), "--config", gatedPlugin(t, dir, gate))
	ctx := context.Background()

	if code, ct, body := getHealth(t, p.addr, "/healthz"); code != http.StatusOK || ct != "application/json" || !strings.Contains(string(body), `"ok"`) {
		t.Fatalf("/healthz: %d %q %s", code, ct, body)
	}
	code, ct, r := readyz(t, p.addr)
	if code != http.StatusOK || ct != "application/json" || len(r.Checks) != 2 {
		t.Fatalf("/readyz: %d %q %+v", code, ct, r)
	}
	for _, c := range r.Checks {
		if c.Name != "jsonl" || !c.Ready || (c.Component != "plugin" && c.Component != "backend") {
			t.Fatalf("/readyz check %+v", c)
		}
	}
	conn, err := grpc.NewClient(p.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	check := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		t.Helper()
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("grpc health Check(%q): %v", service, err)
		}
		return resp.GetStatus()
	}
	for _, service := range []string{"", "logbook.v1.Sessions"} {
		if st := check(service); st != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("grpc health Check(%q) = %v while ready", service, st)
		}
	}
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "no.such.Service"}); status.Code(err) != codes.NotFound {
		t.Fatalf("grpc health Check of an unknown service: %v", err)
	}

	// A Watch stream sends the status now and then each change.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	watch, err := health.Watch(wctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	next := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		resp, err := watch.Recv()
		if err != nil || resp.GetStatus() != want {
			t.Fatalf("grpc health Watch: %v (%v), want %v", resp.GetStatus(), err, want)
		}
	}
	next(healthpb.HealthCheckResponse_SERVING)

	// kill -9 the plugin; its restart waits at the gate.
	plugin := jsonlPlugin(p.Pid())
	if plugin == 0 {
		t.Fatalf("no jsonl plugin under serve (pid %d)", p.Pid())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The backend's probe may fail before the host has seen the process
	// exit; the plugin itself is reported down from then until its
	// restart, which the gate holds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, ct, r = readyz(t, p.addr)
		if code == http.StatusServiceUnavailable && r.down("plugin") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d 30 s after the plugin was killed", code)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ct != "application/problem+json" || !strings.Contains(r.Detail, "plugin jsonl") || r.Title != "not ready" {
		t.Fatalf("/readyz while the plugin is down: %q %+v", ct, r)
	}
	for _, c := range r.Checks {
		if c.Component == "plugin" && c.Code != "PLUGIN_UNAVAILABLE" {
			t.Fatalf("/readyz plugin check while it is down: %+v", c)
		}
	}
	if st := check(""); st != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("grpc health Check while the plugin is down: %v", st)
	}
	if code, _, _ := getHealth(t, p.addr, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz while the plugin is down: %d", code)
	}
	next(healthpb.HealthCheckResponse_NOT_SERVING)

	// The gate opens: the host's restart completes and serve is ready again.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	for {
		if code, _, _ = readyz(t, p.addr); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d 60 s after the gate opened:\n%s", code, p.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := check("logbook.v1.Sessions"); st != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("grpc health Check after the restart: %v", st)
	}
	if restarted := jsonlPlugin(p.Pid()); restarted == 0 || restarted == plugin {
		t.Fatalf("plugin pid after the restart: %d (killed %d)", restarted, plugin)
	}
	next(healthpb.HealthCheckResponse_SERVING)

	// Shutdown ends the Watch stream (Unavailable) rather than waiting
	// out the shutdown timeout (10 s) for it.
	start := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("grpc health Watch at shutdown: %v", err)
	}
	if err := p.wait(t); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, p.log())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("serve took %v to shut down with a Watch stream open", took)
	}
}
