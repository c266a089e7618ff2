package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// Sessions released for being idle between requests are resumed by the
// next one, and a request in flight is never cut: with an idle_release
// (1 ms) shorter than a request, so that the releaser finds every
// session idle but for the requests in flight, concurrent appends to the
// same sessions all succeed.
func TestIdleReleaseNeverCutsARequest(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	m := metrics.New()
	r := serve(t, e, server.Options{IdleRelease: time.Millisecond, Metrics: m})
	c := newClient(t, r, "")
	ctx := context.Background()
	const sessions, writers, appends = 2, 2, 8
	for i := range sessions {
		if _, err := c.Create(ctx, fmt.Sprintf("s%d", i), events.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions*writers*appends)
	for i := range sessions {
		for w := range writers {
			wg.Go(func() {
				s := c.Session(fmt.Sprintf("s%d", i))
				for k := range appends {
					if _, err := s.Append(ctx, padded(w*appends+k, 64<<10), padded(w*appends+k, 64<<10)); err != nil {
						errs <- fmt.Errorf("session s%d, writer %d, append %d: %w", i, w, k, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	released := 0.0
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "logbook_idle_releases_total" {
			released = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if released == 0 {
		t.Error("no session was released for being idle: the test raced nothing")
	}
	t.Logf("%v idle releases", released)
}
