package server_test

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/testserve"
	"github.com/seed-e5e476df/logbook/sdk"
)

// scrapeServe scrapes the /metrics of a running serve.
func scrapeServe(t *testing.T, p *serveProcess) testserve.Metrics {
	t.Helper()
	m, err := testserve.Scrape("http://"+p.addr+"/metrics", "")
	if err != nil {
		t.Fatalf("%v\n%s", err, p.log())
	}
	return m
}

// want checks that metric name with labels has the value want.
func wantMetric(t *testing.T, m testserve.Metrics, want float64, name string, labels ...string) {
	t.Helper()
	if got, ok := m.Value(name, labels...); !ok || got != want {
		t.Errorf("%s%v = %v (present %v), want %v", name, labels, got, ok, want)
	}
}

// A real `logbook serve`'s /metrics, parsed: appended events and bytes
// equal to what was appended, flush latencies, requests by route and
// status, errors by code after a SEQ_CONFLICT, live sessions, the
// write-behind queues after a flush, and the plugin's restart after a
// kill -9 of it.
func TestServeMetrics(t *testing.T) {
	p := startServe(t, t.TempDir())
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	ctx := context.Background()
	s, err := c.Create(ctx, "m1", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Append(ctx, events.TurnStart(1), userInput("u1", "one"), events.TurnEnd(1, events.Completed()))
	if err != nil {
		t.Fatal(err)
	}
	group, err := s.AppendGroup(ctx, events.Input{Type: "turn/start", Data: []byte(`{"turn":2}`)}, userInput("u5", "five"))
	if err != nil {
		t.Fatal(err)
	}
	var bytes int
	for _, e := range append(evs, group...) {
		bytes += len(e.Envelope)
	}
	if _, err := s.AppendAt(ctx, 1, userInput("u6", "late")); !errors.Is(err, sdk.CodeSeqConflict) {
		t.Fatalf("append at a stale length: %v", err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	m := scrapeServe(t, p)
	wantMetric(t, m, 1, "logbook_http_requests_total", "route", "/logbook.v1.Sessions/Create", "status", "200")
	wantMetric(t, m, 1, "logbook_http_requests_total", "route", "/logbook.v1.Sessions/Flush", "status", "200")
	wantMetric(t, m, 1, "logbook_errors_total", "code", "SEQ_CONFLICT")
	wantMetric(t, m, 5, "logbook_appended_events_total")
	wantMetric(t, m, float64(bytes), "logbook_appended_bytes_total")
	// Create flushes before it replies, then the explicit Flush.
	wantMetric(t, m, 2, "logbook_flush_duration_seconds", "backend", "jsonl")
	wantMetric(t, m, 1, "logbook_live_sessions")
	wantMetric(t, m, 0, "logbook_writebehind_queue_events", "backend", "jsonl")
	wantMetric(t, m, 0, "logbook_writebehind_queue_bytes", "backend", "jsonl")
	wantMetric(t, m, 1, "logbook_plugin_up", "plugin", "jsonl")
	wantMetric(t, m, 0, "logbook_plugin_restarts_total", "plugin", "jsonl")
	var appends float64
	for _, s := range m["logbook_http_requests_total"].GetMetric() {
		for _, l := range s.GetLabel() {
			if l.GetName() == "route" && l.GetValue() == "/logbook.v1.Sessions/Append" {
				appends += s.GetCounter().GetValue()
			}
		}
	}
	if appends != 2 {
		t.Errorf("%v Append requests counted, want 2", appends)
	}

	// kill -9 the plugin; the host restarts it, and the counter says so.
	plugin := jsonlPlugin(p.Pid())
	if err := syscall.Kill(plugin, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		m = scrapeServe(t, p)
		if restarts, _ := m.Value("logbook_plugin_restarts_total", "plugin", "jsonl"); restarts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no restart counted 60 s after the kill:\n%s", p.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantMetric(t, m, 1, "logbook_plugin_up", "plugin", "jsonl")
	if code, _, _ := getHealth(t, p.addr, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the restart: %d", code)
	}
}
