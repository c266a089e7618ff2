package pluginrpc_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// A plugin's main is one call: Serve with the plugin's Info and one
// implementation per kind it declares. Serve returns when the host closes
// the connection; a process not started by a logbook host gets a message
// saying so and exits 1, so this example does not run.
func ExampleServe() {
	b := memory.New() // any sdk.Persistence: the plugin author's backend
	pluginrpc.Serve(pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:    "my-backend",
			Version: "0.1.0",
			Kinds:   []sdk.Kind{sdk.KindPersistence},
		},
		Persistence: b,
		// Configurable: b, when the plugin reads a config block.
	})
}

// Validate checks a ServeConfig as Serve does, so a plugin's own test
// catches a Kinds list that does not match the implementations before any
// host starts the plugin.
func ExampleServeConfig_Validate() {
	cfg := pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "my-backend", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence: memory.New(),
	}
	fmt.Println(cfg.Validate())

	cfg.Info.Kinds = append(cfg.Info.Kinds, sdk.KindPruner)
	fmt.Println(cfg.Validate())
	// Output:
	// <nil>
	// plugin: CONFIG_INVALID: plugin "my-backend" declares kind "pruner" but ServeConfig has no implementation for it
}
