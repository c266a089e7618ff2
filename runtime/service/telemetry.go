package service

import (
	"context"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-e5e476df/logbook/runtime/internal/telemetry"
)

// startTelemetry starts pushing the spans of the turns that end to the
// configuration's telemetry block's collector (docs/operations.md,
// "Telemetry"); nil without the block or on a read-only service. With
// Options.Metrics, /metrics gets its counters.
func (s *Service) startTelemetry(log hclog.Logger) (*telemetry.Pusher, error) {
	t := s.cfg.Telemetry
	if t == nil || s.h.ReadOnly() {
		return nil, nil
	}
	p, err := telemetry.Start(s.e.Store, telemetry.Options{
		Endpoint: t.OTLPEndpoint,
		Headers:  t.Headers,
		Timeout:  t.Timeout,
		Queue:    int(t.Queue),
		Logger:   log.Named("telemetry"),
	})
	if err != nil {
		return nil, err
	}
	if s.metrics != nil {
		for _, c := range []prometheus.Collector{
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "logbook_otlp_spans_exported_total",
				Help: "Spans the OTLP collector of the telemetry block accepted."},
				func() float64 { return float64(p.Stats().Exported) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "logbook_otlp_spans_dropped_total",
				Help: "Spans dropped because the telemetry queue was full (a slow or dead collector) or shutdown cut the upload."},
				func() float64 { return float64(p.Stats().Dropped) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "logbook_otlp_spans_failed_total",
				Help: "Spans whose upload failed after the exporter's retries."},
				func() float64 { return float64(p.Stats().Failed) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "logbook_otlp_queue_items",
				Help: "Turns' spans (and root spans) waiting for upload."},
				func() float64 { return float64(p.Stats().Queued) }),
		} {
			if err := s.metrics.Registry().Register(c); err != nil {
				log.Warn("telemetry: cannot register a metric", "error", err)
			}
		}
	}
	return p, nil
}

// stopTelemetry closes p (nil: nothing), giving the queue the upload
// timeout to drain.
func (s *Service) stopTelemetry(ctx context.Context, p *telemetry.Pusher, log hclog.Logger) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Telemetry.Timeout)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		log.Warn("telemetry: stopping the OTLP exporter", "error", err)
	}
	st := p.Stats()
	log.Info("telemetry: stopped", "exported", st.Exported, "dropped", st.Dropped, "failed", st.Failed)
}
