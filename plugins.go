package logbook

import (
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"

	// The light bundled plugins, which every embedding program serves; the
	// others come in by the program's own import of their bundle package.
	_ "github.com/seed-e5e476df/logbook/plugins/jsonl/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/memory/bundle"
	_ "github.com/seed-e5e476df/logbook/plugins/pruner/bundle"
)

// servesPlugins records that ServePlugins ran in this process, so Open may
// start the bundled plugins as subprocesses of this program.
var servesPlugins atomic.Bool

// ServePlugins lets this program run logbook's bundled plugins: the JSONL
// and memory backends and the pruner, which package logbook links, and
// each other bundled plugin whose registration package the program
// imports (config.BundledPlugin.Bundle):
//
//	import _ "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle"            // the SQLite backend
//	import _ "github.com/seed-e5e476df/logbook/plugins/postgres/bundle"          // the PostgreSQL backend
//	import _ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle" // the summarizer
//
// A program links only the backends it imports, so one that keeps its
// sessions in JSONL links no SQL driver and no model API client.
//
// Open starts each bundled plugin the configuration names as a subprocess:
// this very program, run again as `<program> plugin <name>` with
// go-plugin's handshake in its environment. Call ServePlugins first in
// main, before flags are parsed or anything is written to stdout:
//
//	func main() {
//		logbook.ServePlugins()
//		// … the program as usual, which calls logbook.Open
//	}
//
// In the program itself it returns at once. In a plugin subprocess it
// serves that plugin and exits when the host stops it, so nothing after it
// runs there; a plugin name this build does not bundle exits with status 2.
// A program that does not call it must set Options.PluginBinary instead.
func ServePlugins() {
	servesPlugins.Store(true)
	args := os.Args
	if len(args) != 3 || args[1] != service.BundledPluginArg || os.Getenv(sdk.MagicCookieKey) != sdk.MagicCookieValue {
		return
	}
	cfg, ok := pluginrpc.Bundled(args[2], moduleVersion())
	if !ok {
		fmt.Fprintf(os.Stderr, "logbook: USAGE: no bundled plugin %q; bundled: %s\n", args[2], strings.Join(pluginrpc.BundledNames(), ", "))
		os.Exit(2)
	}
	pluginrpc.Serve(cfg)
	os.Exit(0)
}

// modulePath is this module's import path.
const modulePath = "github.com/seed-e5e476df/logbook"

// moduleVersion is the version of this module the program was built with,
// which the bundled plugins report in GetInfo; "dev" when the build does
// not say (a development build of the module itself, or no build
// information).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
		if m.Path == modulePath && m.Version != "" && m.Version != "(devel)" {
			return m.Version
		}
	}
	return "dev"
}

// pluginExecutable is the program the plugin host re-runs for bundled
// plugins: PluginBinary when set, else this program when ServePlugins ran.
// When neither is the case and cfg names a bundled plugin it fails at once
// with PLUGIN_UNAVAILABLE naming both remedies: otherwise the host would
// run this program as the plugin, which would never answer the handshake.
// Likewise when this program serves them but does not link one of them
// (unlinked). "" leaves the host's default (this program), which cfg never uses.
func pluginExecutable(o Options, cfg *config.Config) (string, error) {
	if o.PluginBinary != "" {
		if _, err := os.Stat(o.PluginBinary); err != nil {
			e := sdk.Errorf(sdk.CodeConfigInvalid, "logbook", "Options.PluginBinary %s is not a logbook binary this process can run", o.PluginBinary)
			e.Err = err
			return "", e
		}
		return o.PluginBinary, nil
	}
	need := bundledNames(cfg)
	if len(need) == 0 {
		return "", nil
	}
	if !servesPlugins.Load() {
		return "", sdk.Errorf(sdk.CodePluginUnavailable, "logbook",
			"the configuration runs the bundled plugins %s, which need a program to run them: call logbook.ServePlugins() first in main, or set Options.PluginBinary to an installed logbook binary",
			strings.Join(need, ", "))
	}
	if err := unlinked(need); err != nil {
		return "", err
	}
	return os.Executable()
}

// unlinked refuses with PLUGIN_UNAVAILABLE when this program registered
// (pluginrpc.Bundle) only some of the bundled plugins need, naming the
// package each missing one comes in by.
func unlinked(need []string) error {
	linked := pluginrpc.BundledNames()
	var missing, imports []string
	for _, name := range need {
		if slices.Contains(linked, name) {
			continue
		}
		missing = append(missing, name)
		if pkg, ok := config.BundlePackage(name); ok {
			imports = append(imports, fmt.Sprintf("_ %q", pkg))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return sdk.Errorf(sdk.CodePluginUnavailable, "logbook",
		"the configuration runs the bundled plugins %s, which this program does not link: import %s in package main, or set Options.PluginBinary to an installed logbook binary (it bundles every plugin)",
		strings.Join(missing, ", "), strings.Join(imports, " and "))
}

// bundledNames returns the plugins cfg starts from the bundled table (no
// command of their own), in the order the engine starts them.
func bundledNames(cfg *config.Config) []string {
	var names []string
	add := func(name string) {
		if p := cfg.Plugin(name); p != nil && p.Command != "" {
			return
		}
		for _, n := range names {
			if n == name {
				return
			}
		}
		names = append(names, name)
	}
	for _, p := range cfg.Persistence {
		add(p.Name)
	}
	for _, p := range cfg.Plugins {
		add(p.Name)
	}
	if c := cfg.Compaction; c != nil {
		add(c.Summarizer)
		if c.Pruner != "" {
			add(c.Pruner)
		}
	}
	return names
}
