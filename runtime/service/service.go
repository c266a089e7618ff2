package service

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/engine"
	"github.com/seed-e5e476df/logbook/runtime/host"
	"github.com/seed-e5e476df/logbook/runtime/metrics"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Options say what the configuration does not.
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
}

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
}

// Open starts the plugins o.Config names and the store over them. On
// failure everything started so far is stopped.
func Open(ctx context.Context, o Options) (*Service, error) {
	if o.Config == nil {
		return nil, sdk.Errorf(sdk.CodeUsage, "service", "Options.Config is required")
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.CreateDataDir {
		if err := os.MkdirAll(o.Config.DataDir, 0o700); err != nil {
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "service", Detail: "cannot create the data directory " + o.Config.DataDir, Err: err}
		}
	}
	eo := engine.Options{Executable: o.Executable, Logger: o.Logger}
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
	s := &Service{e: e, cfg: o.Config, metrics: m}
	if o.ReadOnly {
		s.h = host.NewReadOnly(e, o.Logger)
	} else {
		s.h = host.New(e, o.Logger)
	}
	return s, nil
}

// Close flushes and releases every live session, then stops the plugins.
// It returns the flush errors joined; the plugins stop either way.
func (s *Service) Close(ctx context.Context) error {
	s.h.Stop()
	return s.e.Close(ctx)
}
