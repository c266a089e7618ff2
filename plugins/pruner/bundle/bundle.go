// Package bundle registers the bundled plugin "pruner" (package pruner) with
// pluginrpc.Bundle, so the program that imports it serves the plugin as
// `<program> plugin pruner`:
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/pruner/bundle"
//
// It is light: package logbook imports it, so every embedding program links
// it. The logbook binary imports every bundle package.
package bundle

import (
	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func init() { pluginrpc.Bundle("pruner", pruner.ServeConfig) }
