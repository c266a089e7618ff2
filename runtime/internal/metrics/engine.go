package metrics

import (
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// Metrics is the store's observer (engine.Options.Observer).
var _ store.Observer = (*Metrics)(nil)

// Descriptions of the metrics read from the engine at scrape time.
var (
	liveSessionsDesc = prometheus.NewDesc("logbook_live_sessions",
		"Sessions live in the store (held for writing).", nil, nil)
	queueEventsDesc = prometheus.NewDesc("logbook_writebehind_queue_events",
		"Committed events the backend has not acknowledged yet, summed over the live sessions.", []string{"backend"}, nil)
	queueBytesDesc = prometheus.NewDesc("logbook_writebehind_queue_bytes",
		"Envelope bytes of the events counted by logbook_writebehind_queue_events.", []string{"backend"}, nil)
	pendingBytesDesc = prometheus.NewDesc("logbook_writebehind_pending_bytes",
		"Envelope bytes in every write-behind queue of the process (an event counts once per backend), plus what admitted appends reserved; appends wait past logbook_writebehind_pending_bytes_limit.", nil, nil)
	pendingLimitDesc = prometheus.NewDesc("logbook_writebehind_pending_bytes_limit",
		"The process-wide bound on logbook_writebehind_pending_bytes (max_pending_bytes_total).", nil, nil)
	pluginRestartsDesc = prometheus.NewDesc("logbook_plugin_restarts_total",
		"Restarts of a plugin process by the host since the engine started.", []string{"plugin"}, nil)
	pluginUpDesc = prometheus.NewDesc("logbook_plugin_up",
		"1 while the plugin process runs and answers, 0 while it is down, being restarted, or does not answer the readiness probe (a persistence plugin that is frozen or out of file descriptors).", []string{"plugin"}, nil)
)

// Watch registers a collector that reads e at each scrape: its live
// sessions, their write-behind queues per backend and in total against
// the process-wide bound, and its plugins' processes, restarts and answers
// (engine.Ready, whose probe of the persistence plugins a scrape shares
// with the readiness checks). Between scrapes it costs nothing. It fails when
// an engine is watched already.
func (m *Metrics) Watch(e *engine.Engine) error {
	return m.reg.Register(engineCollector{e})
}

// engineCollector is the collector Watch registers.
type engineCollector struct{ e *engine.Engine }

// Describe implements prometheus.Collector.
func (c engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{liveSessionsDesc, queueEventsDesc, queueBytesDesc, pendingBytesDesc, pendingLimitDesc, pluginRestartsDesc, pluginUpDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c engineCollector) Collect(ch chan<- prometheus.Metric) {
	if c.e.Store != nil {
		st := c.e.Store.Stats()
		ch <- prometheus.MustNewConstMetric(liveSessionsDesc, prometheus.GaugeValue, float64(st.LiveSessions))
		for _, q := range st.Queues {
			ch <- prometheus.MustNewConstMetric(queueEventsDesc, prometheus.GaugeValue, float64(q.Events), q.Backend)
			ch <- prometheus.MustNewConstMetric(queueBytesDesc, prometheus.GaugeValue, float64(q.Bytes), q.Backend)
		}
		ch <- prometheus.MustNewConstMetric(pendingBytesDesc, prometheus.GaugeValue, float64(st.PendingBytes))
		ch <- prometheus.MustNewConstMetric(pendingLimitDesc, prometheus.GaugeValue, float64(st.MaxPendingBytesTotal))
	}
	ctx, cancel := context.WithTimeout(context.Background(), engine.ProbeTimeout)
	defer cancel()
	up := map[string]float64{}
	for _, ck := range c.e.Ready(ctx) {
		// A persistence backend has its plugin's name: a plugin is up
		// when its process runs and, if it is a backend, it answered.
		if _, seen := up[ck.Name]; !seen {
			up[ck.Name] = 1
		}
		if ck.Err != nil {
			up[ck.Name] = 0
		}
	}
	names := make([]string, 0, len(c.e.Plugins))
	for name := range c.e.Plugins {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := c.e.Plugins[name]
		ch <- prometheus.MustNewConstMetric(pluginRestartsDesc, prometheus.CounterValue, float64(p.Restarts()), name)
		ch <- prometheus.MustNewConstMetric(pluginUpDesc, prometheus.GaugeValue, up[name], name)
	}
}
