// Command logbook is the one logbook binary: the operator CLI (see root.go
// and `logbook --help`), the runtime daemon (`logbook serve`) and the
// bundled plugins (`logbook plugin <name>`), which the plugin host launches
// as subprocesses of the binary itself.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"

	// Every bundled plugin: the logbook binary serves them all.
	_ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/jsonl/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/memory/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/postgres/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/pruner/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle"
	// The tokens of a postgres primary, kept in its database.
	_ "github.com/seed-e5e476df/logbook/runtime/service/pgtokens"
)

// version is the release stamp, set with -ldflags "-X main.version=…";
// without it buildVersion (version.go) reports the module version the Go
// toolchain recorded. That is what bundled plugins report in GetInfo and
// what `logbook version` and `logbook --version` print.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

// run dispatches one invocation and returns its exit status. `plugin
// <name>` serves a bundled plugin and bypasses the CLI entirely, so the
// plugin host's handshake owns stdout; everything else is the CLI, whose
// context ends at SIGINT or SIGTERM.
func run(args []string) int {
	if len(args) > 0 && args[0] == service.BundledPluginArg {
		return servePlugin(args[1:])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// servePlugin serves the bundled plugin named by args (exactly one name).
func servePlugin(args []string) int {
	names := strings.Join(pluginrpc.BundledNames(), ", ")
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: logbook plugin <name>   (serve a bundled plugin; the plugin host runs this)\nlogbook: USAGE: bundled plugins: %s\n", names)
		return 2
	}
	cfg, ok := pluginrpc.Bundled(args[0], buildVersion().Version)
	if !ok {
		fmt.Fprintf(os.Stderr, "logbook: USAGE: no bundled plugin %q; bundled: %s\n", args[0], names)
		return 2
	}
	pluginrpc.Serve(cfg)
	return 0
}
