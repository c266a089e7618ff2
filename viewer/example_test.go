package viewer_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/seed-e5e476df/logbook/viewer"
)

// The viewer is an http.Handler for /; logbook serve mounts it through
// server.Options.Viewer, beside the /v1 API the page reads.
func ExampleHandler() {
	mux := http.NewServeMux()
	mux.Handle("/", viewer.Handler())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output: 200 text/html; charset=utf-8
}
