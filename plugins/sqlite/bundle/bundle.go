// Package bundle registers the bundled plugin "sqlite" (package sqlite) with
// pluginrpc.Bundle, so the program that imports it serves the plugin as
// `<program> plugin sqlite`:
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle"
//
// Package logbook does not import it: an embedding program whose
// configuration names the plugin imports it itself, and one that does not
// name it links none of its dependencies. The logbook binary imports every
// bundle package.
package bundle

import (
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func init() { pluginrpc.Bundle("sqlite", sqlite.ServeConfig) }
