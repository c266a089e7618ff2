package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// countingObserver counts what a store reports.
type countingObserver struct {
	events  int
	flushes int
}

func (o *countingObserver) Appended(events int, _ int64)  { o.events += events }
func (o *countingObserver) Flushed(string, time.Duration) { o.flushes++ }
func (o *countingObserver) WriteFailed(string, sdk.Code)  {}

// An observer hears of every append and flush; Stats shows what the
// write-behind queues hold until a flush writes it.
func ExampleStore_Stats() {
	ctx := context.Background()
	obs := &countingObserver{}
	st, _ := store.New(store.Options{
		Backends:    []store.Backend{{Name: "memory", Persistence: memory.New()}},
		WriteWindow: time.Minute, RetryMaxBackoff: time.Minute,
		Observer: obs,
	})
	defer st.Close(ctx)
	s, _ := st.Create(ctx, store.CreateOptions{ID: "s1"})
	for i := range 3 {
		_, _ = s.Append(ctx, session.AppendInput{Type: "todo/write", Data: fmt.Appendf(nil, `{"todos":[{"content":"step %d","status":"pending"}]}`, i+1)})
	}
	q := st.Stats().Queues[0]
	fmt.Printf("live %d, %s queue: %d events\n", st.Stats().LiveSessions, q.Backend, q.Events)
	_, _ = st.Flush(ctx, s)
	fmt.Printf("after the flush: %d events queued; observed %d appended, %d flush\n", st.Stats().Queues[0].Events, obs.events, obs.flushes)
	// Output:
	// live 1, memory queue: 3 events
	// after the flush: 0 events queued; observed 3 appended, 1 flush
}
