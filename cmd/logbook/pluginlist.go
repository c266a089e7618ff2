package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/pluginhost"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() {
	commands = append(commands, newPluginsCmd)
}

// pluginRow is one configured plugin of `logbook plugins`.
type pluginRow struct {
	Name     string   `json:"name"`
	Kinds    []string `json:"kinds"`
	Version  string   `json:"version,omitempty"`
	Protocol []int    `json:"protocol,omitempty"`
	SHA256   string   `json:"sha256,omitempty"`
	Running  bool     `json:"running"`
	Error    string   `json:"error,omitempty"`
}

// configuredPlugin is a plugin the configuration names, with the kind its
// role implies and the config its block gives.
type configuredPlugin struct {
	name string
	kind sdk.Kind
	conf []byte
}

// configuredPlugins lists every plugin the configuration names, once each,
// in order: the persistence blocks, the compaction block's summarizer and
// pruner, then the remaining plugin blocks.
func configuredPlugins(cfg *config.Config) []configuredPlugin {
	var out []configuredPlugin
	seen := map[string]bool{}
	add := func(name string, kind sdk.Kind, conf []byte) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		if p := cfg.Plugin(name); p != nil && len(conf) == 0 {
			conf = p.Config
		}
		out = append(out, configuredPlugin{name: name, kind: kind, conf: conf})
	}
	for _, p := range cfg.Persistence {
		add(p.Name, sdk.KindPersistence, p.Config)
	}
	if c := cfg.Compaction; c != nil {
		add(c.Summarizer, sdk.KindSummarizer, nil)
		add(c.Pruner, sdk.KindPruner, nil)
	}
	for _, p := range cfg.Plugins {
		kind, _ := config.LookupBundled(p.Name)
		add(p.Name, kind, nil)
	}
	return out
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
			host, err := pluginhost.New(pluginhost.Options{Executable: exe, InsecureNoMTLS: !cfg.AutoMTLS,
				StartTimeout: cfg.PluginStartTimeout, RPCMaxBytes: int(cfg.RPCMaxBytes), Logger: a.logger()})
			if err != nil {
				return err
			}
			defer host.Close()
			var rows []pluginRow
			for _, cp := range configuredPlugins(cfg) {
				rows = append(rows, pluginStatus(ctx, host, cfg, exe, cp))
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

// pluginStatus starts one configured plugin and reports it.
func pluginStatus(ctx context.Context, host *pluginhost.Host, cfg *config.Config, exe string, cp configuredPlugin) pluginRow {
	row := pluginRow{Name: cp.name, Kinds: []string{}}
	if cp.kind != "" {
		row.Kinds = append(row.Kinds, string(cp.kind))
	}
	spec := pluginhost.Spec{Name: cp.name, Config: cp.conf}
	binary := exe
	if p := cfg.Plugin(cp.name); p != nil && p.Command != "" {
		spec.Command, spec.Args, spec.SHA256 = p.Command, p.Args, p.SHA256
		binary = p.Command
		if path, err := exec.LookPath(p.Command); err == nil {
			binary = path
		}
	}
	row.SHA256 = spec.SHA256
	if row.SHA256 == "" {
		row.SHA256, _ = fileSHA256(binary)
	}
	pl, err := host.Start(ctx, spec)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer pl.Stop()
	info := pl.Info()
	row.Kinds = row.Kinds[:0]
	for _, k := range info.Kinds {
		row.Kinds = append(row.Kinds, string(k))
	}
	row.Version, row.Protocol, row.Running = info.Version, info.ProtocolVersions, pl.Pid() != 0
	return row
}

// fileSHA256 returns the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writePluginTable prints the plugins as a table.
func writePluginTable(w io.Writer, rows []pluginRow) error {
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
