package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/pluginhost"
	"github.com/seed-e5e476df/logbook/sdk"
)

// BundledPluginArg is the first argument of a bundled plugin's process:
// the plugin host runs `<executable> plugin <name>`, and a program that
// bundles plugins serves the one named when it sees it.
const BundledPluginArg = pluginhost.BundledArg

// PluginStatus is one configured plugin as it reports itself. Its JSON
// form is one entry of `logbook plugins --json`.
type PluginStatus struct {
	// Name is the plugin's name in the configuration.
	Name string `json:"name"`
	// Kinds are the kinds it serves: what it says once started, else the
	// kind its role in the configuration implies.
	Kinds []string `json:"kinds"`
	// Version is the version the plugin reports of itself, free form;
	// empty when it did not start.
	Version string `json:"version,omitempty"`
	// Protocol lists the plugin protocol versions it speaks; empty when
	// it did not start.
	Protocol []int `json:"protocol,omitempty"`
	// SHA256 is the configured digest of its binary, else the hex SHA-256
	// of the binary it runs from.
	SHA256 string `json:"sha256,omitempty"`
	// Running reports whether its process started and answered.
	Running bool `json:"running"`
	// Error is why it did not start.
	Error string `json:"error,omitempty"`
}

// PluginsOptions configure Plugins.
type PluginsOptions struct {
	// Executable is the binary the bundled plugins run from; default
	// os.Executable().
	Executable string
	// Logger receives the plugin host's and the plugins' logs; default a
	// null logger.
	Logger hclog.Logger
}

// Plugins starts every plugin cfg names, one at a time, and reports what
// each says about itself, in order: the persistence blocks, the compaction
// block's summarizer and pruner, then the remaining plugin blocks, each
// once. A plugin that fails to start is reported with Error set; the error
// returned is only that the plugin host itself could not start.
func Plugins(ctx context.Context, cfg *config.Config, o PluginsOptions) ([]PluginStatus, error) {
	if o.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "plugins", Detail: "cannot find the binary the bundled plugins run from", Err: err}
		}
		o.Executable = exe
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	host, err := pluginhost.New(pluginhost.Options{Executable: o.Executable, InsecureNoMTLS: !cfg.AutoMTLS,
		StartTimeout: cfg.PluginStartTimeout, RPCMaxBytes: int(cfg.RPCMaxBytes), Logger: o.Logger})
	if err != nil {
		return nil, err
	}
	defer host.Close()
	var out []PluginStatus
	for _, cp := range configuredPlugins(cfg) {
		out = append(out, pluginStatus(ctx, host, cfg, o.Executable, cp))
	}
	return out, nil
}

// configuredPlugin is a plugin the configuration names, with the kind its
// role implies and the config its block gives.
type configuredPlugin struct {
	name string
	kind sdk.Kind
	conf []byte
}

// configuredPlugins lists every plugin the configuration names, once each,
// in Plugins' order.
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

// pluginStatus starts one configured plugin and reports it.
func pluginStatus(ctx context.Context, host *pluginhost.Host, cfg *config.Config, exe string, cp configuredPlugin) PluginStatus {
	row := PluginStatus{Name: cp.name, Kinds: []string{}}
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

// PluginProcess is one running plugin process.
type PluginProcess struct {
	// Name is the plugin's configured name.
	Name string
	// Pid is its process id.
	Pid int
}

// PluginProcesses returns the plugin processes the service runs, by name.
func (s *Service) PluginProcesses() []PluginProcess {
	out := make([]PluginProcess, 0, len(s.e.Plugins))
	for name, p := range s.e.Plugins {
		out = append(out, PluginProcess{Name: name, Pid: p.Pid()})
	}
	slices.SortFunc(out, func(x, y PluginProcess) int { return strings.Compare(x.Name, y.Name) })
	return out
}
