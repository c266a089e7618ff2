// Package bundle registers the bundled plugin "memory" (package memory) with
// pluginrpc.Bundle, so the program that imports it serves the plugin as
// `<program> plugin memory`:
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/memory/bundle"
//
// It is light: package logbook imports it, so every embedding program links
// it. The logbook binary imports every bundle package.
package bundle

import (
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func init() { pluginrpc.Bundle("memory", serveConfig) }

// serveConfig is what the memory plugin process serves: a fresh in-memory
// backend, which lives as long as the process.
func serveConfig(version string) pluginrpc.ServeConfig {
	return pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "memory", Version: version, Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: memory.Capabilities()},
		Persistence: memory.New(),
	}
}
