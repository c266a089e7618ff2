package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed-e5e476df/logbook/sdk"
)

// flushBuckets are the flush latency histogram's upper bounds, in seconds:
// from a page-cache fsync to a backend that keeps a drain waiting.
var flushBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds logbook's metrics in a registry of their own. Its methods
// are safe for concurrent use.
type Metrics struct {
	reg            *prometheus.Registry
	appendedEvents prometheus.Counter
	appendedBytes  prometheus.Counter
	flush          *prometheus.HistogramVec
	errors         *prometheus.CounterVec
	writeErrors    *prometheus.CounterVec
	requests       *prometheus.CounterVec
	idleReleases   prometheus.Counter
}

// New returns a Metrics with every metric defined and registered in a new
// registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		appendedEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "logbook_appended_events_total",
			Help: "Events appended to live sessions (not the seed of a fork or the repair batch of a resume).",
		}),
		appendedBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "logbook_appended_bytes_total",
			Help: "Bytes of the canonical envelopes of the events counted by logbook_appended_events_total.",
		}),
		flush: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "logbook_flush_duration_seconds",
			Help:    "How long one backend took to drain a session's write-behind queue and flush, per successful flush of a session.",
			Buckets: flushBuckets,
		}, []string{"backend"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "logbook_errors_total",
			Help: "Error replies of the API, by logbook error code (or, without one, the RPC status in lower case).",
		}, []string{"code"}),
		writeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "logbook_writebehind_errors_total",
			Help: "Failed write-behind calls to a backend (retried or final), by backend and logbook error code.",
		}, []string{"backend", "code"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "logbook_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern that served them) and HTTP status.",
		}, []string{"route", "status"}),
		idleReleases: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "logbook_idle_releases_total",
			Help: "Live sessions serve released because no request used them for idle_release.",
		}),
	}
	m.reg.MustRegister(m.appendedEvents, m.appendedBytes, m.flush, m.errors, m.writeErrors, m.requests, m.idleReleases)
	return m
}

// Registry returns the registry that holds the metrics; an embedder may
// register its own collectors in it or gather it itself.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format. A
// collector that fails is reported in the answer and the others are still
// served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Appended counts events committed to a live session and the bytes of
// their envelopes. It is the store's commit hook: two atomic adds.
func (m *Metrics) Appended(events int, bytes int64) {
	m.appendedEvents.Add(float64(events))
	m.appendedBytes.Add(float64(bytes))
}

// Flushed records how long one backend took for its part of a flush.
func (m *Metrics) Flushed(backend string, d time.Duration) {
	m.flush.WithLabelValues(backend).Observe(d.Seconds())
}

// WriteFailed counts a failed write-behind call to a backend under its
// code; a failure without one counts as "unknown".
func (m *Metrics) WriteFailed(backend string, code sdk.Code) {
	label := string(code)
	if label == "" {
		label = "unknown"
	}
	m.writeErrors.WithLabelValues(backend, label).Inc()
}

// IdleReleased counts n sessions released for being idle.
func (m *Metrics) IdleReleased(n int) { m.idleReleases.Add(float64(n)) }

// Error counts one error reply under its code.
func (m *Metrics) Error(code string) {
	m.errors.WithLabelValues(code).Inc()
}
