package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// tenantTokens are the credentials of the tenancy tests: three roles in
// tenant a, a writer in b, and an operator.
var tenantTokens = tokens{
	"tok-read-a":  {Name: "reader-a", Tenant: "a", Role: auth.RoleRead},
	"tok-write-a": {Name: "writer-a", Tenant: "a", Role: auth.RoleWrite},
	"tok-admin-a": {Name: "admin-a", Tenant: "a", Role: auth.RoleAdmin},
	"tok-write-b": {Name: "writer-b", Tenant: "b", Role: auth.RoleWrite},
	"tok-op":      {Name: "op", Tenant: auth.AllTenants, Role: auth.RoleOperator},
}

// serveTenants serves the implicit tenant and tenants a and b, each on a
// host of its own engine over its own directory (as apart as two tenant
// views of one backend), with tenantTokens; any other tenant is
// CONFIG_INVALID, as on a backend without tenancy.
func serveTenants(t *testing.T, o server.Options) *running {
	t.Helper()
	dir := t.TempDir()
	hosts := map[string]*host.Host{}
	for _, name := range []string{"a", "b"} {
		hosts[name] = newHost(startEngine(t, headless(filepath.Join(dir, name))))
	}
	o.Verifier = tenantTokens
	o.Tenant = func(name string) (*host.Host, error) {
		if h, ok := hosts[name]; ok {
			return h, nil
		}
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "tenant", "no tenant %q here", name)
	}
	return serve(t, startEngine(t, headless(filepath.Join(dir, "default"))), o)
}

// call sends one request to r with the bearer token (none when "") and
// the header pairs, and returns the answer.
func call(t *testing.T, r *running, method, path, token, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

// codeOf is the logbook code of an answer: its Logbook-Code header, or the
// problem's code.
func codeOf(hdr http.Header, body []byte) string {
	if c := hdr.Get("Logbook-Code"); c != "" {
		return c
	}
	var p struct {
		Code string `json:"code"`
	}
	_ = json.Unmarshal(body, &p)
	return p.Code
}

// The checks run in order on every kind of route: the Host (403
// HOST_NOT_ALLOWED) before the credential (401 UNAUTHENTICATED, loopback
// included, /healthz excepted), the credential before the role (403
// PERMISSION_DENIED), the role before the tenant and before any session
// is looked up: a read token on a write route gets the same answer
// whether the session exists or not.
func TestChecksInOrder(t *testing.T) {
	r := serveTenants(t, server.Options{Metrics: metrics.New()})
	if code, _, body := call(t, r, "POST", "/v1/sessions", "tok-write-a", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create s1 in a: %d %s", code, body)
	}
	kinds := []struct {
		name         string
		method, path string
		body         string
	}{
		{"v1 write", "POST", "/v1/sessions/%s/flush", ""},
		{"v1 admin", "DELETE", "/v1/sessions/%s", ""},
		{"connect write", "POST", "/logbook.v1.Sessions/Flush", `{"sessionId":"%s"}`},
		{"connect admin", "POST", "/logbook.v1.Sessions/Delete", `{"sessionId":"%s"}`},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			req := func(id, token string, header ...string) (int, string, []byte) {
				path, body := k.path, k.body
				if strings.Contains(path, "%s") {
					path = strings.Replace(path, "%s", id, 1)
				} else {
					body = strings.Replace(body, "%s", id, 1)
				}
				code, hdr, b := call(t, r, k.method, path, token, body, header...)
				return code, codeOf(hdr, b), b
			}
			if code, c, b := req("s1", "tok-read-a", "Host", "evil.example"); code != http.StatusForbidden || c != string(sdk.CodeHostNotAllowed) {
				t.Errorf("bad Host: %d %s %s", code, c, b)
			}
			if code, c, b := req("s1", "", "Host", "evil.example"); code != http.StatusForbidden || c != string(sdk.CodeHostNotAllowed) {
				t.Errorf("bad Host without a token: %d %s %s (the Host goes first)", code, c, b)
			}
			for _, tok := range []string{"", "tok-unknown"} {
				if code, _, b := req("s1", tok); code != http.StatusUnauthorized {
					t.Errorf("token %q: %d %s", tok, code, b)
				}
			}
			code, c, exists := req("s1", "tok-read-a")
			_, _, missing := req("s1-missing", "tok-read-a")
			if code != http.StatusForbidden || c != string(sdk.CodePermissionDenied) {
				t.Errorf("read token: %d %s %s", code, c, exists)
			}
			if !bytes.Equal(exists, bytes.ReplaceAll(missing, []byte("s1-missing"), []byte("s1"))) {
				t.Errorf("read token: the answer for an existing session differs from a missing one's:\n%s\n%s", exists, missing)
			}
			// PERMISSION_DENIED also before a bad tenant name and before
			// the tenant's resolution.
			if code, c, b := req("s1", "tok-read-a", "Logbook-Tenant", "NOT A NAME"); code != http.StatusForbidden || c != string(sdk.CodePermissionDenied) {
				t.Errorf("read token naming a bad tenant: %d %s %s", code, c, b)
			}
		})
	}
	// Every route but /healthz needs a credential on loopback once one
	// is configured; the role of the health and metrics routes is read.
	for path, want := range map[string]int{
		server.HealthzPath:             http.StatusOK,
		server.ReadyzPath:              http.StatusUnauthorized,
		server.MetricsPath:             http.StatusUnauthorized,
		"/grpc.health.v1.Health/Check": http.StatusUnauthorized,
		"/v1/openapi.json":             http.StatusUnauthorized,
		"/v1/whoami":                   http.StatusUnauthorized,
	} {
		if code, _, b := call(t, r, "GET", path, "", ""); code != want {
			t.Errorf("GET %s without a token: %d, want %d: %s", path, code, want, b)
		}
	}
	for _, path := range []string{server.ReadyzPath, server.MetricsPath, "/v1/openapi.json", "/v1/whoami"} {
		if code, _, b := call(t, r, "GET", path, "tok-read-a", ""); code != http.StatusOK {
			t.Errorf("GET %s with a read token: %d %s", path, code, b)
		}
	}
	// gRPC: the same refusals in its own form.
	rpc := logbookv1connect.NewSessionsClient(http.DefaultClient, r.url, connect.WithGRPC())
	ctx := context.Background()
	for tok, want := range map[string]connect.Code{"": connect.CodeUnauthenticated, "tok-read-a": connect.CodePermissionDenied} {
		req := connect.NewRequest(&logbookv1.SessionsFlushRequest{SessionId: "s1"})
		if tok != "" {
			req.Header().Set("Authorization", "Bearer "+tok)
		}
		if _, err := rpc.Flush(ctx, req); connect.CodeOf(err) != want {
			t.Errorf("gRPC Flush with %q: %v, want %v", tok, err, want)
		}
	}
	// Nothing was deleted by the refused calls.
	if code, _, body := call(t, r, "GET", "/v1/sessions/s1", "tok-read-a", ""); code != http.StatusOK {
		t.Fatalf("s1 after the refusals: %d %s", code, body)
	}
}

// A request runs on its credential's tenant only: another tenant's
// session is SESSION_NOT_FOUND with exactly the body of a missing one, on
// /v1 and on logbook.v1.Sessions; the same id in two tenants is two
// sessions.
func TestTenantIsolation(t *testing.T) {
	r := serveTenants(t, server.Options{})
	// Reads on both APIs, and a flush (SESSION_NOT_LIVE when not live).
	routes := []struct{ method, path, body string }{
		{"GET", "/v1/sessions/s1", ""},
		{"GET", "/v1/sessions/s1/events", ""},
		{"POST", "/v1/sessions/s1/flush", ""},
		{"POST", "/logbook.v1.Sessions/Header", `{"sessionId":"s1"}`},
		{"POST", "/logbook.v1.Sessions/Inspect", `{"sessionId":"s1"}`},
	}
	type answer struct {
		code int
		body string
	}
	before := map[string]answer{}
	for _, rt := range routes {
		code, _, b := call(t, r, rt.method, rt.path, "tok-write-b", rt.body)
		before[rt.path] = answer{code, string(b)}
		if rt.method == "GET" && code != http.StatusNotFound {
			t.Errorf("%s %s of a missing session: %d %s", rt.method, rt.path, code, b)
		}
	}
	if code, _, body := call(t, r, "POST", "/v1/sessions", "tok-write-a", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create s1 in a: %d %s", code, body)
	}
	for _, rt := range routes {
		code, _, b := call(t, r, rt.method, rt.path, "tok-write-b", rt.body)
		if got := (answer{code, string(b)}); got != before[rt.path] {
			t.Errorf("%s %s of a's session as b: %d %s\nwant exactly the answer of a missing one: %d %s", rt.method, rt.path, got.code, got.body, before[rt.path].code, before[rt.path].body)
		}
	}
	if code, _, b := call(t, r, "GET", "/v1/sessions", "tok-write-b", ""); code != http.StatusOK || strings.Contains(string(b), `"s1"`) {
		t.Errorf("b's list shows a's session: %d %s", code, b)
	}
	if code, _, b := call(t, r, "GET", "/v1/sessions", "tok-read-a", ""); code != http.StatusOK || !strings.Contains(string(b), `"s1"`) {
		t.Errorf("a's list lacks its session: %d %s", code, b)
	}
	// The same id in b is another session.
	if code, _, body := call(t, r, "POST", "/v1/sessions", "tok-write-b", `{"id":"s1"}`); code != http.StatusCreated {
		t.Fatalf("create s1 in b: %d %s", code, body)
	}
	// The implicit tenant has neither.
	if code, _, b := call(t, r, "GET", "/v1/sessions/s1", "tok-op", ""); code != http.StatusNotFound {
		t.Errorf("s1 in the implicit tenant: %d %s", code, b)
	}
}

// An operator addresses any tenant with ?tenant= on /v1 and Logbook-Tenant
// on logbook.v1.Sessions; anyone else may name only its own (403
// PERMISSION_DENIED otherwise); a name that is not one is 400
// TENANT_INVALID; a tenant the server cannot make is its error.
func TestOperatorNamesATenant(t *testing.T) {
	r := serveTenants(t, server.Options{})
	if code, _, body := call(t, r, "POST", "/v1/sessions?tenant=a", "tok-op", `{"id":"op1"}`); code != http.StatusCreated {
		t.Fatalf("operator creates op1 in a: %d %s", code, body)
	}
	if code, _, b := call(t, r, "GET", "/v1/sessions/op1", "tok-read-a", ""); code != http.StatusOK {
		t.Errorf("a reads the operator's op1: %d %s", code, b)
	}
	if code, _, b := call(t, r, "POST", "/logbook.v1.Sessions/Header", "tok-op", `{"sessionId":"op1"}`, "Logbook-Tenant", "a"); code != http.StatusOK {
		t.Errorf("operator's Header with Logbook-Tenant a: %d %s", code, b)
	}
	if code, _, b := call(t, r, "POST", "/logbook.v1.Sessions/Header", "tok-op", `{"sessionId":"op1"}`); code != http.StatusNotFound {
		t.Errorf("operator's Header without a tenant (the implicit one): %d %s", code, b)
	}
	for _, c := range []struct {
		name, method, path, token, body string
		header                          []string
		status                          int
		code                            sdk.Code
	}{
		{"own tenant named", "GET", "/v1/sessions/op1?tenant=a", "tok-read-a", "", nil, http.StatusOK, ""},
		{"own tenant in the header", "POST", "/logbook.v1.Sessions/Header", "tok-read-a", `{"sessionId":"op1"}`, []string{"Logbook-Tenant", "a"}, http.StatusOK, ""},
		{"another tenant on /v1", "GET", "/v1/sessions/op1?tenant=b", "tok-read-a", "", nil, http.StatusForbidden, sdk.CodePermissionDenied},
		{"the implicit tenant on /v1", "GET", "/v1/sessions?tenant=default", "tok-write-b", "", nil, http.StatusForbidden, sdk.CodePermissionDenied},
		{"another tenant by header", "POST", "/logbook.v1.Sessions/Header", "tok-write-b", `{"sessionId":"op1"}`, []string{"Logbook-Tenant", "a"}, http.StatusForbidden, sdk.CodePermissionDenied},
		{"bad name on /v1", "GET", "/v1/sessions?tenant=Nope", "tok-op", "", nil, http.StatusBadRequest, sdk.CodeTenantInvalid},
		{"bad name by header", "POST", "/logbook.v1.Sessions/List", "tok-op", `{}`, []string{"Logbook-Tenant", "a_b"}, http.StatusBadRequest, sdk.CodeTenantInvalid},
		{"empty name", "GET", "/v1/sessions?tenant=", "tok-op", "", nil, http.StatusBadRequest, sdk.CodeTenantInvalid},
		{"a tenant the backend cannot make", "GET", "/v1/sessions?tenant=zz", "tok-op", "", nil, http.StatusUnprocessableEntity, sdk.CodeConfigInvalid},
	} {
		code, hdr, b := call(t, r, c.method, c.path, c.token, c.body, c.header...)
		if code != c.status || c.code != "" && codeOf(hdr, b) != string(c.code) {
			t.Errorf("%s: %d %s %s; want %d %s", c.name, code, codeOf(hdr, b), b, c.status, c.code)
		}
	}
	// gRPC carries the header as metadata logbook-tenant.
	rpc := logbookv1connect.NewSessionsClient(http.DefaultClient, r.url, connect.WithGRPC())
	req := connect.NewRequest(&logbookv1.SessionsHeaderRequest{SessionId: "op1"})
	req.Header().Set("Authorization", "Bearer tok-op")
	req.Header().Set("Logbook-Tenant", "a")
	if _, err := rpc.Header(context.Background(), req); err != nil {
		t.Errorf("gRPC Header with logbook-tenant a: %v", err)
	}
}

// GET /v1/whoami answers the credential's name and role and the tenant
// the request runs on; without credentials, "" and operator of default.
func TestWhoami(t *testing.T) {
	r := serveTenants(t, server.Options{})
	for _, c := range []struct{ token, query, want string }{
		{"tok-read-a", "", `{"name":"reader-a","tenant":"a","role":"read"}`},
		{"tok-admin-a", "?tenant=a", `{"name":"admin-a","tenant":"a","role":"admin"}`},
		{"tok-write-b", "", `{"name":"writer-b","tenant":"b","role":"write"}`},
		{"tok-op", "", `{"name":"op","tenant":"default","role":"operator"}`},
		{"tok-op", "?tenant=b", `{"name":"op","tenant":"b","role":"operator"}`},
	} {
		code, _, b := call(t, r, "GET", "/v1/whoami"+c.query, c.token, "")
		if code != http.StatusOK || strings.TrimSpace(string(b)) != c.want {
			t.Errorf("whoami%s as %s: %d %s, want %s", c.query, c.token, code, b, c.want)
		}
	}
	open := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	if code, _, b := call(t, open, "GET", "/v1/whoami", "", ""); code != http.StatusOK || strings.TrimSpace(string(b)) != `{"name":"","tenant":"default","role":"operator"}` {
		t.Errorf("whoami without credentials: %d %s", code, b)
	}
}

// GET /v1/tenants answers an operator the tenants of Options.Tenants,
// whichever tenant it names; every other role gets 403 PERMISSION_DENIED,
// its own tenant named or not. Without Options.Tenants (and without
// credentials) the list is the implicit tenant alone.
func TestListTenants(t *testing.T) {
	r := serveTenants(t, server.Options{Tenants: func(context.Context) ([]string, error) {
		return []string{"default", "a", "b"}, nil
	}})
	for _, q := range []string{"", "?tenant=b"} {
		code, _, b := call(t, r, "GET", "/v1/tenants"+q, "tok-op", "")
		if want := `{"tenants":["default","a","b"]}`; code != http.StatusOK || strings.TrimSpace(string(b)) != want {
			t.Errorf("tenants%s as the operator: %d %s, want %s", q, code, b, want)
		}
	}
	for _, tok := range []string{"tok-read-a", "tok-write-a", "tok-admin-a", "tok-write-b"} {
		for _, q := range []string{"", "?tenant=a"} {
			code, hdr, b := call(t, r, "GET", "/v1/tenants"+q, tok, "")
			if code != http.StatusForbidden || codeOf(hdr, b) != "PERMISSION_DENIED" {
				t.Errorf("tenants%s as %s: %d %s, want 403 PERMISSION_DENIED", q, tok, code, b)
			}
		}
	}
	open := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	if code, _, b := call(t, open, "GET", "/v1/tenants", "", ""); code != http.StatusOK || strings.TrimSpace(string(b)) != `{"tenants":["default"]}` {
		t.Errorf("tenants without credentials or a tenant list: %d %s", code, b)
	}
}

// The audit records of a request's changes name its credential (by), on
// /v1 and on logbook.v1.Sessions; without credentials they say "api".
func TestAuditByTheCredential(t *testing.T) {
	r := serveTenants(t, server.Options{})
	for _, id := range []string{"h1", "h2"} {
		if code, _, body := call(t, r, "POST", "/v1/sessions", "tok-write-a", `{"id":"`+id+`"}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, code, body)
		}
		if code, _, body := call(t, r, "POST", "/v1/sessions/"+id+"/release", "tok-write-a", ""); code/100 != 2 {
			t.Fatalf("release %s: %d %s", id, code, body)
		}
	}
	if code, _, b := call(t, r, "POST", "/v1/sessions/h1/hold", "tok-admin-a", `{"reason":"case 7"}`); code != http.StatusOK || !strings.Contains(string(b), `"by":"admin-a"`) {
		t.Errorf("hold on /v1: %d %s", code, b)
	}
	if code, _, b := call(t, r, "POST", "/logbook.v1.Sessions/Hold", "tok-op", `{"sessionId":"h2","reason":"case 8"}`, "Logbook-Tenant", "a"); code != http.StatusOK || !strings.Contains(string(b), `"by":"op"`) {
		t.Errorf("Hold on Connect: %d %s", code, b)
	}
	open := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	if code, _, body := call(t, open, "POST", "/v1/sessions", "", `{"id":"h3"}`); code != http.StatusCreated {
		t.Fatalf("create h3: %d %s", code, body)
	}
	if code, _, body := call(t, open, "POST", "/v1/sessions/h3/release", "", ""); code/100 != 2 {
		t.Fatalf("release h3: %d %s", code, body)
	}
	if code, _, b := call(t, open, "POST", "/v1/sessions/h3/hold", "", `{}`); code != http.StatusOK || !strings.Contains(string(b), `"by":"`+sdk.ByAPI+`"`) {
		t.Errorf("hold without credentials: %d %s", code, b)
	}
}

// /metrics names no session and no tenant, whatever the requests did.
func TestMetricsNameNoSessionNorTenant(t *testing.T) {
	r := serveTenants(t, server.Options{Metrics: metrics.New()})
	const id = "secret-session-id-42"
	for _, tok := range []string{"tok-write-a", "tok-write-b"} {
		if code, _, body := call(t, r, "POST", "/v1/sessions", tok, `{"id":"`+id+`"}`); code != http.StatusCreated {
			t.Fatalf("create: %d %s", code, body)
		}
		call(t, r, "GET", "/v1/sessions/"+id+"/events", tok, "")
		call(t, r, "GET", "/v1/sessions/missing-"+id, tok, "")
		call(t, r, "POST", "/logbook.v1.Sessions/Header", tok, `{"sessionId":"`+id+`"}`)
	}
	call(t, r, "GET", "/v1/sessions?tenant=zz", "tok-op", "")
	call(t, r, "GET", "/v1/sessions?tenant=b", "tok-write-a", "")
	code, body := getMetrics(t, r.url, "tok-op")
	if code != http.StatusOK || !strings.Contains(body, "logbook_http_requests_total") {
		t.Fatalf("/metrics: %d %.300s", code, body)
	}
	for _, secret := range []string{id, `"a"`, `"b"`, `"zz"`, "tenant"} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics shows %s:\n%s", secret, body)
		}
	}
}
