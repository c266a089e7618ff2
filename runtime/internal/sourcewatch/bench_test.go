package sourcewatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkNotifyLatency measures the watcher's share of the mirror's
// latency: from the end of a line's write to the report of its file, with
// file notifications and the default quiet period. It reports ms/line
// (mean), p50-ms and p99-ms.
func BenchmarkNotifyLatency(b *testing.B) {
	root := b.TempDir()
	w, err := New(Options{Roots: []string{root}})
	if err != nil {
		b.Fatal(err)
	}
	if w.Mode() != ModeNotify {
		b.Fatalf("mode %s (%v); the benchmark needs notifications", w.Mode(), w.Why())
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := make(chan time.Time, 1)
	done := make(chan error, 1)
	go func() {
		done <- w.Run(ctx, func([]string) error { reports <- time.Now(); return nil })
	}()
	defer func() { cancel(); <-done; w.Close() }()
	f, err := os.OpenFile(filepath.Join(root, "s.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line := []byte(`{"type":"user","message":{"role":"user","content":"hello"}}` + "\n")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		select {
		case at := <-reports:
			lat = append(lat, at.Sub(start))
		case <-time.After(5 * time.Second):
			b.Fatal("no report within 5s")
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/float64(len(lat)), "ms/line")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
