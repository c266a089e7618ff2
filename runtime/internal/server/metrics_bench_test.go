package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// BenchmarkServeAppendMetricsInterleaved measures what the metrics cost a
// client's append through the server: two servers, each over its own
// engine (JSONL+zstd through the plugin subprocess), one without metrics
// and one with them all on (the store's observer, request and error
// counting), take turns batch by batch (which goes first alternates). A
// batch is 64 unary Appends of one 1 KiB event over loopback, timed; the
// Flush after it is not. It reports both per-append times and on/off as a
// percentage; b.N counts pairs of batches.
func BenchmarkServeAppendMetricsInterleaved(b *testing.B) {
	const calls = 64
	ctx := context.Background()
	type side struct {
		c    *client.Client
		s    *client.Session
		took time.Duration
	}
	newSide := func(m *metrics.Metrics) *side {
		o := engine.Options{Executable: logbookBin}
		if m != nil {
			o.Observer = m
		}
		e, err := engine.Start(ctx, headless(b.TempDir()), o)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close(ctx) })
		if m != nil {
			if err := m.Watch(e); err != nil {
				b.Fatal(err)
			}
		}
		c := newClient(b, serve(b, e, server.Options{Metrics: m}), "")
		return &side{c: c, s: createInTurn(b, c, "bench")}
	}
	off, on := newSide(nil), newSide(metrics.New())
	in := benchInputs()
	run := func(sd *side, k int) {
		t0 := time.Now()
		for i := range calls {
			if _, err := sd.s.Append(ctx, in[(k*calls+i)%len(in)]); err != nil {
				b.Fatal(err)
			}
		}
		sd.took += time.Since(t0)
		if err := sd.s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			run(off, i)
			run(on, i)
		} else {
			run(on, i)
			run(off, i)
		}
	}
	n := float64(b.N * calls)
	b.ReportMetric(float64(off.took.Nanoseconds())/n, "off-ns/append")
	b.ReportMetric(float64(on.took.Nanoseconds())/n, "on-ns/append")
	b.ReportMetric(100*on.took.Seconds()/off.took.Seconds(), "on/off-%")
	b.ReportMetric(0, "ns/op") // two timed batches and two untimed flushes: not a figure to read
}
