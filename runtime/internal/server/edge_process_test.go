package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// edgeReq is one request of the Host and Origin tests, as a page or curl
// would send it.
type edgeReq struct {
	method, path string
	host         string // the Host header; "" = the address
	origin       string // the Origin header; "" = none
	ctype, body  string
	hdr          []string // more headers, name and value pairs
}

// edgeAnswer is the answer to an edgeReq.
type edgeAnswer struct {
	status int
	header http.Header
	body   []byte
}

// problemCode is the code of a problem+json body ("" if it is not one).
func (a edgeAnswer) problemCode() string {
	if a.header.Get("Content-Type") != "application/problem+json" {
		return ""
	}
	var p struct{ Code, Detail string }
	if json.Unmarshal(a.body, &p) != nil {
		return ""
	}
	return p.Code
}

// send sends q to the server at addr over a fresh connection.
func send(t *testing.T, addr string, q edgeReq) edgeAnswer {
	t.Helper()
	req, err := http.NewRequest(q.method, "http://"+addr+q.path, strings.NewReader(q.body))
	if err != nil {
		t.Fatal(err)
	}
	if q.host != "" {
		req.Host = q.host
	}
	if q.origin != "" {
		req.Header.Set("Origin", q.origin)
	}
	if q.ctype != "" {
		req.Header.Set("Content-Type", q.ctype)
	}
	for i := 0; i+1 < len(q.hdr); i += 2 {
		req.Header.Set(q.hdr[i], q.hdr[i+1])
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %q, Origin %q): %v", q.method, q.path, q.host, q.origin, err)
	}
	defer resp.Body.Close()
	var body []byte
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		if body, err = io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	return edgeAnswer{status: resp.StatusCode, header: resp.Header, body: body}
}

// startView runs `logbook view` on a fresh loopback port over the data
// directory dir with args and returns the host:port it prints; it is
// killed when the test ends.
func startView(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(logbookBin, append([]string{"view", "--data", dir, "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(s), "http://")
		if !ok {
			t.Fatalf("logbook view printed %q", s)
		}
		return strings.TrimSuffix(addr, "/")
	case <-time.After(serveTimeout):
		t.Fatal("logbook view printed no URL")
		return ""
	}
}

// routes a page could call: the /v1 API, a Connect procedure, the viewer
// page and the health and metrics routes.
var edgeRoutes = []edgeReq{
	{method: "GET", path: "/v1/sessions"},
	{method: "POST", path: "/logbook.v1.Sessions/List", ctype: "application/json", body: "{}"},
	{method: "GET", path: "/"},
	{method: "GET", path: "/healthz"},
	{method: "GET", path: "/readyz"},
	{method: "GET", path: "/metrics"},
}

// hostRefused checks that a request with Host host is refused with 403
// HOST_NOT_ALLOWED naming it, in the protocol's form.
func hostRefused(t *testing.T, addr string, q edgeReq) {
	t.Helper()
	a := send(t, addr, q)
	if a.status != http.StatusForbidden || a.header.Get("Logbook-Code") != "HOST_NOT_ALLOWED" || !strings.Contains(string(a.body), q.host) {
		t.Errorf("%s %s with Host %q: %d %s %q; want 403 HOST_NOT_ALLOWED naming the host", q.method, q.path, q.host, a.status, a.header.Get("Logbook-Code"), a.body)
		return
	}
	if strings.HasPrefix(q.path, "/logbook.v1.") {
		if !strings.Contains(string(a.body), `"code":"permission_denied"`) {
			t.Errorf("%s with Host %q: %q; want Connect's permission_denied", q.path, q.host, a.body)
		}
	} else if a.problemCode() != "HOST_NOT_ALLOWED" {
		t.Errorf("%s %s with Host %q: %s %q; want a problem+json", q.method, q.path, q.host, a.header.Get("Content-Type"), a.body)
	}
}

// A page on a name rebound to 127.0.0.1 reaches neither serve nor view:
// every route refuses its Host (403 HOST_NOT_ALLOWED, gRPC included),
// while localhost, its subdomains and the loopback IPs, with or without
// the port, pass.
func TestForeignHostRefused(t *testing.T) {
	dir := t.TempDir()
	targets := map[string]string{
		"serve": startServe(t, filepath.Join(dir, "serve")).addr,
		"view":  startView(t, filepath.Join(dir, "view")),
	}
	for name, addr := range targets {
		_, port, _ := net.SplitHostPort(addr)
		t.Run(name, func(t *testing.T) {
			for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.evil.example", "EVIL.example:" + port} {
				for _, q := range edgeRoutes {
					q.host = host
					hostRefused(t, addr, q)
				}
			}
			conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("evil.example:"+port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_, err = logbookv1.NewSessionsClient(conn).List(context.Background(), &logbookv1.SessionsListRequest{})
			if status.Code(err) != codes.PermissionDenied || reason(err) != "HOST_NOT_ALLOWED" {
				t.Errorf("gRPC with :authority evil.example: %v (%s); want PermissionDenied HOST_NOT_ALLOWED", err, reason(err))
			}
			for _, host := range []string{"localhost", "localhost:" + port, "x.localhost:" + port, "127.0.0.1", addr, "127.5.5.5:" + port, "[::1]:" + port, "[::1]"} {
				for _, q := range []edgeReq{{method: "GET", path: "/v1/sessions"}, {method: "GET", path: "/healthz"}, {method: "GET", path: "/"}} {
					q.host = host
					if a := send(t, addr, q); a.status != http.StatusOK {
						t.Errorf("%s %s with Host %q: %d %s", q.method, q.path, host, a.status, a.body)
					}
				}
			}
		})
	}
}

// On an IPv6 loopback listener the same rule holds: [::1] and localhost
// pass, a rebound name does not.
func TestForeignHostRefusedOnIPv6(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	ln.Close()
	p := startServe(t, t.TempDir(), "--addr", "[::1]:0")
	_, port, _ := net.SplitHostPort(p.addr)
	for _, host := range []string{"[::1]:" + port, "[::1]", "localhost:" + port, "127.0.0.1:" + port} {
		if a := send(t, p.addr, edgeReq{method: "GET", path: "/v1/sessions", host: host}); a.status != http.StatusOK {
			t.Errorf("Host %q on %s: %d %s", host, p.addr, a.status, a.body)
		}
	}
	hostRefused(t, p.addr, edgeReq{method: "GET", path: "/v1/sessions", host: "evil.example:" + port})
}

// serve { allowed_hosts } and --allowed-host add hosts (a name, a
// wildcard, a name on one port) to the defaults of serve and view; a bad
// flag value is refused before anything starts.
func TestAllowedHosts(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "hosts.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {\n  compression = \"zstd\"\n}\nserve {\n  allowed_hosts = [\"devbox.lan\"]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfg, "--allowed-host", "*.corp.test", "--allowed-host", "pinned.test:1234"}
	targets := map[string]string{
		"serve": startServe(t, filepath.Join(dir, "serve"), args...).addr,
		"view":  startView(t, filepath.Join(dir, "view"), args...),
	}
	for name, addr := range targets {
		_, port, _ := net.SplitHostPort(addr)
		t.Run(name, func(t *testing.T) {
			for _, host := range []string{"devbox.lan", "devbox.lan:" + port, "a.corp.test:" + port, "pinned.test:1234", "localhost:" + port} {
				if a := send(t, addr, edgeReq{method: "GET", path: "/v1/sessions", host: host}); a.status != http.StatusOK {
					t.Errorf("Host %q: %d %s", host, a.status, a.body)
				}
			}
			for _, host := range []string{"corp.test", "pinned.test:" + port, "a.devbox.lan", "evil.example"} {
				hostRefused(t, addr, edgeReq{method: "GET", path: "/v1/sessions", host: host})
			}
		})
	}
	out, err := exec.Command(logbookBin, "serve", "--data", dir, "--addr", "127.0.0.1:0", "--allowed-host", "bad host").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "USAGE") || !strings.Contains(string(out), "bad host") {
		t.Errorf("serve --allowed-host 'bad host': %v %s", err, out)
	}
	out, err = exec.Command(logbookBin, "view", "--data", dir, "--allowed-origin", "evil.example").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "USAGE") || !strings.Contains(string(out), "evil.example") {
		t.Errorf("view --allowed-origin evil.example: %v %s", err, out)
	}
}

// Off loopback, where the token is required, any Host passes by default;
// AllowedHosts narrows it to the names listed, even with the token.
func TestAllowedHostsNarrowOffLoopback(t *testing.T) {
	const token = "s3cret-token-0123456789"
	e := startEngine(t, headless(t.TempDir()))
	for _, c := range []struct {
		name    string
		allowed []string
		pass    []string
		refuse  []string
	}{
		{"any Host", nil, []string{"evil.example", "logbook.internal:7420", "localhost"}, nil},
		{"narrowed", []string{"logbook.internal"}, []string{"logbook.internal:7420", "LOGBOOK.internal"}, []string{"evil.example", "localhost:7420", "192.0.2.10:7420"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := server.New(newHost(e), server.Options{Verifier: operator(token), AllowedHosts: c.allowed})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ctx, fakeAddr{ln, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 7420}}) }()
			defer func() { cancel(); <-done }()
			auth := []string{"Authorization", "Bearer " + token}
			for _, host := range c.pass {
				if a := send(t, addr, edgeReq{method: "GET", path: "/v1/sessions", host: host, hdr: auth}); a.status != http.StatusOK {
					t.Errorf("Host %q with the token: %d %s", host, a.status, a.body)
				}
				if a := send(t, addr, edgeReq{method: "GET", path: "/v1/sessions", host: host}); a.status != http.StatusUnauthorized {
					t.Errorf("Host %q without the token: %d %s", host, a.status, a.body)
				}
			}
			for _, host := range c.refuse {
				hostRefused(t, addr, edgeReq{method: "GET", path: "/v1/sessions", host: host, hdr: auth})
			}
		})
	}
}

// noCORS fails the test when an answer carries a CORS header.
func noCORS(t *testing.T, what string, a edgeAnswer) {
	t.Helper()
	for k := range a.header {
		if strings.HasPrefix(k, "Access-Control-") {
			t.Errorf("%s: CORS header %s: %s", what, k, a.header.Get(k))
		}
	}
}

// A request that carries an Origin other than the server's own is refused
// (403 ORIGIN_NOT_ALLOWED) on every route, reads and event streams
// included, "null" too, and changes nothing; the own origin passes with
// http and https; no CORS header is ever sent without allowed origins.
func TestForeignOriginRefused(t *testing.T) {
	p := startServe(t, t.TempDir())
	addr := p.addr
	_, port, _ := net.SplitHostPort(addr)
	if a := send(t, addr, edgeReq{method: "POST", path: "/v1/sessions", ctype: "application/json", body: `{"id":"s"}`}); a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	if a := send(t, addr, edgeReq{method: "POST", path: "/v1/sessions/s/release", ctype: "application/json"}); a.status != http.StatusNoContent {
		t.Fatalf("release: %d %s", a.status, a.body)
	}
	writes := []edgeReq{
		{method: "GET", path: "/v1/sessions"},
		{method: "GET", path: "/v1/sessions/s/events?follow=true", hdr: []string{"Accept", "text/event-stream"}},
		{method: "POST", path: "/v1/sessions", ctype: "application/json", body: `{"id":"x"}`},
		{method: "POST", path: "/v1/sessions/s/hold", ctype: "application/json"},
		{method: "POST", path: "/v1/sessions/s/events", ctype: "application/x-ndjson", body: `{"type":"user/message","surfaceOp":"append","data":{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}}` + "\n"},
		{method: "DELETE", path: "/v1/sessions/s"},
		{method: "POST", path: "/logbook.v1.Sessions/Create", ctype: "application/json", body: `{"sessionId":"y"}`},
		{method: "POST", path: "/logbook.v1.Sessions/List", ctype: "application/json", body: `{}`},
		{method: "OPTIONS", path: "/v1/sessions", hdr: []string{"Access-Control-Request-Method", "POST"}},
		{method: "GET", path: "/"},
		{method: "GET", path: "/healthz"},
	}
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1", "http://localhost:" + port, "http://" + addr + ".evil.example"} {
		for _, q := range writes {
			q.origin = origin
			a := send(t, addr, q)
			if a.status != http.StatusForbidden || a.header.Get("Logbook-Code") != "ORIGIN_NOT_ALLOWED" || !strings.Contains(string(a.body), origin) {
				t.Errorf("%s %s from %s: %d %s %q; want 403 ORIGIN_NOT_ALLOWED naming the origin", q.method, q.path, origin, a.status, a.header.Get("Logbook-Code"), a.body)
			}
			noCORS(t, q.method+" "+q.path+" from "+origin, a)
		}
	}
	// Nothing changed: s alone, stored, with its length, no hold.
	a := send(t, addr, edgeReq{method: "GET", path: "/v1/sessions"})
	var list struct {
		Sessions []struct {
			ID   string
			Live bool
		}
	}
	if err := json.Unmarshal(a.body, &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != "s" || list.Sessions[0].Live {
		t.Fatalf("after the refused requests: %s (%v); want s alone, not live", a.body, err)
	}
	if a := send(t, addr, edgeReq{method: "POST", path: "/v1/sessions/s/hold", ctype: "application/json"}); a.status != http.StatusOK || !strings.Contains(string(a.body), `"changed":true`) {
		t.Errorf("a hold after the refused ones: %d %s; want changed (no hold was placed)", a.status, a.body)
	}
	// The own origin, whatever the scheme, passes, without CORS headers.
	for i, origin := range []string{"http://" + addr, "https://" + addr} {
		for _, q := range []edgeReq{
			{method: "GET", path: "/v1/sessions"},
			{method: "POST", path: "/v1/sessions", ctype: "application/json", body: `{"id":"own` + string(rune('a'+i)) + `"}`},
			{method: "POST", path: "/logbook.v1.Sessions/List", ctype: "application/json", body: `{}`},
		} {
			q.origin = origin
			a := send(t, addr, q)
			if a.status != http.StatusOK && a.status != http.StatusCreated {
				t.Errorf("%s %s from the own origin %s: %d %s", q.method, q.path, origin, a.status, a.body)
			}
			noCORS(t, q.method+" "+q.path+" from "+origin, a)
		}
	}
}

// An allowed origin (serve { allowed_origins }, --allowed-origin) gets
// CORS answers: its preflight names the methods and headers the API
// takes, its requests the origin and the headers a page may read; every
// other origin is still refused.
func TestAllowedOriginsGetCORS(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "origins.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {\n  compression = \"zstd\"\n}\nserve {\n  allowed_origins = [\"https://ui.example.com\"]\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, filepath.Join(dir, "data"), "--config", cfg, "--allowed-origin", "http://app.test:3000")
	addr := p.addr
	for _, origin := range []string{"http://app.test:3000", "https://ui.example.com"} {
		pre := send(t, addr, edgeReq{method: "OPTIONS", path: "/v1/sessions/s/hold", origin: origin,
			hdr: []string{"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization, content-type"}})
		h := pre.header
		if pre.status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != origin ||
			!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "DELETE") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Connect-Protocol-Version") || !strings.Contains(h.Get("Vary"), "Origin") {
			t.Errorf("preflight from %s: %d %v", origin, pre.status, h)
		}
		for _, q := range []edgeReq{
			{method: "GET", path: "/v1/sessions"},
			{method: "POST", path: "/logbook.v1.Sessions/List", ctype: "application/json", body: `{}`},
			{method: "GET", path: "/v1/sessions/none"},
		} {
			q.origin = origin
			a := send(t, addr, q)
			if a.status >= 500 || a.status == http.StatusForbidden || a.header.Get("Access-Control-Allow-Origin") != origin ||
				!strings.Contains(a.header.Get("Access-Control-Expose-Headers"), "Logbook-Code") || !strings.Contains(a.header.Get("Vary"), "Origin") {
				t.Errorf("%s %s from %s: %d %v", q.method, q.path, origin, a.status, a.header)
			}
		}
	}
	for _, q := range []edgeReq{
		{method: "GET", path: "/v1/sessions", origin: "http://evil.example"},
		{method: "OPTIONS", path: "/v1/sessions", origin: "http://app.test:3001", hdr: []string{"Access-Control-Request-Method", "POST"}},
		{method: "GET", path: "/v1/sessions", origin: "https://app.test:3000"},
	} {
		a := send(t, addr, q)
		if a.status != http.StatusForbidden || a.header.Get("Logbook-Code") != "ORIGIN_NOT_ALLOWED" || a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s %s from %s: %d %v", q.method, q.path, q.origin, a.status, a.header)
		}
	}
}
