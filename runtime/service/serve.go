package service

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The defaults of ServeOptions.
const (
	// DefaultAddr is where `logbook serve` listens by default:
	// 127.0.0.1:7420.
	DefaultAddr = server.DefaultAddr
	// DefaultReadHeaderTimeout bounds how long a request's headers may
	// take to arrive: 10 s.
	DefaultReadHeaderTimeout = server.DefaultReadHeaderTimeout
	// DefaultReadTimeout bounds how long a request may take to arrive:
	// 30 s.
	DefaultReadTimeout = server.DefaultReadTimeout
	// DefaultIdleTimeout bounds how long a connection may wait for its
	// next request: 2 min.
	DefaultIdleTimeout = server.DefaultIdleTimeout
	// MinTokenBytes is the length of the shortest bearer token a server
	// accepts: 16 bytes.
	MinTokenBytes = server.MinTokenBytes
)

// ServeOptions configure a Server beyond the configuration's serve block.
// Every zero field takes the default it names.
type ServeOptions struct {
	// Addr is the address the server listens on, as given (host:port); an
	// address that is not loopback requires a credential: Token, a token
	// in the configuration's token store or a JWT key of its auth block.
	// Default DefaultAddr.
	Addr string
	// Token is the legacy bearer token of `serve --token-file`, at least
	// MinTokenBytes long: an operator credential (name "token-file") of
	// every tenant, besides those of the configuration's auth block. Once
	// any credential is configured every request but GET /healthz must
	// carry one ("Authorization: Bearer <credential>"). Default "": none.
	Token string
	// AllowedHosts are Host header values accepted besides the defaults
	// and the configuration's serve { allowed_hosts } (a host name or IP,
	// optionally with ":port"; "*." matches every subdomain). Default none.
	AllowedHosts []string
	// AllowedOrigins are origins ("scheme://host[:port]") whose pages may
	// call the server, with CORS, besides the configuration's serve {
	// allowed_origins }. Default none.
	AllowedOrigins []string
	// ReadHeaderTimeout bounds how long a request's headers may take to
	// arrive. Default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds how long a request may take to arrive: all of a
	// unary call, and each message of a stream from its first byte.
	// Default DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout bounds how long a connection may wait for its next
	// request, and an append stream for its next message. Default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Viewer, when set, serves every path no other route takes (the web
	// viewer of package viewer at /). Default nil: such paths are 404.
	Viewer http.Handler
	// Logger receives the server's logs and the retention runs'; default a
	// null logger.
	Logger hclog.Logger
}

// Server is the service served over HTTP on one port: the
// logbook.v1.Sessions API (gRPC, gRPC-Web and Connect's JSON), the /v1
// resource API, health, /metrics with Options.Metrics, and the viewer.
type Server struct {
	srv      *server.Server
	s        *Service
	log      hclog.Logger
	verifier *auth.Verifier // closed by Close, which Serve calls as it returns
	closed   sync.Once
	// mirrors are the configuration's mirror blocks, watching since
	// NewServer; Serve runs them.
	mirrors []*Mirror
}

// NewServer builds the server of `logbook serve` over s. It serves the
// sessions of every tenant of s (Tenant): each request runs on the
// tenant of its credential (an operator may name another), on that
// tenant's service alone. A session a request makes live is live in that
// service (Stat, Flush, Release and the rest see it), one the service made
// live is served to requests, and the serve block's idle_release flushes
// and releases whichever of them no one used for that long, which the
// service's Flush and Release then answer as released for idleness. Each
// request is limited to sdk.MaxEventMessageBytes of the configured
// max_event_bytes. A read-only service (Options.ReadOnly) serves reads
// only: every write is SESSION_READ_ONLY. Credentials are the
// configuration's auth block (its token store and JWT keys) and
// ServeOptions.Token (auth.NewVerifier); once any is configured every
// request needs one and the role its route needs. An address that is not
// loopback without any credential, a Token shorter than MinTokenBytes, a
// token store or key file that cannot be read, and an allowed host or
// origin that is not one are CONFIG_INVALID. A service that writes starts
// watching the directories of the configuration's mirror blocks here (one
// that does not exist is CONFIG_INVALID naming it); Serve imports them.
// Serve closes the token store NewServer opened.
func (s *Service) NewServer(o ServeOptions) (*Server, error) {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if err := CheckToken(o.Token); err != nil {
		return nil, err
	}
	root, err := s.Tenant(sdk.DefaultTenant)
	if err != nil {
		return nil, err
	}
	// The verifier opens the token store, which waits on the database
	// when the primary is PostgreSQL; nothing cancels that but its own
	// timeouts.
	verifier, err := auth.NewVerifier(context.Background(), auth.Options{Config: s.cfg, LegacyToken: o.Token, Logger: o.Logger.Named("auth")})
	if err != nil {
		return nil, err
	}
	so := server.Options{
		Addr:     o.Addr,
		Verifier: verifier,
		Tenant: func(name string) (*host.Host, error) {
			t, err := root.Tenant(name)
			if err != nil {
				return nil, err
			}
			return t.h, nil
		},
		Tenants:           root.Tenants,
		AllowedHosts:      append(slices.Clone(s.cfg.Serve.AllowedHosts), o.AllowedHosts...),
		AllowedOrigins:    append(slices.Clone(s.cfg.Serve.AllowedOrigins), o.AllowedOrigins...),
		MaxRequestBytes:   sdk.MaxEventMessageBytes(int(s.cfg.MaxEventBytes)),
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		Logger:            o.Logger,
		Metrics:           s.metrics,
		Viewer:            o.Viewer,
	}
	if !s.h.ReadOnly() {
		so.IdleRelease = s.cfg.Serve.IdleRelease
	}
	srv, err := server.New(root.h, so)
	if err != nil {
		_ = verifier.Close()
		return nil, err
	}
	out := &Server{srv: srv, s: root, log: o.Logger, verifier: verifier}
	if !s.h.ReadOnly() {
		for _, mc := range s.cfg.Mirrors {
			m, err := s.NewMirror(MirrorOptions{
				Sources:     []MirrorSource{{From: mc.Tool, Dir: mc.Dir}},
				Poll:        mc.Poll,
				IdleRelease: mc.IdleRelease,
			})
			if err != nil {
				for _, m := range out.mirrors {
					m.w.Close()
				}
				_ = verifier.Close()
				return nil, sdk.Wrapf(sdk.CodeConfigInvalid, "serve", err, "mirror %q cannot watch %s (create it, or set dir in the mirror block)", mc.Tool, mc.Dir)
			}
			out.mirrors = append(out.mirrors, m)
		}
	}
	return out, nil
}

// Serve serves on ln until ctx ends (or ln fails), then shuts down
// gracefully: new calls are refused, calls in flight get a deadline, and
// every live session of every tenant's service is flushed and released;
// the service serves no more after that (close it). A service that
// writes, with a retention block in its configuration, applies it (as GC
// does) when Serve starts and then once an hour, logging every deletion.
// With mirror blocks it runs a Mirror per block for as long as it serves,
// logging each pass; at shutdown the mirrors release their sessions first.
// With a telemetry block it pushes the spans of the turns that end to its
// OTLP collector (docs/operations.md, "Telemetry") until it returns.
// Serve closes ln and may be called once.
func (srv *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer srv.Close()
	p, err := srv.s.startTelemetry(srv.log)
	if err != nil {
		_ = ln.Close()
		return err
	}
	// The push stops after the shutdown released every session, so their
	// last turns and root spans go out.
	defer srv.s.stopTelemetry(ctx, p, srv.log)
	if !srv.s.h.ReadOnly() && srv.s.cfg.Retention != nil {
		rctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.s.retentionLoop(rctx, srv.log)
		}()
		defer func() { stop(); <-done }() // the loop ends before the service closes
	}
	if len(srv.mirrors) == 0 {
		return srv.srv.Serve(ctx, ln)
	}
	// The mirrors stop (and release their sessions) before the server's
	// shutdown releases every other live session.
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServe()
	mctx, stopMirrors := context.WithCancel(ctx)
	served := make(chan struct{})
	var wg sync.WaitGroup
	for _, m := range srv.mirrors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv.runMirror(mctx, m)
		}()
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-ctx.Done():
		case <-served:
		}
		stopMirrors()
		wg.Wait()
		stopServe()
	}()
	err = srv.srv.Serve(serveCtx, ln)
	close(served)
	<-stopped
	return err
}

// Close stops the token store's watch NewServer started, for a server
// that will not Serve. Serve calls it as it returns; later calls do
// nothing.
func (srv *Server) Close() {
	srv.closed.Do(func() {
		if err := srv.verifier.Close(); err != nil {
			srv.log.Warn("closing the token store", "error", err)
		}
	})
}

// runMirror runs m until ctx ends, logging each pass that did something
// (info), each failure and a switch to polling (warn).
func (srv *Server) runMirror(ctx context.Context, m *Mirror) {
	dir := m.sources[0].Dir
	mode, _ := m.Mode()
	srv.log.Info("mirror: watching", "from", m.sources[0].From, "dir", dir, "mode", mode)
	err := m.Run(ctx, func(p MirrorPass) {
		if p.Mode != mode {
			mode = p.Mode
			srv.log.Warn("mirror: polling", "dir", dir, "reason", p.Why)
		}
		if p.Err != nil {
			srv.log.Warn("mirror: import failed; will retry", "dir", dir, "error", p.Err)
		}
		if p.Summary.Files > 0 {
			srv.log.Info("mirror: imported", "dir", dir, "first", p.First, "files", p.Summary.Files,
				"sessions", len(p.Summary.Sessions), "events", p.Summary.Events, "damaged_lines", len(p.Summary.DamagedLines))
		}
	})
	if err != nil {
		srv.log.Error("mirror: releasing its sessions failed", "dir", dir, "error", err)
	}
}

// CheckServeAddr refuses (CONFIG_INVALID) serving on addr when it is not
// loopback and no credential is configured: token (--token-file) is "",
// the token store of cfg holds none, and cfg has no JWT key. NewServer
// checks the same; a command line checks it before it starts anything.
// A token store or key file that cannot be read is CONFIG_INVALID too.
func CheckServeAddr(ctx context.Context, cfg *config.Config, addr, token string) error {
	if server.LoopbackAddr(addr) {
		return nil
	}
	v, err := auth.NewVerifier(ctx, auth.Options{Config: cfg, LegacyToken: token})
	if err != nil {
		return err
	}
	defer v.Close()
	return server.CheckAddr(addr, v.Configured())
}

// CheckToken refuses (CONFIG_INVALID) a bearer token shorter than
// MinTokenBytes; "" (no authentication) passes.
func CheckToken(token string) error { return server.CheckToken(token) }

// LoopbackAddr reports whether a host:port names a loopback address
// ("localhost" or a loopback IP), one only this machine can reach.
func LoopbackAddr(addr string) bool { return server.LoopbackAddr(addr) }
