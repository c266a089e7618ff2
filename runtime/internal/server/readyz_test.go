package server_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

// getAuthed GETs path at url, with the token when it is not "".
func getAuthed(t *testing.T, url, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, _, body := do(t, req)
	return code, string(body)
}

// getReady GETs /readyz at url, with the token when it is not "".
func getReady(t *testing.T, url, token string) (int, string) {
	t.Helper()
	return getAuthed(t, url, server.ReadyzPath, token)
}

// serveOffLoopback serves e on a loopback port that the server takes for
// an address others can reach (fakeAddr), until the test ends, and
// returns its URL.
func serveOffLoopback(t *testing.T, e *engine.Engine, o server.Options) string {
	t.Helper()
	srv, err := server.New(newHost(e), o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, fakeAddr{ln, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 7420}}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + ln.Addr().String()
}

// Off loopback /readyz, grpc.health.v1 and /metrics need the token, from
// every peer (here a peer on loopback itself); /healthz does not.
func TestReadyzNeedsTheTokenOffLoopback(t *testing.T) {
	const token = "readyz-token-0123456789"
	e := startEngine(t, headless(t.TempDir()))
	url := serveOffLoopback(t, e, server.Options{Verifier: operator(token)})
	for path, want := range map[string]int{
		server.HealthzPath:             http.StatusOK,
		server.ReadyzPath:              http.StatusUnauthorized,
		"/grpc.health.v1.Health/Check": http.StatusUnauthorized,
		server.MetricsPath:             http.StatusUnauthorized,
		"/logbook.v1.Sessions/List":    http.StatusUnauthorized,
	} {
		if code, _ := getAuthed(t, url, path, ""); code != want {
			t.Errorf("GET %s without the token off loopback: %d, want %d", path, code, want)
		}
	}
	if code, body := getReady(t, url, token); code != http.StatusOK {
		t.Errorf("/readyz with the token: %d %s", code, body)
	}
}

// pgProxy forwards TCP connections on a loopback port to the PostgreSQL
// of dsn's unix socket directory until cut is called, which closes the
// listener and every connection: the database is then unreachable at the
// proxy's address.
type pgProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startPGProxy(t *testing.T, socket string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *pgProxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// With PostgreSQL as the primary and the database unreachable, /readyz
// is 503 naming the backend, and its body without the token holds no
// connection detail (user, database, host:port); with the token it does.
func TestReadyzHidesConnectionDetails(t *testing.T) {
	dsn := pgtest.DSN(t)
	const socketDir = "/var/run/postgresql"
	if !strings.Contains(dsn, "host="+socketDir) {
		t.Skipf("the proxy forwards to the local socket %s; LOGBOOK_TEST_PG_DSN is %q", socketDir, dsn)
	}
	proxy := startPGProxy(t, socketDir+"/.s.PGSQL.5432")
	addr := proxy.ln.Addr().(*net.TCPAddr)
	const user = "readyz_secret_user"
	tcpDSN := fmt.Sprintf("host=127.0.0.1 port=%d dbname=test user=%s sslmode=disable connect_timeout=1", addr.Port, user)
	conn := pgtest.Conn(t, dsn)
	if _, err := conn.Exec(context.Background(), "CREATE ROLE "+user+" LOGIN SUPERUSER"); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+user) })
	cfg, err := config.Parse([]byte(fmt.Sprintf("persistence \"postgres\" {\n  dsn = %q\n  schema = %q\n}\n", tcpDSN, pgtest.Schema(t, dsn))), "pg.hcl")
	if err != nil {
		t.Fatal(err)
	}
	e := startEngine(t, cfg)
	const token, reader = "readyz-token-0123456789", "readyz-reader-0123456789"
	verifier := operator(token)
	verifier[reader] = auth.Principal{Name: "reader", Tenant: sdk.DefaultTenant, Role: auth.RoleRead}
	r := serve(t, e, server.Options{Verifier: verifier})
	if code, body := getReady(t, r.url, reader); code != http.StatusOK {
		t.Fatalf("/readyz with the database up: %d %s", code, body)
	}

	// Once the database is cut off, the probe's error names what it
	// failed to connect to (an operator sees it) ...
	proxy.cut()
	var detailed string
	for deadline := time.Now().Add(engine.ProbeTTL + engine.ProbeTimeout + 20*time.Second); ; {
		code, body := getReady(t, r.url, token)
		if code == http.StatusServiceUnavailable && strings.Contains(body, user) && strings.Contains(body, addr.String()) {
			detailed = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz with the token never named the database: %d %s", code, body)
		}
	}
	// ... and any other credential sees only what is not ready.
	code, body := getReady(t, r.url, reader)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") || !strings.Contains(body, "backend postgres") {
		t.Fatalf("/readyz with the database down: %d %s", code, body)
	}
	for _, secret := range []string{user, "dbname", "database", "test", addr.String(), fmt.Sprint(addr.Port), "127.0.0.1"} {
		if strings.Contains(body, secret) {
			t.Errorf("the reader's /readyz body shows %q: %s\n(with the token: %s)", secret, body, detailed)
		}
	}
}
