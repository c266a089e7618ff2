package service_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// openServed opens a service over the memory backend with the given
// serve block and options, serves it on a loopback port until the test
// ends, and returns it with a client of its server.
func openServed(tb testing.TB, serveBlock string, o service.Options) (*service.Service, *client.Client) {
	tb.Helper()
	ctx := context.Background()
	cfg, err := config.Parse([]byte(serveBlock+"\npersistence \"memory\" {}"), "memory.hcl")
	if err != nil {
		tb.Fatal(err)
	}
	o.Config, o.Executable = cfg, logbookBin
	svc, err := service.Open(ctx, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { svc.Close(ctx) })
	srv, err := svc.NewServer(service.ServeOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	tb.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	c := client.New("http://"+ln.Addr().String(), client.Options{})
	tb.Cleanup(c.Close)
	return svc, c
}

// The server serves the service's own sessions: one a request made live is
// live in the service, one the service made live is served, and the serve
// block's idle_release releases both, which the service's Flush and
// Release then answer as released for idleness.
func TestServerSharesTheServicesSessions(t *testing.T) {
	ctx := context.Background()
	svc, c := openServed(t, "serve {\n  idle_release = \"1s\"\n}", service.Options{})
	wire, err := c.Create(ctx, "wire", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.Append(ctx, note, note); err != nil {
		t.Fatal(err)
	}
	create(t, svc, "local", 1)
	if n, err := c.Session("local").Len(ctx); err != nil || n != 1 {
		t.Fatalf("the server's length of the service's session: %d, %v; want 1", n, err)
	}
	for _, id := range []string{"wire", "local"} {
		if st, err := svc.Stat(ctx, id); err != nil || !st.Live {
			t.Fatalf("Stat(%s) = %+v, %v; want live", id, st, err)
		}
	}
	// The idle release runs on a ticker of a quarter of idle_release:
	// wait for it to release both. List does not use a session (Stat
	// would, and so keep it from the idle release).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		entries, err := svc.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, e := range entries {
			if e.Live {
				live++
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still live 30 s after an idle_release of 1 s: %+v", live, entries)
		}
	}
	for _, id := range []string{"wire", "local"} {
		if _, err := svc.Flush(ctx, id); err != nil {
			t.Errorf("Flush(%s) after the server's idle release: %v; want its final flush", id, err)
		}
		if err := svc.Release(ctx, id); err != nil {
			t.Errorf("Release(%s) after the server's idle release: %v; want nil", id, err)
		}
	}
}

// The server of a read-only service writes nothing: a create through it
// is SESSION_READ_ONLY and makes nothing live.
func TestReadOnlyServiceServesReadsOnly(t *testing.T) {
	ctx := context.Background()
	svc, c := openServed(t, "", service.Options{ReadOnly: true})
	_, err := c.Create(ctx, "s", events.CreateOptions{})
	requireCode(t, err, sdk.CodeSessionReadOnly)
	if _, err := svc.Stat(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("Stat after a refused create: %v; want SESSION_NOT_FOUND", err)
	}
}

// MetricsHandler serves, with Options.Metrics, the store's measurements
// in Prometheus's text format; without it, it is nil.
func TestMetricsHandler(t *testing.T) {
	if h := openMemory(t).MetricsHandler(); h != nil {
		t.Fatal("MetricsHandler without Options.Metrics is not nil")
	}
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "memory.hcl")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin, Metrics: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(ctx) })
	create(t, svc, "s", 3)
	rec := httptest.NewRecorder()
	svc.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d, Content-Type %q; want 200 and text/plain", rec.Code, rec.Header().Get("Content-Type"))
	}
	body := rec.Body.String()
	for _, want := range []string{"\nlogbook_appended_events_total 3\n", "\nlogbook_live_sessions 1\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics lack %q:\n%s", strings.TrimSpace(want), body)
		}
	}
}
