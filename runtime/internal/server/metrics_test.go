package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// getMetrics GETs /metrics at url with token ("" = none).
func getMetrics(t *testing.T, url, token string) (int, string) {
	t.Helper()
	return getAuthed(t, url, server.MetricsPath, token)
}

// /metrics is open on a loopback listener without credentials, and needs
// one once a credential is configured, on loopback too, and always on a
// listener others can reach; without Options.Metrics there is no /metrics
// at all.
func TestMetricsNeedACredential(t *testing.T) {
	const token = "metrics-token-0123456789"
	e := startEngine(t, headless(t.TempDir()))

	open := serve(t, e, server.Options{Metrics: metrics.New()})
	if code, body := getMetrics(t, open.url, ""); code != http.StatusOK || !strings.Contains(body, "logbook_appended_events_total 0") {
		t.Fatalf("/metrics on loopback without credentials: %d %.200s", code, body)
	}
	r := serve(t, e, server.Options{Verifier: operator(token), Metrics: metrics.New()})
	if code, _ := getMetrics(t, r.url, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics on loopback without the token: %d", code)
	}
	if code, body := getMetrics(t, r.url, token); code != http.StatusOK || !strings.Contains(body, "logbook_appended_events_total 0") {
		t.Fatalf("/metrics on loopback with the token: %d %.200s", code, body)
	}

	url := serveOffLoopback(t, e, server.Options{Verifier: operator(token), Metrics: metrics.New()})
	if code, _ := getMetrics(t, url, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics off loopback without the token: %d", code)
	}
	if code, _ := getMetrics(t, url, "wrong-token-0123456789"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics off loopback with a wrong token: %d", code)
	}
	if code, body := getMetrics(t, url, token); code != http.StatusOK || !strings.Contains(body, `logbook_http_requests_total{route="GET /metrics",status="401"} 2`) {
		t.Fatalf("/metrics off loopback with the token: %d %s", code, body)
	}
	// The health endpoints stay open there.
	if code, _ := getAuthed(t, url, server.HealthzPath, ""); code != http.StatusOK {
		t.Fatalf("/healthz off loopback without the token: %d", code)
	}

	plain := serve(t, e, server.Options{})
	if code, _ := getMetrics(t, plain.url, ""); code != http.StatusNotFound {
		t.Fatalf("/metrics without Options.Metrics: %d", code)
	}
}
