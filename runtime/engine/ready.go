package engine

import (
	"context"
	"errors"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Readiness components: what a Check is about.
const (
	// ComponentPlugin is a plugin process.
	ComponentPlugin = "plugin"
	// ComponentBackend is the primary persistence backend.
	ComponentBackend = "backend"
)

// readyProbeID is the session id the readiness probe asks the primary
// backend about: any answer about it, "not found" included, shows the
// backend reachable.
const readyProbeID = "logbook-readiness-probe"

// Check is one component's part of a readiness check (Engine.Ready).
type Check struct {
	// Component is ComponentPlugin or ComponentBackend.
	Component string
	// Name is the plugin's or the backend's configured name.
	Name string
	// Err is nil when the component is ready, else why it is not: a
	// plugin that is not running is PLUGIN_UNAVAILABLE; a backend that did
	// not answer carries the error of its probe (PLUGIN_UNAVAILABLE,
	// IO_ERROR, BACKEND_BUSY, or ctx's error when it ended first).
	Err error
}

// Ready checks whether the engine can serve: every plugin process runs (in
// name order), and the primary backend answers a Stat of a probe id
// without an error that says it is unavailable (a Stat reads no events
// and changes nothing; "not found" is an answer). It returns one Check per
// plugin and one for the primary, if there is one; the engine is ready
// when every Err is nil. ctx bounds the probe.
func (e *Engine) Ready(ctx context.Context) []Check {
	names := make([]string, 0, len(e.Plugins))
	for name := range e.Plugins {
		names = append(names, name)
	}
	slices.Sort(names)
	checks := make([]Check, 0, len(names)+1)
	for _, name := range names {
		c := Check{Component: ComponentPlugin, Name: name}
		if !e.Plugins[name].Up() {
			c.Err = sdk.Errorf(sdk.CodePluginUnavailable, "plugin", "plugin %s: the process is not running (it is being restarted)", name)
		}
		checks = append(checks, c)
	}
	if e.primary.Persistence != nil {
		c := Check{Component: ComponentBackend, Name: e.primary.Name}
		if _, err := e.primary.Persistence.Stat(ctx, readyProbeID); unavailable(err) {
			c.Err = err
		}
		checks = append(checks, c)
	}
	return checks
}

// unavailable reports whether a probe's error says the backend did not
// answer: a retryable code (the backend or its plugin is down or busy), or
// no code at all (the context ended, the transport failed).
func unavailable(err error) bool {
	if err == nil || errors.Is(err, sdk.ErrSessionNotFound) {
		return false
	}
	return sdk.Retryable(err) || sdk.CodeOf(err) == ""
}
