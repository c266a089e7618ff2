package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/service"
)

func init() {
	commands = append(commands, newPluginsCmd)
}

// newPluginsCmd is `logbook plugins`.
func newPluginsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "plugins",
		Annotations: offersJSONAnnotation(),
		Short:       "List the configured plugins: kind, version, protocol, sha256, running or not",
		Example: "  logbook plugins\n" +
			"  logbook plugins --json\n" +
			"  logbook plugins --config mirrored.hcl",
		Long: "plugins starts every plugin the configuration names, one by one, and reports what\n" +
			"each says about itself. A plugin that fails to start is listed as not running, and\n" +
			"the reason goes to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := a.config()
			if err != nil {
				return err
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			rows, err := service.Plugins(ctx, cfg, service.PluginsOptions{Executable: exe, Logger: a.logger()})
			if err != nil {
				return err
			}
			for _, r := range rows {
				if r.Error != "" {
					fmt.Fprintf(a.stderr, "logbook plugins: %s does not start: %s\n", r.Name, r.Error)
				}
			}
			if a.json {
				return writeJSON(a.stdout, rows)
			}
			return writePluginTable(a.stdout, rows)
		},
	}
}

// writePluginTable prints the plugins as a table.
func writePluginTable(w io.Writer, rows []service.PluginStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tVERSION\tPROTOCOL\tSHA256\tRUNNING")
	for _, r := range rows {
		protocol := make([]string, len(r.Protocol))
		for i, p := range r.Protocol {
			protocol[i] = strconv.Itoa(p)
		}
		running := "no"
		if r.Running {
			running = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, dash(strings.Join(r.Kinds, ",")), dash(r.Version),
			dash(strings.Join(protocol, ",")), dash(r.SHA256), running)
	}
	return tw.Flush()
}

// dash returns s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
