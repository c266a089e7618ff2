// Package bundle registers the bundled plugin "compactor-summary" (package
// compactorsummary) with pluginrpc.Bundle, so the program that imports it
// serves the plugin as `<program> plugin compactor-summary`:
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle"
//
// Package logbook does not import it: an embedding program whose
// configuration names the plugin imports it itself, and one that does not
// name it links none of its dependencies. The logbook binary imports every
// bundle package.
package bundle

import (
	compactorsummary "github.com/seed-e5e476df/logbook/plugins/compactor-summary"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

func init() { pluginrpc.Bundle("compactor-summary", compactorsummary.ServeConfig) }
