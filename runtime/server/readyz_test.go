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
	"github.com/seed-e5e476df/logbook/runtime/engine"
	"github.com/seed-e5e476df/logbook/runtime/server"
)

// serveOn runs a server for e on ln until the test ends.
func serveOn(t *testing.T, srv *server.Server, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
}

// getReady GETs /readyz at url, with the token when it is not "".
func getReady(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	code, _, body := do(t, req)
	return code, string(body)
}

// Off loopback /readyz and grpc.health.v1 need the token, from every
// peer (here a peer on loopback itself); /healthz does not.
func TestReadyzNeedsTheTokenOffLoopback(t *testing.T) {
	const token = "readyz-token-0123456789"
	e := startEngine(t, headless(t.TempDir()))
	srv, err := server.New(e, server.Options{Addr: "0.0.0.0:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, ln)
	url := fmt.Sprintf("http://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port)
	for path, want := range map[string]int{
		"/healthz":                     http.StatusOK,
		"/readyz":                      http.StatusUnauthorized,
		"/grpc.health.v1.Health/Check": http.StatusUnauthorized,
		"/metrics":                     http.StatusUnauthorized,
		"/logbook.v1.Sessions/List":    http.StatusUnauthorized,
	} {
		req, err := http.NewRequest(http.MethodGet, url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if code, _, _ := do(t, req); code != want {
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
	const token = "readyz-token-0123456789"
	r := serve(t, e, server.Options{Token: token})
	if code, body := getReady(t, r.url, ""); code != http.StatusOK {
		t.Fatalf("/readyz with the database up: %d %s", code, body)
	}

	// Once the database is cut off, the probe's error names what it
	// failed to connect to (an authenticated caller sees it) ...
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
	// ... and an unauthenticated caller sees only what is not ready.
	code, body := getReady(t, r.url, "")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "not ready") || !strings.Contains(body, "backend postgres") {
		t.Fatalf("/readyz with the database down: %d %s", code, body)
	}
	for _, secret := range []string{user, "dbname", "database", "test", addr.String(), fmt.Sprint(addr.Port), "127.0.0.1"} {
		if strings.Contains(body, secret) {
			t.Errorf("the unauthenticated /readyz body shows %q: %s\n(with the token: %s)", secret, body, detailed)
		}
	}
}
