// Package viewer is the web viewer `logbook serve` mounts at /: a single
// page (TypeScript, built by Vite from viewer/src) that reads the /v1 API
// of its own origin and shows the sessions, a session's timeline, the
// surface, compactions, repairs and forks. The built files under static/
// are committed and embedded, so building logbook needs no Node.js;
// .ci/check-viewer rebuilds them from a clean npm ci and fails when they
// differ.
package viewer

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed static
var static embed.FS

// FS returns the built viewer: index.html and assets/.
func FS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has static/
	}
	return sub
}

// file is one embedded file with its validator.
type file struct {
	body  []byte
	etag  string
	ctype string
}

// The security headers of every answer: the page loads nothing but its own
// files and talks to nothing but its own origin.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
}

// Handler serves the viewer: GET or HEAD of / (index.html) and of its
// assets, each with an ETag (the page revalidates, so a new build shows at
// once); any other path is 404, any other method 405. It holds no data:
// the page fetches everything from /v1 with the token the reader gives it.
func Handler() http.Handler {
	files := map[string]file{}
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		files["/"+p] = file{body: b, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(p)}
		return nil
	})
	if err != nil {
		panic(err) // the embedded files are always readable
	}
	files["/"] = files["/index.html"]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the viewer serves GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		for k, v := range securityHeaders {
			h.Set(k, v)
		}
		h.Set("Content-Type", f.ctype)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	})
}

// contentType is the media type of an embedded file, by extension.
func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".json":
		return "application/json"
	}
	return "application/octet-stream"
}
