package service

import (
	"context"
	"net/http"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/runtime/internal/tenantmap"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options configure Open: Config, the configuration to run, is required;
// the other fields are what the embedding program decides beyond it (where
// the bundled plugins run from, logging, time, read-only use, metrics, the
// live-session cap), and the zero value of each is a working default.
type Options struct {
	// Config is the configuration to run; required.
	Config *config.Config
	// Executable is the binary the bundled plugins run from (it re-execs
	// itself as `<binary> plugin <name>`); default os.Executable().
	Executable string
	// Logger receives the runtime's and the plugins' logs; default a null
	// logger.
	Logger hclog.Logger
	// ReadOnly makes a service that only reads: every write is refused
	// with SESSION_READ_ONLY and it never takes a session's write
	// ownership (`logbook view`).
	ReadOnly bool
	// CreateDataDir creates Config.DataDir (0700) when it does not exist,
	// as the commands that write do; a read leaves the file system as it
	// is.
	CreateDataDir bool
	// Metrics collects the store's, the plugins' and the server's
	// measurements, which Serve publishes at /metrics (docs/operations.md,
	// "Health and metrics"); default off.
	Metrics bool
	// Clock stamps events and drives the write window and retry backoff;
	// default the system clock.
	Clock Clock
	// ModelInfo returns a model's context window when the program knows it,
	// for the compaction pressure policy (docs/compaction.md); default nil,
	// which leaves the window to each session's request/context.
	ModelInfo func(provider, model string) (contextWindow int64, ok bool)
	// MaxLiveSessions caps the sessions live at once: one more create,
	// resume or fork fails with TOO_MANY_LIVE_SESSIONS (retryable) and
	// creates or claims nothing. Default 0: the configuration's
	// max_live_sessions. Open refuses a cap the persistence plugins' file
	// descriptor limit cannot hold (CONFIG_INVALID).
	MaxLiveSessions int
}

// Clock is the runtime's time source (Options.Clock).
type Clock interface {
	// NowMillis returns the wall time in Unix milliseconds.
	NowMillis() int64
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending Clock.AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did.
	Stop() bool
}

// storeClock adapts a Clock to the store's.
type storeClock struct{ c Clock }

func (c storeClock) NowMillis() int64 { return c.c.NowMillis() }

func (c storeClock) AfterFunc(d time.Duration, f func()) store.Timer { return c.c.AfterFunc(d, f) }

// Service is a running logbook: the configured plugins, the store over
// them, and the sessions this service made live. Its methods are safe for
// concurrent use.
type Service struct {
	e *engine.Engine
	h *host.Host
	// cfg is Options.Config.
	cfg *config.Config
	// metrics, with Options.Metrics, observes the store; nil without.
	metrics *metrics.Metrics
	// log and readOnly are Options.Logger and Options.ReadOnly, which a
	// tenant's service takes too.
	log      hclog.Logger
	readOnly bool
	// root is the service Open returned, for a named tenant's service
	// (Tenant); nil for that service itself. tenants are the named
	// tenants' services, held by the root only.
	root    *Service
	tenants tenantmap.Map[*Service]
}

// Open starts the plugins o.Config names and the store over them. On
// failure everything started so far is stopped.
func Open(ctx context.Context, o Options) (*Service, error) {
	if o.Config == nil {
		return nil, sdk.Errorf(sdk.CodeUsage, "service", "Options.Config is required")
	}
	if o.MaxLiveSessions < 0 {
		return nil, sdk.Errorf(sdk.CodeUsage, "service", "Options.MaxLiveSessions %d is negative; 0 takes the configuration's max_live_sessions", o.MaxLiveSessions)
	}
	if o.MaxLiveSessions > 0 {
		c := *o.Config
		c.MaxLiveSessions = int64(o.MaxLiveSessions)
		o.Config = &c
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.CreateDataDir {
		if err := os.MkdirAll(o.Config.DataDir, 0o700); err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "service", Detail: "cannot create the data directory " + o.Config.DataDir, Err: err}
		}
	}
	eo := engine.Options{Executable: o.Executable, Logger: o.Logger, ModelInfo: o.ModelInfo}
	if o.Clock != nil {
		eo.Clock = storeClock{o.Clock}
	}
	var m *metrics.Metrics
	if o.Metrics {
		m = metrics.New()
		eo.Observer = m
	}
	e, err := engine.Start(ctx, o.Config, eo)
	if err != nil {
		return nil, err
	}
	if m != nil {
		if err := m.Watch(e); err != nil {
			_ = e.Close(ctx)
			return nil, err
		}
	}
	s := &Service{e: e, cfg: o.Config, metrics: m, log: o.Logger, readOnly: o.ReadOnly}
	s.h = s.newHost(e)
	return s, nil
}

// newHost returns the host of one tenant's engine, read-only when the
// service is.
func (s *Service) newHost(e *engine.Engine) *host.Host {
	if s.readOnly {
		return host.NewReadOnly(e, s.log)
	}
	return host.New(e, s.log)
}

// Close flushes and releases every live session of every tenant, then
// stops the plugins. It returns the flush errors joined; the plugins stop
// either way. Called on a tenant's service (Tenant) it closes the service
// that tenant came from, every tenant included; a second Close does
// nothing and returns nil.
func (s *Service) Close(ctx context.Context) error {
	if s.root != nil {
		return s.root.Close(ctx)
	}
	tenants, open := s.tenants.Close("the service is closed")
	if !open {
		return nil
	}
	for _, t := range tenants {
		t.h.Stop()
	}
	s.h.Stop()
	return s.e.Close(ctx)
}

// MetricsHandler serves, in Prometheus's text format, what Options.Metrics
// collects: the store's, the plugins' and (once served) the server's
// measurements, from a registry of their own, never Prometheus's global
// one. A program that embeds the runtime mounts it wherever it serves
// HTTP; it is nil without Options.Metrics.
func (s *Service) MetricsHandler() http.Handler {
	if s.metrics == nil {
		return nil
	}
	return s.metrics.Handler()
}
