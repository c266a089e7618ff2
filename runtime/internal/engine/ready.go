package engine

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Readiness components: what a Check is about.
const (
	// ComponentPlugin is a plugin process.
	ComponentPlugin = "plugin"
	// ComponentBackend is a persistence backend.
	ComponentBackend = "backend"
)

// readyProbeID is the session id the readiness probe asks each backend
// about: any answer about it, "not found" included, shows the backend
// reachable.
const readyProbeID = "logbook-readiness-probe"

// ProbeTimeout bounds the readiness probe of the backends: one that has
// not answered by then is not ready.
const ProbeTimeout = 2 * time.Second

// ProbeTTL is how long Ready reuses the backends' last probe: under many
// readiness checks each backend is asked at most once per ProbeTTL.
const ProbeTTL = time.Second

// Check is one component's part of a readiness check (Engine.Ready).
type Check struct {
	// Component is ComponentPlugin or ComponentBackend.
	Component string
	// Name is the plugin's or the backend's configured name.
	Name string
	// Err is nil when the component is ready, else why it is not: a
	// plugin that is not running is PLUGIN_UNAVAILABLE; a backend that did
	// not answer carries the error of its probe (PLUGIN_UNAVAILABLE,
	// IO_ERROR, BACKEND_BUSY, or DeadlineExceeded after ProbeTimeout).
	// Its text may name what the backend connects to (a database's user,
	// name and address): it is for logs and authenticated callers.
	Err error
}

// probes holds the backends' last readiness probe, shared by concurrent
// callers and reused for ProbeTTL.
type probes struct {
	mu      sync.Mutex
	at      time.Time     // when checks was probed; zero before the first
	checks  []Check       // one per backend, in configuration order
	running chan struct{} // closed when the probe under way ends; nil when none runs
}

// Ready checks whether the engine can serve: every plugin process runs (in
// name order), and every persistence backend, in configuration order,
// answers within ProbeTimeout a Describe, which makes its plugin open a
// file descriptor (a plugin out of descriptors fails it), and a Stat of a
// probe id, which reaches its storage (a database that is down fails it;
// "not found" is an answer). Neither reads events nor changes anything.
// The backends' probe is shared by concurrent callers and reused for
// ProbeTTL; the plugins' processes are looked at on every call. It
// returns one Check per plugin and one per backend; the engine is ready
// when every Err is nil. When ctx ends before the probe does, the
// backends not yet probed carry ctx's error.
func (e *Engine) Ready(ctx context.Context) []Check {
	names := make([]string, 0, len(e.Plugins))
	for name := range e.Plugins {
		names = append(names, name)
	}
	slices.Sort(names)
	checks := make([]Check, 0, len(names)+len(e.backends))
	for _, name := range names {
		c := Check{Component: ComponentPlugin, Name: name}
		if !e.Plugins[name].Up() {
			c.Err = sdk.Errorf(sdk.CodePluginUnavailable, "plugin", "plugin %s: the process is not running (it is being restarted)", name)
		}
		checks = append(checks, c)
	}
	return append(checks, e.probeBackends(ctx)...)
}

// probeBackends returns the backends' checks: the last probe's when it is
// younger than ProbeTTL, else those of a new probe (or of the one under
// way), which runs within ProbeTimeout whatever ctx says.
func (e *Engine) probeBackends(ctx context.Context) []Check {
	p := &e.probes
	p.mu.Lock()
	if !p.at.IsZero() && time.Since(p.at) < ProbeTTL {
		defer p.mu.Unlock()
		return p.checks
	}
	if p.running == nil {
		p.running = make(chan struct{})
		go e.probe(p.running)
	}
	running := p.running
	p.mu.Unlock()
	select {
	case <-running:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.checks
	case <-ctx.Done():
		checks := make([]Check, len(e.backends))
		for i, b := range e.backends {
			checks[i] = Check{Component: ComponentBackend, Name: b.Name, Err: ctx.Err()}
		}
		return checks
	}
}

// probe probes every backend within ProbeTimeout, concurrently, stores the
// checks and closes done.
func (e *Engine) probe(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout)
	defer cancel()
	checks := make([]Check, len(e.backends))
	var wg sync.WaitGroup
	for i, b := range e.backends {
		checks[i] = Check{Component: ComponentBackend, Name: b.Name}
		wg.Go(func() { checks[i].Err = probeBackend(ctx, b) })
	}
	wg.Wait()
	p := &e.probes
	p.mu.Lock()
	p.checks, p.at, p.running = checks, time.Now(), nil
	p.mu.Unlock()
	close(done)
}

// probeBackend is one backend's probe: nil when it answered.
func probeBackend(ctx context.Context, b store.Backend) error {
	if _, err := b.Persistence.Describe(ctx); err != nil {
		return err
	}
	if _, err := b.Persistence.Stat(ctx, readyProbeID); unavailable(err) {
		return err
	}
	return nil
}

// unavailable reports whether a probe's error says the backend did not
// answer: a retryable code (the backend or its plugin is down or busy), or
// no code at all (the context ended, the transport failed).
func unavailable(err error) bool {
	if err == nil || errors.Is(err, sdk.CodeSessionNotFound) {
		return false
	}
	return sdk.Retryable(err) || sdk.CodeOf(err) == ""
}
