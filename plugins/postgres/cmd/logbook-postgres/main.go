// Command logbook-postgres serves the PostgreSQL persistence backend
// (plugins/postgres) as a stand-alone logbook plugin binary, for a plugin
// block with a command. The logbook binary bundles the same plugin as
// `logbook plugin postgres`.
package main

import (
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// version is the build's version, reported in GetInfo; set it with
// -ldflags "-X main.version=…".
var version = "dev"

func main() {
	pluginrpc.Serve(postgres.ServeConfig(version))
}
