package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func init() { commands = append(commands, newVersionCmd) }

// buildInfo is what `logbook version` reports about the running binary.
type buildInfo struct {
	// Version is the -ldflags "-X main.version=…" stamp when there is one,
	// else the module version the Go toolchain recorded (a pseudo-version
	// derived from the VCS commit for a build inside the repository), else
	// "dev".
	Version string `json:"version"`
	// Commit, Time and Modified come from the VCS stamp of the build
	// (vcs.revision, vcs.time, vcs.modified); empty or false when the build
	// had none (go build -buildvcs=false, or outside a checkout).
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// buildVersion reads the binary's build information.
func buildVersion() buildInfo {
	b := buildInfo{Version: version, Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "version",
		Short:       "Print the version and the VCS commit the binary was built from",
		Long:        "version prints the binary's version (the same as `logbook --version`), the VCS\ncommit and commit time it was built from, whether the checkout had local\nchanges, and the Go toolchain. --json prints the same as one JSON object.",
		Example:     "  logbook version\n  logbook version --json",
		Annotations: offersJSONAnnotation(),
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := buildVersion()
			if a.json {
				return json.NewEncoder(a.stdout).Encode(b)
			}
			fmt.Fprintf(a.stdout, "logbook %s\n", b.Version)
			if b.Commit != "" {
				fmt.Fprintf(a.stdout, "commit   %s\n", b.Commit)
			}
			if b.Time != "" {
				fmt.Fprintf(a.stdout, "time     %s\n", b.Time)
			}
			fmt.Fprintf(a.stdout, "modified %t\n", b.Modified)
			fmt.Fprintf(a.stdout, "go       %s\n", b.Go)
			return nil
		},
	}
}
