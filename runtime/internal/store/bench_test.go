package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// BenchmarkAppendWriteBehindParallel measures the append path of a store
// whose queues write behind to in-memory backends while every goroutine
// appends to its own live session: each append is committed and queued,
// each queue writes once it holds EagerBytes, and the acknowledgements
// shrink the queues while the appends go on. What every session shares
// on that path (the store's accounting of queued bytes) is what it
// stresses. ns/op is per append.
func BenchmarkAppendWriteBehindParallel(b *testing.B) {
	ctx := context.Background()
	st, err := New(Options{Backends: []Backend{{Name: "memory", Persistence: mem()}}, NewID: sequentialIDs(), EagerBytes: 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close(ctx)
	inputs := make([]session.AppendInput, 256)
	for i := range inputs {
		inputs[i] = session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
			Data: fmt.Appendf(nil, `{"id":"u%d","role":"user","content":[{"type":"text","text":"message %d of the batch"}],"source":{"kind":"user"}}`, i, i)}
	}
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var s *session.Session
		i := 0
		for pb.Next() {
			if s == nil || s.Len() >= 16_384 {
				if s != nil {
					if err := st.Release(ctx, s); err != nil {
						failed.Store(err)
						return
					}
				}
				var err error
				if s, err = createInTurn(st); err != nil {
					failed.Store(err)
					return
				}
			}
			if _, err := s.Append(ctx, inputs[i%len(inputs)]); err != nil {
				failed.Store(err)
				return
			}
			i++
		}
	})
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
}

// createInTurn creates a session in st and opens turn 1 in it, so the
// benchmarks' user messages keep the loop rules (docs/format.md, "The
// agent-loop protocol"): one more append per session, beside thousands.
func createInTurn(st *Store) (*session.Session, error) {
	ctx := context.Background()
	s, err := st.Create(ctx, CreateOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := s.Append(ctx, session.AppendInput{Type: session.TypeTurnStart, Data: []byte(`{"turn":1}`)}); err != nil {
		return nil, err
	}
	return s, nil
}

// BenchmarkPendingBoundReserveRelease is what the process-wide bound adds
// to each append and acknowledgement when there is room: a reservation
// and its release, from every goroutine at once on one shared bound (the
// worst case for its shared counter). ns/op is per pair.
func BenchmarkPendingBoundReserveRelease(b *testing.B) {
	p := &pendingBound{limit: 512 << 20, timeout: time.Second, clock: SystemClock{}}
	ctx := context.Background()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := p.reserve(ctx, 300, "s", nil); err != nil {
				b.Error(err)
				return
			}
			p.release(300)
		}
	})
}

// BenchmarkPendingBoundOnTheAppendPath estimates, inside one run, what
// the process-wide bound costs an append: two stores over in-memory
// backends take turns batch by batch (which goes first alternates), each
// batch 256 Appends to a live session, timed, then an untimed flush. On
// the "twice" side every append also reserves and releases its bytes on a
// second bound, so the bound's work is done twice there: twice−once is
// the bound's own cost on the append path, measured under the same
// conditions as the append. It reports both per-append times and their
// ratio; b.N counts pairs of batches.
func BenchmarkPendingBoundOnTheAppendPath(b *testing.B) {
	ctx := context.Background()
	type side struct {
		st   *Store
		s    *session.Session
		in   []session.AppendInput
		took time.Duration
	}
	inputs := make([]session.AppendInput, 256)
	for i := range inputs {
		inputs[i] = session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
			Data: fmt.Appendf(nil, `{"id":"u%d","role":"user","content":[{"type":"text","text":"message %d of the batch"}],"source":{"kind":"user"}}`, i, i)}
	}
	newSide := func() *side {
		st, err := New(Options{Backends: []Backend{{Name: "memory", Persistence: mem()}}, NewID: sequentialIDs(),
			WriteWindow: time.Minute, RetryMaxBackoff: time.Minute}) // only the untimed flushes write
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = st.Close(ctx) })
		return &side{st: st}
	}
	once, twice := newSide(), newSide()
	extra := &pendingBound{limit: 512 << 20, timeout: time.Second, clock: SystemClock{}}
	run := func(sd *side, again bool) {
		if sd.s == nil || sd.s.Len() >= 64*256 {
			if sd.s != nil {
				if err := sd.st.Release(ctx, sd.s); err != nil {
					b.Fatal(err)
				}
			}
			var err error
			if sd.s, err = createInTurn(sd.st); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		for i := range inputs {
			e, err := sd.s.Append(ctx, inputs[i])
			if err != nil {
				b.Fatal(err)
			}
			if again {
				n := int64(e.EnvelopeLen())
				if err := extra.reserve(ctx, n, "s", nil); err != nil {
					b.Fatal(err)
				}
				extra.release(n)
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
			run(once, false)
			run(twice, true)
		} else {
			run(twice, true)
			run(once, false)
		}
	}
	n := float64(b.N * len(inputs))
	b.ReportMetric(float64(once.took.Nanoseconds())/n, "once-ns/append")
	b.ReportMetric(float64(twice.took.Nanoseconds())/n, "twice-ns/append")
	b.ReportMetric(100*twice.took.Seconds()/once.took.Seconds(), "twice/once-%")
	b.ReportMetric(0, "ns/op") // two timed batches and two untimed flushes: not a figure to read
}
