package viewer_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/viewer"
)

// The handler serves the page at / and its assets, each with its media
// type, the security headers and an ETag that answers 304; other paths are
// 404 and other methods 405.
func TestHandler(t *testing.T) {
	h := viewer.Handler()
	do := func(method, path string, hdr map[string]string) *http.Response {
		req := httptest.NewRequest(method, path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	resp := do("GET", "/", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(string(body), `<main id="app">`) {
		t.Fatalf("GET /: %d %v %.200s", resp.StatusCode, resp.Header, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	for _, ref := range []string{"./assets/app.js", "./assets/index.css"} {
		if !strings.Contains(string(body), ref) {
			t.Errorf("index.html does not load %s", ref)
		}
	}
	for path, ctype := range map[string]string{"/assets/app.js": "text/javascript; charset=utf-8", "/assets/index.css": "text/css; charset=utf-8"} {
		resp := do("GET", path, nil)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ctype {
			t.Errorf("GET %s: %d %q", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		etag := resp.Header.Get("ETag")
		if again := do("GET", path, map[string]string{"If-None-Match": etag}); etag == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match %s: %d", path, etag, again.StatusCode)
		}
	}
	if resp := do("GET", "/no-such-file", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /no-such-file: %d", resp.StatusCode)
	}
	if resp := do("POST", "/", nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d %v", resp.StatusCode, resp.Header)
	}
}

// The embedded build holds the page and the files it names, nothing that
// would load from elsewhere.
func TestFSSelfContained(t *testing.T) {
	err := fs.WalkDir(viewer.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(viewer.FS(), p)
		if err != nil {
			return err
		}
		for _, ext := range []string{"https://", "http://"} {
			if i := strings.Index(string(b), ext); i >= 0 && !strings.HasPrefix(string(b[i:]), "http://www.w3.org/") {
				t.Errorf("%s refers to %.60s", p, b[i:])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
