package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/session"
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
				if s, err = st.Create(ctx, CreateOptions{}); err != nil {
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
