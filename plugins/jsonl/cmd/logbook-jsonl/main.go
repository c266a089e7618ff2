// Command logbook-jsonl serves the JSONL persistence backend as a
// standalone logbook plugin, for a `plugin "jsonl" { command = … }` block.
// The logbook binary serves the same plugin as `logbook plugin jsonl`.
package main

import (
	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// version is reported in GetInfo; set it with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	pluginrpc.Serve(jsonl.ServeConfig(version))
}
