package logbook

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options configure Open. The zero value is not usable: set DataDir, or
// give a configuration in Config or ConfigFile.
type Options struct {
	// DataDir is where data lives. With neither Config nor ConfigFile it is
	// required and the embedded default configuration (config.Default:
	// JSONL with zstd under DataDir, compaction with the bundled
	// compactor-summary plugin and the pruner) is used. This package does
	// not link compactor-summary: a program that relies on the default
	// links it by importing
	// github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle (and
	// calls ServePlugins), sets PluginBinary, or passes config.Headless as
	// Config (the same without compaction); otherwise Open fails with
	// PLUGIN_UNAVAILABLE. With ConfigFile, DataDir replaces the file's
	// data_dir (as the CLI's --data does). A relative DataDir is relative to
	// the working directory. It is created (0700) when it does not exist.
	DataDir string
	// Config is a configuration built or parsed by package config; at most
	// one of Config and ConfigFile. DataDir must be empty with it (a Config
	// carries its resolved data_dir).
	Config *config.Config
	// ConfigFile is an HCL configuration file (docs/operations.md), read
	// with config.Load; at most one of Config and ConfigFile.
	ConfigFile string
	// PluginBinary is an installed logbook binary the bundled plugins run
	// from (as `logbook plugin <name>`). Default "": this program, which
	// must then call ServePlugins first in main.
	PluginBinary string
	// Logger receives the runtime's and the plugins' logs; default none.
	Logger hclog.Logger
	// Clock stamps events and drives the write window and retry backoff;
	// default the system clock.
	Clock service.Clock
	// ModelInfo returns a model's context window when the program knows it,
	// for the compaction pressure policy (docs/compaction.md); default nil,
	// which leaves the window to each session's request/context.
	ModelInfo func(provider, model string) (contextWindow int64, ok bool)
	// MaxLiveSessions caps the sessions live in the runtime at once: one
	// more Create, Resume or Fork fails with TOO_MANY_LIVE_SESSIONS
	// (retryable) and creates or claims nothing. Default 0: the
	// configuration's max_live_sessions (1000 unless it says otherwise).
	// Open refuses a cap the persistence plugins' file descriptor limit
	// cannot hold (CONFIG_INVALID).
	MaxLiveSessions int
}

// Runtime is a running logbook inside this program: the configured plugins
// as subprocesses and the store that owns the live sessions. Safe for
// concurrent use.
type Runtime struct {
	svc *service.Service
}

// Open starts logbook as configured by o: it starts the plugins the
// configuration names and attaches the persistence backends. A bundled
// plugin needs a program to run it (ServePlugins or Options.PluginBinary);
// without one Open fails at once with PLUGIN_UNAVAILABLE. A bad option is
// USAGE, a bad configuration CONFIG_INVALID. Close stops it all.
func Open(ctx context.Context, o Options) (*Runtime, error) {
	cfg, err := o.config()
	if err != nil {
		return nil, err
	}
	exe, err := pluginExecutable(o, cfg)
	if err != nil {
		return nil, err
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: exe, Logger: o.Logger, Clock: o.Clock, ModelInfo: o.ModelInfo, MaxLiveSessions: o.MaxLiveSessions, CreateDataDir: true})
	if err != nil {
		return nil, err
	}
	return &Runtime{svc: svc}, nil
}

// config returns the configuration o selects.
func (o Options) config() (*config.Config, error) {
	switch {
	case o.Config != nil && o.ConfigFile != "":
		return nil, sdk.Errorf(sdk.CodeUsage, "logbook", "set one of Options.Config and Options.ConfigFile, not both")
	case o.Config != nil && o.DataDir != "":
		return nil, sdk.Errorf(sdk.CodeUsage, "logbook", "Options.DataDir applies to the embedded default and to ConfigFile; a Config carries its own DataDir")
	case o.Config != nil:
		return o.Config, nil
	case o.ConfigFile != "":
		return config.Load(o.ConfigFile, config.Overrides{DataDir: o.DataDir})
	case o.DataDir == "":
		return nil, sdk.Errorf(sdk.CodeUsage, "logbook", "set Options.DataDir (where the embedded default configuration keeps sessions), or give Options.Config or Options.ConfigFile")
	}
	return config.Default(config.Overrides{DataDir: o.DataDir}), nil
}

// Close shuts down in order: every live session is flushed and released,
// then every plugin stops. It returns what the flushes and releases
// returned; after it every method of rt and of its sessions fails.
func (rt *Runtime) Close(ctx context.Context) error { return rt.svc.Close(ctx) }

// Create makes a new live session with this id ("" generates a lowercase
// UUIDv7) on every backend, its header from o (the zero CreateOptions: a
// plain top-level session). An id that is live or stored already is
// SESSION_ALREADY_EXISTS; a bad header field is SEED_INVALID.
func (rt *Runtime) Create(ctx context.Context, id string, o events.CreateOptions) (*Session, error) {
	return wrap(rt.svc.Create(ctx, service.CreateRequest{ID: id, Header: o}))
}

// Resume makes a stored session live again (docs/architecture.md): it
// takes the primary backend's write claim, reads the log back, cuts a torn
// tail and closes an interrupted turn, and writes that repair before the
// session is returned; the report says what it did. A session live in rt
// is ALREADY_OWNED, one stored nowhere SESSION_NOT_FOUND.
func (rt *Runtime) Resume(ctx context.Context, id string) (*Session, service.RepairReport, error) {
	s, rep, err := rt.svc.Resume(ctx, id)
	ss, err := wrap(s, err)
	return ss, rep, err
}

// Inspect returns a read-only view of a session: a snapshot of it when it
// is live in rt, else its stored log plus, in memory only, the closers a
// Resume would append. Nothing is written. The view's appends and Flush
// fail with SESSION_READ_ONLY; its Release does nothing.
func (rt *Runtime) Inspect(ctx context.Context, id string) (*Session, service.InspectReport, error) {
	v, rep, err := rt.svc.InspectView(ctx, id)
	vv, err := wrap(v, err)
	return vv, rep, err
}

// Fork creates the live session as ("" generates an id) from the events
// of session id up to and including seq *at (nil: all of them): the same
// bytes, an {inherited: true} marker, and closers when the cut leaves a
// turn open (docs/architecture.md). The source may be live in rt or
// stored; it is not changed.
func (rt *Runtime) Fork(ctx context.Context, id string, at *sdk.Seq, as string) (*Session, error) {
	return wrap(rt.svc.Fork(ctx, service.ForkRequest{Source: id, At: at, As: as}))
}

// List returns the sessions live in rt and those stored in the primary
// backend, by id. A session that cannot be read is listed with Err set.
func (rt *Runtime) List(ctx context.Context) ([]events.ListEntry, error) { return rt.svc.List(ctx) }

func wrap(s *service.Session, err error) (*Session, error) {
	if err != nil {
		return nil, err
	}
	return &Session{s: s}, nil
}
