package server

import (
	"context"
	"sync"
	"time"
)

// idleCheckDivisor sets how often, as a fraction of Options.IdleRelease,
// the server looks for idle sessions: a session is released at most a
// quarter of IdleRelease late.
const idleCheckDivisor = 4

// releaseIdle starts releasing the sessions, of every tenant's host, no request used for
// Options.IdleRelease (none when it is 0) until ctx ends or stop is
// called; stop waits for a release under way and may be called again.
func (s *Server) releaseIdle(ctx context.Context) (stop func()) {
	idle := s.opts.IdleRelease
	if idle <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(idle/idleCheckDivisor, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				rctx, rcancel := context.WithTimeout(ctx, releaseTimeout)
				n := 0
				for _, h := range s.hosts() {
					n += h.ReleaseIdle(rctx, idle)
				}
				rcancel()
				if n > 0 && s.opts.Metrics != nil {
					s.opts.Metrics.IdleReleased(n)
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}
