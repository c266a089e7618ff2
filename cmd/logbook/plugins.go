package main

import (
	compactorsummary "github.com/seed-e5e476df/logbook/plugins/compactor-summary"
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// bundled maps each bundled plugin's name to the function that serves it.
var bundled = map[string]func(){
	"compactor-summary": func() {
		pluginrpc.Serve(compactorsummary.ServeConfig(version))
	},
	"jsonl": func() { pluginrpc.Serve(jsonl.ServeConfig(version)) },
	"memory": func() {
		pluginrpc.Serve(pluginrpc.ServeConfig{
			Info:        sdk.Info{Name: "memory", Version: version, Kinds: []sdk.Kind{sdk.KindPersistence}},
			Persistence: memory.New(),
		})
	},
	"pruner": func() { pluginrpc.Serve(pruner.ServeConfig(version)) },
	"sqlite": func() { pluginrpc.Serve(sqlite.ServeConfig(version)) },
}
