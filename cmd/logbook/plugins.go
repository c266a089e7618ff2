package main

import (
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// bundled maps each bundled plugin's name to the function that serves it.
var bundled = map[string]func(){
	"jsonl": func() { pluginrpc.Serve(jsonl.ServeConfig(version)) },
	"memory": func() {
		pluginrpc.Serve(pluginrpc.ServeConfig{
			Info:        sdk.Info{Name: "memory", Version: version, Kinds: []sdk.Kind{sdk.KindPersistence}},
			Persistence: memory.New(),
		})
	},
	"sqlite": func() { pluginrpc.Serve(sqlite.ServeConfig(version)) },
}
