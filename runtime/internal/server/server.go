package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpcreflect"
	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// DefaultAddr is the address ListenAndServe listens on by default: loopback
// only.
const DefaultAddr = "127.0.0.1:7420"

// DefaultShutdownTimeout is how long shutdown waits by default for calls in
// flight before it closes their connections.
const DefaultShutdownTimeout = 10 * time.Second

// DefaultReadHeaderTimeout is how long a request's headers may take to
// arrive by default.
const DefaultReadHeaderTimeout = 10 * time.Second

// DefaultReadTimeout is how long, by default, a request may take to arrive
// up to the end of its first message, and each later message of a stream
// from its first byte.
const DefaultReadTimeout = 30 * time.Second

// DefaultIdleTimeout is how long, by default, a connection may wait for its
// next request, and a stream for its next message.
const DefaultIdleTimeout = 2 * time.Minute

// MinTokenBytes is the shortest bearer token a server accepts: a shorter
// one is too easy to guess.
const MinTokenBytes = 16

// releaseTimeout bounds the flush and release of the held sessions at
// shutdown.
const releaseTimeout = time.Minute

// Options configure a Server. Every zero field takes the default it names.
type Options struct {
	// Addr is the TCP address ListenAndServe listens on; default
	// DefaultAddr (127.0.0.1:7420).
	Addr string
	// Verifier authenticates requests (auth.Verifier). Once it has a
	// credential (Verifier.Configured), and always on a listener that is
	// not loopback, every request but HealthzPath and the viewer's files
	// must carry one it accepts ("Authorization: Bearer <credential>"):
	// else 401 UNAUTHENTICATED; and its principal's role must be the one
	// its route needs (a role table covering every /v1 route and every
	// logbook.v1.Sessions procedure; a route missing from it needs
	// auth.RoleOperator): else 403 PERMISSION_DENIED, before any session
	// is looked up. Default nil: no credentials, which New and Serve allow
	// only on a loopback address (anything else is CONFIG_INVALID); every
	// request then acts as an operator.
	Verifier Verifier
	// Tenant returns the host of a tenant other than sdk.DefaultTenant
	// (whose host is New's), given a valid name: service.Service.Tenant's.
	// The server calls it the first time a request runs on that tenant
	// (its principal's own, or the one an operator names with
	// ?tenant= on /v1 or the Logbook-Tenant header on logbook.v1.Sessions)
	// and keeps the host and the handlers it builds over it: idle release
	// and shutdown cover every such host. Its error is the request's.
	// Default nil: only the implicit tenant is served; naming another is
	// CONFIG_INVALID.
	Tenant func(name string) (*host.Host, error)
	// Tenants lists the tenants that hold sessions, sdk.DefaultTenant
	// first (service.Service.Tenants's), for GET /v1/tenants, which only
	// an operator may call. Default nil: the list is sdk.DefaultTenant
	// alone.
	Tenants func(ctx context.Context) ([]string, error)
	// MaxRequestBytes bounds one request message (each message of a
	// stream); a larger one is refused with ResourceExhausted. Default
	// sdk.MaxEventMessageBytes(sdk.DefaultMaxEventBytes) (2 × 16 MiB +
	// 1 MiB); a configuration with another MaxEventBytes should pass
	// sdk.MaxEventMessageBytes of it. Twice
	// the event covers the JSON API, where event data is an escaped JSON
	// string (at most 2× its text, unless the client also escapes
	// non-ASCII characters as \uXXXX).
	MaxRequestBytes int
	// ShutdownTimeout bounds how long shutdown waits for calls in flight
	// (an append stream whose client keeps it open) before it closes their
	// connections; the held sessions are flushed and released after that
	// either way. Default DefaultShutdownTimeout (10 s).
	ShutdownTimeout time.Duration
	// ReadHeaderTimeout bounds how long a request's headers may take to
	// arrive. Default DefaultReadHeaderTimeout (10 s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds how long a request may take to arrive up to the
	// end of its first message (all of a unary call), and each later
	// message of a stream from its first byte, so a client trickling bytes
	// cannot hold a connection. Once the request has ended nothing bounds
	// the answer: an Events stream may follow for as long as it likes.
	// Default DefaultReadTimeout (30 s).
	ReadTimeout time.Duration
	// IdleTimeout bounds how long a connection may wait for its next
	// request, and an append stream for its next message. Default
	// DefaultIdleTimeout (2 min).
	IdleTimeout time.Duration
	// Logger receives the server's logs; default a null logger.
	Logger hclog.Logger
	// Viewer, when set, serves every path no other route takes (the web
	// viewer of package viewer at /). Its GET and HEAD requests need no
	// token: it serves static files only, and the data the page fetches
	// comes from /v1, which does. Default nil: such paths are 404.
	Viewer http.Handler
	// IdleRelease, when positive, makes Serve flush and release every
	// session its host holds that no request has used for that long (the
	// request in flight that uses a session keeps it; host.ReleaseIdle);
	// the next request that needs it resumes it. Each release is logged
	// at debug and counted in Metrics. Default 0: sessions are held until
	// Release or shutdown.
	IdleRelease time.Duration
	// Metrics, when set, is served at MetricsPath and counts the server's
	// requests by route and status and its error replies by code; the
	// caller watches the engine with it (Metrics.Watch) and gives it to the
	// engine as its store observer. Default nil: no metrics.
	Metrics *metrics.Metrics
	// AllowedHosts are Host header values the server accepts besides its
	// defaults. On a loopback listener the defaults are localhost,
	// *.localhost, the loopback IPs and the listen address, each with or
	// without a port, and any other Host is refused (HOST_NOT_ALLOWED,
	// 403) before the token and before routing, so a page on a name
	// rebound to 127.0.0.1 cannot reach the API. Off loopback any Host is
	// accepted unless AllowedHosts is set, then only those. Each entry is
	// a host name or IP, optionally with ":port" (without one any port
	// matches); a leading "*." matches every subdomain
	// (config.CheckAllowedHost). Default none.
	AllowedHosts []string
	// AllowedOrigins are origins ("scheme://host[:port]",
	// config.CheckAllowedOrigin) whose pages may call the server: a
	// request from one gets CORS headers, and its preflight an answer.
	// Any request whose Origin is neither one of them nor the server's
	// own (whose host:port is the request's Host, whatever the scheme) is
	// refused (ORIGIN_NOT_ALLOWED, 403) on every route, "Origin: null"
	// included. Default none: no CORS header is ever sent.
	AllowedOrigins []string
}

// Server serves the sessions of its tenants' hosts (package host) over
// HTTP: the logbook.v1.Sessions API over gRPC, gRPC-Web and Connect's
// JSON, plus gRPC server reflection, and the /v1 JSON API. Both translate
// their wire formats onto the host of the request's tenant (built for it
// alone), which holds the write ownership of every
// session made live through it (by this server or by anyone else sharing
// the host) until Release, an idle release or shutdown. A read-only host
// (host.NewReadOnly, logbook view) makes a read-only server: every write,
// on either protocol, is SESSION_READ_ONLY. Serve runs it once; the
// methods are safe for concurrent use.
type Server struct {
	opts    Options
	log     hclog.Logger
	handler http.Handler
	mux     *http.ServeMux // the routes, which public consults for Options.Viewer
	access  *access

	h       *host.Host // the implicit tenant's sessions, shared with whoever built it
	tenants tenants    // every tenant served so far, h's included
	calls   inflight
	served  atomic.Bool // Serve was called
	// local is set by Serve, before it serves, when the listener is
	// local: without a configured credential requests then need none.
	local bool

	readyMu  sync.Mutex
	notReady string // what the last readiness check found not ready; "" when ready
	// edge is the Host and Origin policy of the listener, set by Serve
	// before it serves.
	edge *edge
}

// New returns a server of h's sessions, the implicit tenant's, and of the
// hosts Options.Tenant returns for the others: its requests, and its idle
// release (Options.IdleRelease), act on them, so whoever shares h sees
// every session the server makes live and every one it releases. It
// refuses (CONFIG_INVALID) an address that is not loopback without a
// configured credential, and a negative limit.
func New(h *host.Host, o Options) (*Server, error) {
	if h == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "serve", "the server needs a host")
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = sdk.MaxEventMessageBytes(sdk.DefaultMaxEventBytes)
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.MaxRequestBytes < 0 || o.ShutdownTimeout < 0 || o.ReadHeaderTimeout < 0 || o.ReadTimeout < 0 || o.IdleTimeout < 0 || o.IdleRelease < 0 {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "serve", "MaxRequestBytes %d, ShutdownTimeout %v, ReadHeaderTimeout %v, ReadTimeout %v, IdleTimeout %v and IdleRelease %v must not be negative",
			o.MaxRequestBytes, o.ShutdownTimeout, o.ReadHeaderTimeout, o.ReadTimeout, o.IdleTimeout, o.IdleRelease)
	}
	if err := checkEdgeOptions(o.AllowedHosts, o.AllowedOrigins); err != nil {
		return nil, err
	}
	s := &Server{opts: o, log: o.Logger, h: h}
	if err := CheckAddr(o.Addr, s.credentials()); err != nil {
		return nil, err
	}
	s.calls.idle = make(chan struct{})
	implicit := s.newTenant(sdk.DefaultTenant, h)
	s.tenants.byName = map[string]*tenant{sdk.DefaultTenant: implicit}
	s.tenants.order = []*tenant{implicit}

	mux := http.NewServeMux()
	mountSessions(mux, serveTenant(true))
	reflector := grpcreflect.NewStaticReflector(logbookv1connect.SessionsName)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	s.mountHealth(mux)
	mux.Handle("/v1/", serveTenant(false))
	if o.Viewer != nil {
		mux.Handle(viewerPattern, o.Viewer)
	}
	s.mux = mux
	s.access = newAccess(mux)
	s.handler = s.instrument(mux, s.middleware(mux))
	return s, nil
}

// guarded reports whether requests need a credential: always off a local
// listener, and on one once a credential is configured.
func (s *Server) guarded() bool { return !s.local || s.credentials() }

// credentials reports whether Options.Verifier has a credential.
func (s *Server) credentials() bool {
	return s.opts.Verifier != nil && s.opts.Verifier.Configured()
}

// CheckAddr refuses (CONFIG_INVALID) to serve on an address that is not
// loopback without any credential configured, as New does.
func CheckAddr(addr string, credentials bool) error {
	if !credentials && !LoopbackAddr(addr) {
		return noTokenError(addr)
	}
	return nil
}

// CheckToken refuses (CONFIG_INVALID) a bearer token shorter than
// MinTokenBytes; "" (no authentication) passes, and is CheckAddr's
// business.
func CheckToken(token string) error {
	if token != "" && len(token) < MinTokenBytes {
		return sdk.Errorf(sdk.CodeConfigInvalid, "serve", "the bearer token is %d bytes; it must be at least %d (for example: openssl rand -hex 32)", len(token), MinTokenBytes)
	}
	return nil
}

func noTokenError(addr string) error {
	return sdk.Errorf(sdk.CodeConfigInvalid, "serve", "%s is not a loopback address: a credential is required to serve on it (logbook token create, an auth { jwt } key, or logbook serve --token-file FILE), or listen on 127.0.0.1", addr)
}

// LoopbackAddr reports whether a host:port names a loopback address
// ("localhost" or a loopback IP), one only this machine can reach.
func LoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// localListener reports whether a listener's address can only be reached
// from this machine: a loopback TCP address, or any address that is not
// TCP (a Unix socket, an in-memory listener).
func localListener(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return a.Network() != "tcp" && a.Network() != "tcp4" && a.Network() != "tcp6"
}

// ListenAndServe listens on Options.Addr and serves until ctx is done; see
// Serve.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "serve", Detail: "cannot listen on " + s.opts.Addr, Err: err}
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is done (or ln fails), then shuts down
// gracefully: new calls are refused, live tails end, calls in flight get
// Options.ShutdownTimeout to finish before their connections are closed,
// and then every session its tenants' hosts hold is flushed and released
// (each host is stopped: its tails end, and a server sharing it refuses
// every call). It returns the joined release errors (and the listener's error,
// if it failed). Serve closes ln, and may be called once.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	local := localListener(ln.Addr())
	if !local && !s.credentials() {
		ln.Close()
		return noTokenError(ln.Addr().String())
	}
	if !s.served.CompareAndSwap(false, true) {
		ln.Close()
		return sdk.Errorf(sdk.CodeConfigInvalid, "serve", "Serve was called twice on one server")
	}
	s.local = local
	s.edge = newEdge(ln.Addr(), s.opts.AllowedHosts, s.opts.AllowedOrigins)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true) // gRPC without TLS (h2c)
	hs := &http.Server{
		Handler:           s.handler,
		Protocols:         &protocols,
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          s.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	s.log.Info("serving logbook.v1.Sessions", "addr", ln.Addr().String(), "auth", s.guarded())
	stopIdle := s.releaseIdle(ctx)
	defer stopIdle() // at a failed listener; after a shutdown it is stopped already
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-done:
	}
	s.stopTenants()
	sctx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	if err := hs.Shutdown(sctx); err != nil {
		s.log.Warn("calls still running at the shutdown deadline; closing their connections", "timeout", s.opts.ShutdownTimeout)
		hs.Close()
	}
	cancel()
	if serveErr == nil {
		serveErr = <-done
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	} else if serveErr != nil {
		serveErr = &sdk.Error{Code: sdk.CodeIOError, Op: "serve", Detail: "the listener failed", Err: serveErr}
	}
	s.calls.wait()
	stopIdle()
	rctx, rcancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer rcancel()
	errs := []error{serveErr}
	for _, h := range s.hosts() {
		errs = append(errs, h.ReleaseAll(rctx))
	}
	return errors.Join(errs...)
}

// middleware refuses, in the error format of the caller's protocol and in
// this order, a request whose Host the server does not accept
// (HOST_NOT_ALLOWED), one from a page of a foreign origin
// (ORIGIN_NOT_ALLOWED), one without a valid credential (UNAUTHENTICATED),
// one whose principal's role is below its route's (PERMISSION_DENIED),
// one naming a tenant that is not a name (TENANT_INVALID) or that its
// principal may not address (PERMISSION_DENIED), and any during shutdown.
// It answers the CORS preflights of allowed origins, puts the principal
// (auth.NewContext) and the tenant in the request's context, counts the
// calls in flight and sets the body's read deadlines (bodyDeadlines). A
// refusal is decided on the headers and answered at once, without
// reading the body, and before any session is looked up.
func (s *Server) middleware(next http.Handler) http.Handler {
	ew := connect.NewErrorWriter()
	deadlines := bodyDeadlines{readTimeout: s.opts.ReadTimeout, idleTimeout: s.opts.IdleTimeout}
	// refuse answers rpc on an RPC call and e as problem+json on every
	// other route; rpc nil is e as the RPC protocol's error (an ErrorInfo
	// and Logbook-Code).
	refuse := func(w http.ResponseWriter, r *http.Request, e *sdk.Error, rpc *connect.Error) {
		if r.ProtoMajor == 1 {
			// An HTTP/1 server reads an unread body before it answers and
			// again before it closes, so a client still sending one (or
			// never sending it) would wait: the connection is closed
			// right after the answer instead.
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
		}
		// Every RPC protocol the server takes POSTs (ew.IsSupported also
		// takes a GET); the other routes answer problem+json.
		if r.Method == http.MethodPost && !strings.HasPrefix(r.URL.Path, "/v1/") && ew.IsSupported(r) {
			if rpc == nil {
				_ = ew.Write(w, r, toConnect(e, nil))
			} else {
				_ = ew.Write(w, r, rpc)
			}
			return
		}
		httpapi.NewProblem(e).Write(w)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.edge.allowHost(r.Host) {
			refuse(w, r, &sdk.Error{Code: sdk.CodeHostNotAllowed, Op: "serve",
				Detail: fmt.Sprintf("Host %q is not one this server answers (a page on a name rebound to this address sends it): call it as localhost or 127.0.0.1, or add the name to serve { allowed_hosts } or --allowed-host", r.Host)}, nil)
			return
		}
		if len(s.edge.origins) > 0 {
			w.Header().Add("Vary", "Origin")
		}
		switch s.edge.checkOrigin(r.Header.Values("Origin"), r.Host) {
		case originRefused:
			refuse(w, r, &sdk.Error{Code: sdk.CodeOriginNotAllowed, Op: "serve",
				Detail: fmt.Sprintf("Origin %q is not this server's own nor an allowed one: pages of other sites may not call it; add the origin to serve { allowed_origins } or --allowed-origin", strings.Join(r.Header.Values("Origin"), ", "))}, nil)
			return
		case originAllowed:
			if isPreflight(r) {
				preflight(w, r)
				return
			}
			allowCORS(w.Header(), r.Header.Get("Origin"))
		}
		ctx := r.Context()
		var p auth.Principal
		authenticated := false
		if s.guarded() && !s.public(r) {
			var err error
			if p, err = s.authenticate(ctx, r); err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="logbook"`)
				const why = "a valid bearer credential is required (Authorization: Bearer <token>)"
				s.log.Debug("unauthenticated", "path", r.URL.Path, "why", err)
				refuse(w, r, &sdk.Error{Code: sdk.CodeUnauthenticated, Op: "serve", Detail: why}, connect.NewError(connect.CodeUnauthenticated, errors.New(why)))
				return
			}
			authenticated = true
			ctx = auth.NewContext(ctx, p)
			if need := s.access.need(r); !p.Role.Allows(need) {
				refuse(w, r, sdk.Errorf(sdk.CodePermissionDenied, "serve", "credential %q has role %s; %s %s needs %s", p.Name, p.Role, r.Method, r.URL.Path, need), nil)
				return
			}
		}
		name := ""
		if tenantRequest(r) {
			var err error
			if name, err = tenantName(r, p, authenticated); err != nil {
				refuse(w, r, sdk.ErrorOf(err), nil)
				return
			}
		}
		if s.h.Stopping() || !s.calls.enter() {
			const why = "the server is shutting down"
			refuse(w, r, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: "serve", Detail: why}, connect.NewError(connect.CodeUnavailable, errors.New(why)))
			return
		}
		defer s.calls.leave()
		if name != "" {
			t, err := s.tenant(name)
			if err != nil {
				refuse(w, r, sdk.ErrorOf(err), nil)
				return
			}
			ctx = withTenant(ctx, t)
		}
		r = r.WithContext(ctx)
		deadlines.wrap(w, r)
		next.ServeHTTP(w, r)
	})
}

// authenticate returns the principal of the request's bearer credential
// (Options.Verifier); an error when it has none or the verifier refuses it.
func (s *Server) authenticate(ctx context.Context, r *http.Request) (auth.Principal, error) {
	cred := bearer(r)
	if cred == "" {
		return auth.Principal{}, errors.New("no bearer credential")
	}
	if s.opts.Verifier == nil {
		return auth.Principal{}, errors.New("no credential is configured")
	}
	return s.opts.Verifier.Verify(ctx, cred)
}

// inflight counts the calls being served, so shutdown can wait for the
// last one even after it closed their connections.
type inflight struct {
	mu      sync.Mutex
	n       int
	closing bool
	idle    chan struct{} // closed when closing and n reaches 0
}

// enter counts a new call; false once shutdown waits for the last one.
func (c *inflight) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.n++
	return true
}

func (c *inflight) leave() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.closing && c.n == 0 {
		close(c.idle)
	}
}

// wait refuses new calls and waits for the running ones.
func (c *inflight) wait() {
	c.mu.Lock()
	c.closing = true
	n := c.n
	if n == 0 {
		close(c.idle)
	}
	c.mu.Unlock()
	<-c.idle
}
