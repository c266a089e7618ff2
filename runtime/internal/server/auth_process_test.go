package server_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/sdk"
)

// processGet GETs path of a running serve with the token ("" = none).
func processGet(t *testing.T, p *serveProcess, path, token string) (int, string) {
	t.Helper()
	return getAuthed(t, "http://"+p.addr, path, token)
}

// A real `logbook serve` with tokens in its store: every route but
// /healthz needs one, on loopback too; a read token may read but not
// write (403 whether the session exists or not); whoami names it; the
// --token-file token is an operator named token-file, which audit
// records name; a revoked token is refused within a second.
func TestServeChecksInOrder(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	store, err := auth.OpenStore(context.Background(), config.Headless(config.Overrides{DataDir: data}))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	reader, _, err := store.Create(context.Background(), auth.Token{Name: "ci-reader", Tenant: sdk.DefaultTenant, Role: auth.RoleRead})
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "token")
	if err := os.WriteFile(legacy, []byte("legacy-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, data, "--token-file", legacy)
	url := "http://" + p.addr

	for path, want := range map[string]int{
		"/healthz": http.StatusOK, "/readyz": http.StatusUnauthorized, "/v1/sessions": http.StatusUnauthorized,
		"/v1/whoami": http.StatusUnauthorized, "/grpc.health.v1.Health/Check": http.StatusUnauthorized,
	} {
		if code, body := processGet(t, p, path, ""); code != want {
			t.Errorf("GET %s without a token: %d %s, want %d", path, code, body, want)
		}
	}
	if code, body := processGet(t, p, "/readyz", reader); code != http.StatusOK {
		t.Errorf("/readyz with a read token: %d %s", code, body)
	}
	if code, body := processGet(t, p, "/v1/whoami", reader); code != http.StatusOK || strings.TrimSpace(body) != `{"name":"ci-reader","tenant":"default","role":"read"}` {
		t.Errorf("whoami with the read token: %d %s", code, body)
	}
	if code, body := processGet(t, p, "/v1/whoami", "legacy-token-0123456789"); code != http.StatusOK || strings.TrimSpace(body) != `{"name":"token-file","tenant":"default","role":"operator"}` {
		t.Errorf("whoami with the --token-file token: %d %s", code, body)
	}

	post := func(path, token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		code, _, b := do(t, req)
		return code, string(b)
	}
	if code, body := post("/v1/sessions", "legacy-token-0123456789", `{"id":"p1"}`); code != http.StatusCreated {
		t.Fatalf("create with the --token-file token: %d %s", code, body)
	}
	if code, body := post("/v1/sessions/p1/release", "legacy-token-0123456789", ``); code/100 != 2 {
		t.Fatalf("release: %d %s", code, body)
	}
	for _, id := range []string{"p1", "p-missing"} {
		if code, body := post("/v1/sessions/"+id+"/open", reader, ``); code != http.StatusForbidden || !strings.Contains(body, "PERMISSION_DENIED") {
			t.Errorf("open %s with the read token: %d %s", id, code, body)
		}
	}
	if code, body := post("/v1/sessions/p1/hold", "legacy-token-0123456789", `{"reason":"r"}`); code != http.StatusOK || !strings.Contains(body, `"by":"token-file"`) {
		t.Errorf("hold with the --token-file token: %d %s", code, body)
	}

	if err := store.Revoke(context.Background(), "ci-reader"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		code, _ := processGet(t, p, "/v1/sessions", reader)
		if code == http.StatusUnauthorized {
			break
		}
		if took := time.Since(revoked); took > time.Second {
			t.Fatalf("the revoked token still answers %d after %v", code, took)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
