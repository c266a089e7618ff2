// Package engine assembles a running logbook from a configuration: it starts
// the configured plugins as subprocesses, attaches the persistence backends
// to a store in configuration order (the first is the primary), registers
// the log-only types and message projections the plugins declare, builds
// the compactor over the summarizer and pruner a compaction block names, and
// shuts everything down in order — flush and close every session, then stop
// the plugins.
package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/pluginhost"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/runtime/internal/tenantmap"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options are what the configuration does not say.
type Options struct {
	// Executable is the logbook binary bundled plugins re-exec; default
	// os.Executable().
	Executable string
	// Logger; default a null logger.
	Logger hclog.Logger
	// Clock for the store; default the system clock.
	Clock store.Clock
	// ModelInfo returns a model's context window when the host knows it,
	// for the compaction pressure policy (docs/compaction.md); default nil, which
	// leaves the window to each session's request/context.
	ModelInfo func(provider, model string) (contextWindow int64, ok bool)
	// Observer receives the store's measurements (store.Options.Observer;
	// runtime/internal/metrics.Metrics is one); default nil.
	Observer store.Observer
}

// Engine is a running logbook: a store over plugin-hosted backends.
type Engine struct {
	Store       *store.Store
	Host        *pluginhost.Host
	Plugins     map[string]*pluginhost.Plugin // by configured name
	Projections *pluginhost.Projections
	// Compactor runs compaction and pruning with the summarizer and pruner
	// plugins the compaction block names; nil without a compaction block
	// (a headless profile), which never writes compaction/* events.
	Compactor *compaction.Compactor
	// Spiller applies the spill policy (docs/compaction.md) to finished tool results
	// before a harness appends them: results over spill_max_inline_bytes go
	// to the local artifact store under spill_root. nil without a
	// compaction block; with spilling off (the default) it keeps every
	// result inline.
	Spiller *compaction.Spiller

	backends []store.Backend // the persistence backends, in configuration order
	probes   probes          // their last readiness probe (Ready)

	// storeOpts are the options Store was made with, which a tenant's
	// store copies; compact builds a compactor over a store (nil without
	// a compaction block).
	storeOpts store.Options
	compact   func(*store.Store) (*compaction.Compactor, error)
	cfg       *config.Config
	// root is the engine Start returned, for the engine of a named tenant
	// (Tenant); nil for that engine itself. tenants are the named
	// tenants' engines, held by the root only.
	root    *Engine
	tenant  string // the tenant's name; sdk.DefaultTenant for the root
	tenants tenantmap.Map[*Engine]
}

// Start launches every configured plugin and builds the store. On failure
// everything started so far is stopped.
func Start(ctx context.Context, cfg *config.Config, opts Options) (*Engine, error) {
	host, err := pluginhost.New(pluginhost.Options{
		Executable:     opts.Executable,
		InsecureNoMTLS: !cfg.AutoMTLS,
		StartTimeout:   cfg.PluginStartTimeout,
		RPCMaxBytes:    int(cfg.RPCMaxBytes),
		Logger:         opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	e := &Engine{Host: host, Plugins: map[string]*pluginhost.Plugin{}, Projections: &pluginhost.Projections{}}
	fail := func(err error) (*Engine, error) {
		host.Close()
		return nil, err
	}
	var backends []store.Backend
	for _, p := range cfg.Persistence {
		pl, err := e.start(ctx, cfg, p.Name, p.Config)
		if err != nil {
			return fail(err)
		}
		if !serves(pl.Info(), sdk.KindPersistence) {
			return fail(sdk.Errorf(sdk.CodeConfigInvalid, "engine", "plugin %q named in a persistence block serves no persistence", p.Name))
		}
		backends = append(backends, store.Backend{Name: p.Name, Persistence: pl.Persistence()})
	}
	if err := checkDescriptors(ctx, cfg.MaxLiveSessions, backends); err != nil {
		return fail(err)
	}
	for _, p := range cfg.Plugins {
		if _, started := e.Plugins[p.Name]; started {
			continue
		}
		if _, err := e.start(ctx, cfg, p.Name, p.Config); err != nil {
			return fail(err)
		}
	}
	summarizer, pruner, err := e.startCompaction(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	pluginTypes, names := map[string]bool{}, map[string]bool{}
	owner := map[string]string{}
	for name, pl := range e.Plugins {
		names[name] = true
		info := pl.Info()
		for _, d := range info.EventTypes {
			if session.IsCoreType(d.Type) {
				return fail(sdk.Errorf(sdk.CodeEventTypeReserved, "engine", "plugin %q declares the core type %q", name, d.Type))
			}
			if other, dup := owner[d.Type]; dup {
				return fail(sdk.Errorf(sdk.CodeEventTypeReserved, "engine", "plugins %q and %q both declare %q", other, name, d.Type))
			}
			owner[d.Type] = name
			pluginTypes[d.Type] = d.Ignorable
		}
		if serves(info, sdk.KindProjection) {
			if err := e.Projections.Register(ctx, pl); err != nil {
				return fail(err)
			}
		}
	}
	so := store.Options{
		Backends:                 backends,
		Clock:                    opts.Clock,
		WriteWindow:              cfg.WriteWindow,
		RetryMaxBackoff:          cfg.RetryMaxBackoff,
		MaxPendingBytes:          cfg.MaxPendingBytes,
		MaxLiveSessions:          int(cfg.MaxLiveSessions),
		MaxPendingBytesTotal:     cfg.MaxPendingBytesTotal,
		WriteBackpressureTimeout: cfg.WriteBackpressureTimeout,
		MaxEventBytes:            int(cfg.MaxEventBytes),
		RPCMaxBytes:              int(cfg.RPCMaxBytes),
		PluginTypes:              pluginTypes,
		Plugins:                  names,
		Projections:              e.Projections,
		// The compaction invariants (docs/compaction.md) hold for every log, with
		// or without a compaction block: a headless profile writes no
		// compaction/* events itself, but a client's Append must not break
		// the bracket rules either.
		Relational: func() []session.Relational { return []session.Relational{compaction.NewValidator()} },
		SalvageDir: salvageDir(cfg, sdk.DefaultTenant),
		Logger:     opts.Logger,
		Observer:   opts.Observer,
	}
	st, err := store.New(so)
	if err != nil {
		return fail(err)
	}
	e.Store, e.storeOpts, e.tenant, e.cfg = st, so, sdk.DefaultTenant, cfg
	e.backends = backends
	if summarizer != nil {
		e.compact = compactorOver(cfg, opts, summarizer, pruner)
		if e.Compactor, err = e.compact(st); err != nil {
			_ = st.Close(ctx)
			return fail(err)
		}
		if e.Spiller, err = compaction.NewSpiller(cfg.Compaction.Spill, opts.Logger); err != nil {
			_ = st.Close(ctx)
			return fail(err)
		}
	}
	return e, nil
}

// compactorOver returns what builds the compactor of one tenant's store:
// every tenant's runs on the one summarizer and pruner, and flushes
// through its own store.
func compactorOver(cfg *config.Config, opts Options, summarizer, pruner *pluginhost.Plugin) func(*store.Store) (*compaction.Compactor, error) {
	return func(st *store.Store) (*compaction.Compactor, error) {
		co := compaction.Options{
			Summarizer:  summarizer.Summarizer(),
			Flush:       func(ctx context.Context, s *session.Session) error { _, err := st.Flush(ctx, s); return err },
			ModelInfo:   opts.ModelInfo,
			RPCMaxBytes: int(cfg.RPCMaxBytes),
			Logger:      opts.Logger,
		}
		if slices.Contains(summarizer.Info().Capabilities, "select-range") {
			co.RangeSelector = summarizer.Summarizer().(sdk.RangeSelector)
		}
		if pruner != nil {
			co.Pruner = pruner.Pruner()
		}
		return compaction.New(cfg.Compaction, co)
	}
}

// startCompaction starts the summarizer and pruner the compaction block
// names (unless a plugin block started them already) and checks that they
// serve those kinds. Without a compaction block it starts nothing.
func (e *Engine) startCompaction(ctx context.Context, cfg *config.Config) (summarizer, pruner *pluginhost.Plugin, err error) {
	if cfg.Compaction == nil {
		return nil, nil, nil
	}
	get := func(name string, kind sdk.Kind) (*pluginhost.Plugin, error) {
		pl, ok := e.Plugins[name]
		if !ok {
			var err error
			if pl, err = e.start(ctx, cfg, name, nil); err != nil {
				return nil, err
			}
		}
		if !serves(pl.Info(), kind) {
			return nil, sdk.Errorf(sdk.CodeConfigInvalid, "engine", "plugin %q named as the compaction %s serves no %s", name, kind, kind)
		}
		return pl, nil
	}
	if summarizer, err = get(cfg.Compaction.Summarizer, sdk.KindSummarizer); err != nil {
		return nil, nil, err
	}
	if cfg.Compaction.Pruner != "" {
		if pruner, err = get(cfg.Compaction.Pruner, sdk.KindPruner); err != nil {
			return nil, nil, err
		}
	}
	return summarizer, pruner, nil
}

// start launches one plugin under its configured name.
func (e *Engine) start(ctx context.Context, cfg *config.Config, name string, conf []byte) (*pluginhost.Plugin, error) {
	spec := pluginhost.Spec{Name: name, Config: conf}
	if p := cfg.Plugin(name); p != nil {
		spec.Command, spec.Args, spec.SHA256 = p.Command, p.Args, p.SHA256
		if len(p.Config) > 0 && len(conf) == 0 {
			spec.Config = p.Config
		}
	}
	pl, err := e.Host.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	e.Plugins[name] = pl
	return pl, nil
}

func serves(info sdk.Info, k sdk.Kind) bool {
	for _, x := range info.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// Compact runs a manual compaction of s with the configured summarizer
// (docs/compaction.md) and flushes it: of exactly the current nodes *start
// … *end when both are set, else of the largest balanced head of the
// surface, with sourceCommandID recorded in the bracket ("" = none). It
// refuses what CheckCompact refuses; a flush failure after the commit is
// COMPACTION_PERSISTENCE_FAILED.
func (e *Engine) Compact(ctx context.Context, s *session.Session, start, end *sdk.Seq, sourceCommandID string) (compaction.Outcome, error) {
	if err := e.CheckCompact(start, end); err != nil {
		return compaction.Outcome{}, err
	}
	if start == nil {
		return e.Compactor.CompactNow(ctx, s, sourceCommandID)
	}
	out, err := e.Compactor.CompactRegion(ctx, s, *start, *end, compaction.Manual)
	if err != nil {
		return out, err
	}
	if _, err := e.Store.Flush(ctx, s); err != nil {
		return out, sdk.Wrap(sdk.CodeCompactionPersistenceFailed, "compact", err)
	}
	return out, nil
}

// CheckCompact refuses a Compact before any session is touched: without a
// compaction block CONFIG_INVALID, a region with only one of start and end
// USAGE.
func (e *Engine) CheckCompact(start, end *sdk.Seq) error {
	switch {
	case e.Compactor == nil:
		return sdk.Errorf(sdk.CodeConfigInvalid, "compact", "the configuration has no compaction block (a headless profile); add one that names a summarizer to compact sessions")
	case (start == nil) != (end == nil):
		return sdk.Errorf(sdk.CodeUsage, "compact", "give both the start and the end seq of a region, or neither")
	}
	return nil
}

// Close shuts down in order: every live session of every tenant is
// flushed and its handles closed, then every plugin is stopped. It returns
// the stores' errors joined. Called on a tenant's engine (Tenant), it
// closes that tenant's store only.
func (e *Engine) Close(ctx context.Context) error {
	if e.root != nil {
		return e.Store.Close(ctx)
	}
	var err error
	tenants, _ := e.tenants.Close("the engine is closed")
	for _, t := range tenants {
		err = errors.Join(err, t.Store.Close(ctx))
	}
	if e.Store != nil {
		err = errors.Join(err, e.Store.Close(ctx))
	}
	e.Host.Close()
	return err
}

// salvageDir is where Salvage keeps the damaged bytes a salvaged child
// of tenant leaves out, beside the primary backend's sessions of that
// tenant: ".salvaged" under a JSONL root (a name that is never a session
// directory), or under the tenant's directory <root>/.tenants/<tenant>
// (docs/storage.md); "<file>.salvaged" beside a SQLite database file, else
// ".salvaged" under data_dir, each with a directory .tenants/<tenant>
// below it for a named tenant (no salvage artifact is ever named so).
func salvageDir(cfg *config.Config, tenant string) string {
	const name = ".salvaged"
	named := func(dir string) string {
		if tenant == sdk.DefaultTenant {
			return dir
		}
		return filepath.Join(dir, tenantsDir, tenant)
	}
	if len(cfg.Persistence) > 0 {
		switch p := cfg.Persistence[0]; {
		case p.JSONL != nil && tenant == sdk.DefaultTenant:
			return filepath.Join(p.JSONL.Root, name)
		case p.JSONL != nil:
			return filepath.Join(p.JSONL.Root, tenantsDir, tenant, name)
		case p.SQLite != nil && p.SQLite.Path != ":memory:":
			return named(p.SQLite.Path + name)
		}
	}
	return named(cfg.ResolvePath(name))
}
