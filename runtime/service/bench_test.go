package service_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// benchWindow is how many single-event appends each path makes in a row
// before the other path takes its turn.
const benchWindow = 8

// BenchmarkAppend compares, alternating window by window in one run, the
// service's append of one event to a held session (Session.Append, the
// path of the logbook door) with a direct session.AppendBatch plus the
// partial-failure bookkeeping the logbook door wrote itself before the
// service. Both sessions live over the memory backend; each
// is replaced by a fresh one every 20,000 events so both logs stay alike.
// The old path runs in an engine of its own beside the service's, over
// the same configuration.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "memory.hcl")
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(ctx)
	in := []events.Input{{Type: "app/note", Ignorable: true, Data: []byte(`{"text":"a note of a few dozen bytes, as a harness writes"}`)}}

	var (
		viaService *service.Session
		direct     *session.Session
		tService   time.Duration
		tDirect    time.Duration
		n          int
	)
	fresh := func() {
		if viaService != nil {
			_ = viaService.Release(ctx)
			_ = e.Store.Release(ctx, direct)
		}
		n++
		if viaService, err = svc.Create(ctx, service.CreateRequest{ID: "svc-" + strconv.Itoa(n)}); err != nil {
			b.Fatal(err)
		}
		if direct, err = e.Store.Create(ctx, store.CreateOptions{ID: "direct-" + strconv.Itoa(n)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		if viaService == nil || viaService.Len()+benchWindow > 20_000 {
			b.StopTimer()
			fresh()
			b.StartTimer()
		}
		// The paths take turns going first, so neither always runs
		// right after the other's write-behind.
		if i%2 == 0 {
			tService += timeWindow(func() error { _, err := viaService.Append(ctx, service.AppendRequest{Inputs: in}); return err })
			tDirect += timeWindow(func() error { _, err := oldRootAppend(ctx, direct, in); return err })
		} else {
			tDirect += timeWindow(func() error { _, err := oldRootAppend(ctx, direct, in); return err })
			tService += timeWindow(func() error { _, err := viaService.Append(ctx, service.AppendRequest{Inputs: in}); return err })
		}
	}
	b.StopTimer()
	// Allocations are steadier than times on a shared machine: count
	// them per append for each path.
	b.ReportMetric(testing.AllocsPerRun(100, func() { _, _ = viaService.Append(ctx, service.AppendRequest{Inputs: in}) }), "service-allocs/event")
	b.ReportMetric(testing.AllocsPerRun(100, func() { _, _ = oldRootAppend(ctx, direct, in) }), "old-allocs/event")
	events := float64(b.N * benchWindow)
	b.ReportMetric(float64(tService.Nanoseconds())/events, "service-ns/event")
	b.ReportMetric(float64(tDirect.Nanoseconds())/events, "old-ns/event")
	b.ReportMetric(100*tService.Seconds()/tDirect.Seconds(), "service/old-%")
}

// timeWindow times benchWindow calls of f, failing the benchmark on an
// error.
func timeWindow(f func() error) time.Duration {
	t0 := time.Now()
	for range benchWindow {
		if err := f(); err != nil {
			panic(err)
		}
	}
	return time.Since(t0)
}

// oldRootAppend is the logbook door's append before the service: a batch,
// the events converted, and the Meta of a partial failure.
func oldRootAppend(ctx context.Context, s *session.Session, ins []events.Input) ([]events.Event, error) {
	b, err := s.AppendBatch(ctx, ins, session.BatchOptions{})
	out := make([]events.Event, len(b.Events))
	for i, e := range b.Events {
		out[i] = e.Shared()
	}
	if se, ok := err.(*sdk.Error); ok {
		err = se.WithMeta("appended", strconv.Itoa(len(b.Events))).WithMeta("firstSeq", strconv.FormatInt(int64(b.Start), 10))
	}
	return out, err
}
