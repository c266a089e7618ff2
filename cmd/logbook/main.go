// Command logbook is the one logbook binary. This build serves the bundled
// plugins (`logbook plugin <name>`), which the plugin host launches as
// subprocesses of the binary itself; the operator CLI and the server come
// with later work.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// version is the build's version, reported by bundled plugins in GetInfo.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 2 && args[0] == "plugin" {
		serve, ok := bundled[args[1]]
		if !ok {
			fmt.Fprintf(os.Stderr, "logbook plugin: no bundled plugin %q; bundled: %s\n", args[1], strings.Join(bundledNames(), ", "))
			return 2
		}
		serve()
		return 0
	}
	fmt.Fprintf(os.Stderr, "usage: logbook plugin <name>   (serve a bundled plugin; the plugin host runs this)\nbundled plugins: %s\n", strings.Join(bundledNames(), ", "))
	return 2
}

func bundledNames() []string {
	names := make([]string, 0, len(bundled))
	for n := range bundled {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
