package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/sdk"
)

// scrape serves m's handler once and parses the answer.
func scrape(t *testing.T, m *metrics.Metrics) testserve.Metrics {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	fams, err := testserve.ParseMetrics(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// Every metric is named logbook_*, and the hooks count what they are told.
func TestHooksCount(t *testing.T) {
	m := metrics.New()
	m.Appended(3, 300)
	m.Appended(2, 50)
	m.Flushed("jsonl", 3*time.Millisecond)
	m.Flushed("jsonl", 2*time.Second)
	m.Flushed("sqlite", time.Millisecond)
	m.Error("SEQ_CONFLICT")
	m.Error("SEQ_CONFLICT")
	m.Error("canceled")
	m.WriteFailed("jsonl", sdk.CodePluginUnavailable)
	m.WriteFailed("jsonl", "")
	fams := scrape(t, m)
	for name := range fams {
		if !strings.HasPrefix(name, "logbook_") {
			t.Errorf("metric %s is not named logbook_*", name)
		}
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"logbook_appended_events_total", nil, 5},
		{"logbook_appended_bytes_total", nil, 350},
		{"logbook_flush_duration_seconds", []string{"backend", "jsonl"}, 2},
		{"logbook_flush_duration_seconds", []string{"backend", "sqlite"}, 1},
		{"logbook_errors_total", []string{"code", "SEQ_CONFLICT"}, 2},
		{"logbook_errors_total", []string{"code", "canceled"}, 1},
		{"logbook_writebehind_errors_total", []string{"backend", "jsonl", "code", "PLUGIN_UNAVAILABLE"}, 1},
		{"logbook_writebehind_errors_total", []string{"backend", "jsonl", "code", "unknown"}, 1},
	} {
		if got, ok := fams.Value(tc.name, tc.labels...); !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	h := fams["logbook_flush_duration_seconds"].GetMetric()[0].GetHistogram()
	if sum := h.GetSampleSum(); sum < 2.003 || sum > 2.0031 {
		t.Errorf("jsonl flush seconds sum %v, want 2.003", sum)
	}
}

// InstrumentHTTP labels a request with the pattern that served it, or
// would have when an outer handler refused it first, and "unmatched" when
// no pattern matches; the status is what the handler answered.
func TestInstrumentHTTPRoutes(t *testing.T) {
	m := metrics.New()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	mux.HandleFunc("/stream/", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("a"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush through the instrumented writer: %v", err)
		}
	})
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" && strings.HasPrefix(r.URL.Path, "/items/") {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
	h := m.InstrumentHTTP(mux, guard)
	do := func(path string, auth bool) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer x")
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	do("/items/1", true)
	do("/items/2", true)
	do("/items/3", false)
	do("/stream/x", false)
	do("/nowhere", false)
	fams := scrape(t, m)
	for _, tc := range []struct {
		route, status string
		want          float64
	}{
		{"GET /items/{id}", "418", 2},
		{"GET /items/{id}", "401", 1},
		{"/stream/", "200", 1},
		{"unmatched", "404", 1},
	} {
		if got, ok := fams.Value("logbook_http_requests_total", "route", tc.route, "status", tc.status); !ok || got != tc.want {
			t.Errorf("requests{route=%q,status=%s} = %v (present %v), want %v", tc.route, tc.status, got, ok, tc.want)
		}
	}
	if n := len(fams["logbook_http_requests_total"].GetMetric()); n != 4 {
		t.Errorf("%d request series, want 4 (one per route and status, never per path)", n)
	}
}
