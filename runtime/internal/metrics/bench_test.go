package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// benchAppends is how many appends one timed batch makes.
const benchAppends = 256

// BenchmarkAppendMetricsInterleaved measures what the metrics cost on the
// append path of the store: two stores over in-memory backends, one
// without an observer and one reporting to a Metrics, take turns batch by
// batch (which goes first alternates), each batch benchAppends Appends of
// a small user message to a live session, timed; the flush that empties
// the queues after each batch is not. It reports both per-append times
// and on/off as a percentage; b.N counts pairs of batches.
func BenchmarkAppendMetricsInterleaved(b *testing.B) {
	ctx := context.Background()
	type side struct {
		st   *store.Store
		s    *session.Session
		took time.Duration
	}
	newSide := func(obs store.Observer) *side {
		st, err := store.New(store.Options{
			Backends:    []store.Backend{{Name: "memory", Persistence: memory.New()}},
			WriteWindow: time.Minute, RetryMaxBackoff: time.Minute, // only the untimed flushes write
			Observer: obs,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close(ctx) })
		return &side{st: st}
	}
	off, on := newSide(nil), newSide(metrics.New())
	inputs := make([]session.AppendInput, benchAppends)
	for i := range inputs {
		inputs[i] = session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
			Data: fmt.Appendf(nil, `{"id":"u%d","role":"user","content":[{"type":"text","text":"message %d of the batch"}],"source":{"kind":"user"}}`, i, i)}
	}
	run := func(sd *side) {
		if sd.s == nil || sd.s.Len() >= 64*benchAppends {
			if sd.s != nil {
				if err := sd.st.Release(ctx, sd.s); err != nil {
					b.Fatal(err)
				}
			}
			var err error
			if sd.s, err = sd.st.Create(ctx, store.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			// The messages are a harness's, written inside a turn.
			if _, err := sd.s.Append(ctx, session.AppendInput{Type: session.TypeTurnStart, Data: []byte(`{"turn":1}`)}); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		for i := range inputs {
			if _, err := sd.s.Append(ctx, inputs[i]); err != nil {
				b.Fatal(err)
			}
		}
		sd.took += time.Since(t0)
		if _, err := sd.st.Flush(ctx, sd.s); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			run(off)
			run(on)
		} else {
			run(on)
			run(off)
		}
	}
	n := float64(b.N * benchAppends)
	b.ReportMetric(float64(off.took.Nanoseconds())/n, "off-ns/append")
	b.ReportMetric(float64(on.took.Nanoseconds())/n, "on-ns/append")
	b.ReportMetric(100*on.took.Seconds()/off.took.Seconds(), "on/off-%")
	b.ReportMetric(0, "ns/op") // two timed batches and two untimed flushes: not a figure to read
}
