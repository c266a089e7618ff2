package longsession

import (
	"testing"
)

// twice drives a measurement for two iterations and keeps its metrics.
type twice struct {
	*testing.T
	left    int
	metrics map[string]float64
}

func (t *twice) Loop() bool { t.left--; return t.left >= 0 }

func (t *twice) ReportMetric(n float64, unit string) { t.metrics[unit] = n }

func drive(t *testing.T, measure func(bench)) map[string]float64 {
	d := &twice{T: t, left: 2, metrics: map[string]float64{}}
	measure(d)
	t.Logf("%v", d.metrics)
	return d.metrics
}

// Every measurement runs end to end on a small session and reports figures
// that make sense: the children derive every message (checked inside), the
// times and sizes are positive, and the stored log is smaller than the
// canonical bytes.
func TestMeasurementsOnASmallSession(t *testing.T) {
	const messages = 601 // not a multiple of 3: the last turn is whole
	positive := func(t *testing.T, m map[string]float64, units ...string) {
		t.Helper()
		for _, u := range units {
			if v, ok := m[u]; !ok || v <= 0 {
				t.Errorf("%s = %v (reported: %v), want > 0", u, v, ok)
			}
		}
	}
	t.Run("coldload", func(t *testing.T) {
		m := drive(t, func(b bench) { measureColdLoad(b, messages) })
		positive(t, m, "load-ms", "raw-ms", "load/raw", "peak-MB", "canonical-MB", "peak/canonical")
	})
	t.Run("fork", func(t *testing.T) {
		m := drive(t, func(b bench) { measureFork(b, messages) })
		positive(t, m, "fork-ms", "raw-ms", "fork/raw")
	})
	for _, backend := range []string{"jsonl", "sqlite"} {
		t.Run("append/"+backend, func(t *testing.T) {
			m := drive(t, func(b bench) { measureAppend(b, backend, messages) })
			positive(t, m, "msg/s", "raw-msg/s", "append/raw-throughput", "disk-MB", "disk/canonical")
			if backend == "jsonl" && m["disk/canonical"] >= 1 {
				t.Errorf("JSONL+zstd stores %.2f× the canonical bytes", m["disk/canonical"])
			}
		})
	}
	t.Run("appendflush", func(t *testing.T) {
		m := drive(t, func(b bench) { measureAppendFlush(b, messages) })
		positive(t, m, "p50-ms", "p99-ms", "raw-p50-ms", "p50/raw-p50", "msg/s")
	})
}
