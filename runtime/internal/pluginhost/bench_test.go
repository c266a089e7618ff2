package pluginhost

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// event1KiB is a ~1 KiB user message.
var event1KiB = session.AppendInput{
	Type:      session.TypeUserMessage,
	SurfaceOp: &session.SurfaceOp{},
	Data:      []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum dolor sit amet, ", 34) + `"}],"source":{"kind":"user"}}`),
}

// openTurn appends the turn/start a harness writes before its first user
// message.
func openTurn(tb testing.TB, s *session.Session) {
	tb.Helper()
	if _, err := s.Append(context.Background(), session.AppendInput{Type: "turn/start", Data: []byte(`{"turn":1}`)}); err != nil {
		tb.Fatal(err)
	}
}

// benchmarkIngest appends b.N ~1 KiB events through a store into p,
// flushing every 4,096 events; ns/op is per event.
func benchmarkIngest(b *testing.B, p sdk.Persistence) {
	ctx := context.Background()
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "mem", Persistence: p}}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	openTurn(b, s)
	b.SetBytes(int64(len(event1KiB.Data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		if _, err := s.Append(ctx, event1KiB); err != nil {
			b.Fatal(err)
		}
		if i%4096 == 0 || i == b.N {
			if _, err := st.Flush(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkIngestInProcessMem ingests into the memory backend in process.
func BenchmarkIngestInProcessMem(b *testing.B) { benchmarkIngest(b, memory.New()) }

// BenchmarkIngestPluginMem ingests into the memory backend through a real
// plugin subprocess (AutoMTLS on).
func BenchmarkIngestPluginMem(b *testing.B) {
	p := startBench(b)
	benchmarkIngest(b, p.Persistence())
}

func startBench(b *testing.B) *Plugin {
	h, err := New(Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(h.Close)
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkFlushOnePluginMem appends one ~1 KiB event and flushes it through
// a real plugin subprocess.
func BenchmarkFlushOnePluginMem(b *testing.B) {
	ctx := context.Background()
	p := startBench(b)
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "mem", Persistence: p.Persistence()}}})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	openTurn(b, s)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Append(ctx, event1KiB); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Flush(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPluginStart starts the bundled memory plugin: launch, handshake
// with AutoMTLS, GetInfo and Configure.
func BenchmarkPluginStart(b *testing.B) {
	h, err := New(Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	for b.Loop() {
		p, err := h.Start(context.Background(), Spec{Name: "memory"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		p.Stop()
		b.StartTimer()
	}
}

// BenchmarkIngestPluginMemInterleaved compares two builds of the plugin
// side batch by batch under the same conditions: the memory plugin of this
// test's logbook binary (A) and of the binary LOGBOOK_BENCH_BIN_B names
// (B), each behind a store of its own. Each iteration appends 256 ~1 KiB
// events to both sessions (untimed), then times the flush of each, in an
// order that alternates. It reports both per-event times and B/A as a
// percentage; b.N counts batches. Skipped without LOGBOOK_BENCH_BIN_B.
func BenchmarkIngestPluginMemInterleaved(b *testing.B) {
	binB := os.Getenv("LOGBOOK_BENCH_BIN_B")
	if binB == "" {
		b.Skip("LOGBOOK_BENCH_BIN_B names no second logbook binary")
	}
	ctx := context.Background()
	type side struct {
		st      *store.Store
		s       *session.Session
		elapsed time.Duration
	}
	open := func(bin string) *side {
		h, err := New(Options{Executable: bin})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(h.Close)
		p, err := h.Start(ctx, Spec{Name: "memory"})
		if err != nil {
			b.Fatal(err)
		}
		st, err := store.New(store.Options{Backends: []store.Backend{{Name: "mem", Persistence: p.Persistence()}}, WriteWindow: time.Minute, RetryMaxBackoff: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close(ctx) })
		return &side{st: st}
	}
	sides := []*side{open(logbookBin), open(binB)}
	const batch = 256
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		for _, x := range sides {
			if x.s == nil || x.s.Len() >= 16*batch {
				if x.s != nil {
					_ = x.st.Release(ctx, x.s)
				}
				var err error
				if x.s, err = x.st.Create(ctx, store.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
				openTurn(b, x.s)
			}
			for range batch {
				if _, err := x.s.Append(ctx, event1KiB); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		for k := range sides {
			x := sides[(i+k)%2]
			t0 := time.Now()
			if _, err := x.st.Flush(ctx, x.s); err != nil {
				b.Fatal(err)
			}
			x.elapsed += time.Since(t0)
		}
	}
	n := float64(b.N * batch)
	b.ReportMetric(float64(sides[0].elapsed.Nanoseconds())/n, "a-ns/event")
	b.ReportMetric(float64(sides[1].elapsed.Nanoseconds())/n, "b-ns/event")
	b.ReportMetric(100*sides[1].elapsed.Seconds()/sides[0].elapsed.Seconds(), "b/a-%")
}
