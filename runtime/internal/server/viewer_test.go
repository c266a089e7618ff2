package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// With Options.Viewer, the paths no other route takes are the viewer's:
// their GET and HEAD need no token (the page must load to ask for it),
// while /v1, the Sessions API and any other method still do.
func TestViewerMountedWithoutToken(t *testing.T) {
	const token = "s3cret-token-0123456789"
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "viewer "+r.Method+" "+r.URL.Path)
	})
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{Verifier: operator(token), Viewer: page})
	get := func(method, path, tok string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, r.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/", "/assets/app.js", "/index.html"} {
		if code, body := get("GET", p, ""); code != http.StatusOK || body != "viewer GET "+p {
			t.Errorf("GET %s without a token: %d %q", p, code, body)
		}
	}
	if code, _ := get("HEAD", "/", ""); code != http.StatusOK {
		t.Errorf("HEAD / without a token: %d", code)
	}
	if code, body := get("POST", "/", ""); code != http.StatusUnauthorized {
		t.Errorf("POST / without a token: %d %q", code, body)
	}
	if code, body := get("GET", "/v1/sessions", ""); code != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("GET /v1/sessions without a token: %d %q", code, body)
	}
	if code, _ := get("GET", "/v1/sessions", token); code != http.StatusOK {
		t.Errorf("GET /v1/sessions with the token: %d", code)
	}
	if code, _ := get("GET", "/v1/no-such-route", ""); code != http.StatusUnauthorized {
		t.Errorf("an unknown /v1 route without a token: %d", code)
	}
	if code, _ := get("GET", "/logbook.v1.Sessions/List", ""); code != http.StatusUnauthorized {
		t.Errorf("the Sessions API by GET without a token: %d", code)
	}
}

// Without Options.Viewer, / is not served.
func TestNoViewer(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	resp, err := http.Get(r.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET / without a viewer: %d", resp.StatusCode)
	}
}
