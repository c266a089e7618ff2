// Package bundled is the table of the plugins built into logbook, served by
// a program that the plugin host (runtime/pluginhost) re-runs as
// `<program> plugin <name>` (pluginhost.BundledArg): the logbook binary
// (cmd/logbook) and an embedder's program that calls logbook.ServePlugins.
package bundled

import (
	"slices"

	compactorsummary "github.com/seed-e5e476df/logbook/plugins/compactor-summary"
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// plugins maps each bundled plugin's name to the function that serves it,
// reporting version in GetInfo.
var plugins = map[string]func(version string){
	"compactor-summary": func(v string) { pluginrpc.Serve(compactorsummary.ServeConfig(v)) },
	"jsonl":             func(v string) { pluginrpc.Serve(jsonl.ServeConfig(v)) },
	"memory": func(v string) {
		pluginrpc.Serve(pluginrpc.ServeConfig{
			Info:        sdk.Info{Name: "memory", Version: v, Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: memory.Capabilities()},
			Persistence: memory.New(),
		})
	},
	"postgres": func(v string) { pluginrpc.Serve(postgres.ServeConfig(v)) },
	"pruner":   func(v string) { pluginrpc.Serve(pruner.ServeConfig(v)) },
	"sqlite":   func(v string) { pluginrpc.Serve(sqlite.ServeConfig(v)) },
}

// Has reports whether name is a bundled plugin.
func Has(name string) bool {
	_, ok := plugins[name]
	return ok
}

// Serve serves the bundled plugin name, reporting version in GetInfo,
// until the plugin host stops it. It reports false, serving nothing, when
// name is not a bundled plugin.
func Serve(name, version string) bool {
	serve, ok := plugins[name]
	if ok {
		serve(version)
	}
	return ok
}

// Names returns the names of the bundled plugins, sorted.
func Names() []string {
	names := make([]string, 0, len(plugins))
	for n := range plugins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
