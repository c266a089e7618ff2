package metrics_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
)

// An embedder mounts the handler on its own mux and counts that mux's
// requests by route; an engine's store reports appends through Appended
// (engine.Options.Observer), and Watch adds the engine's live state.
func ExampleMetrics_InstrumentHTTP() {
	m := metrics.New()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.HandleFunc("GET /hello/{name}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello", r.PathValue("name")) })
	srv := httptest.NewServer(m.InstrumentHTTP(mux, mux))
	defer srv.Close()

	for _, name := range []string{"ada", "alan"} {
		resp, _ := http.Get(srv.URL + "/hello/" + name)
		resp.Body.Close()
	}
	m.Appended(2, 120)
	resp, _ := http.Get(srv.URL + "/metrics")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "logbook_http_requests_total") || strings.HasPrefix(line, "logbook_appended_") {
			fmt.Println(line)
		}
	}
	// Output:
	// logbook_appended_bytes_total 120
	// logbook_appended_events_total 2
	// logbook_http_requests_total{route="GET /hello/{name}",status="200"} 2
}
