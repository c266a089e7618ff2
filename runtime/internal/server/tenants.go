package server

import (
	"context"
	"net/http"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// tenant is what serves one tenant: its host and the two APIs built over
// that host alone, so no handler can reach another tenant's sessions.
type tenant struct {
	name string
	h    *host.Host
	api  http.Handler // the /v1 API
	rpc  http.Handler // logbook.v1.Sessions
}

// tenants are the tenants a server has served so far, built on first use.
type tenants struct {
	mu      sync.Mutex
	byName  map[string]*tenant
	order   []*tenant // the implicit tenant first, then in the order made
	stopped bool      // shutdown began: no tenant is made any more
}

// newTenant builds the handlers of a tenant's host.
func (s *Server) newTenant(name string, h *host.Host) *tenant {
	t := &tenant{name: name, h: h}
	t.api = httpapi.New(h, httpapi.Options{MaxRequestBytes: s.opts.MaxRequestBytes, Tenant: name, Tenants: s.opts.Tenants})
	_, t.rpc = logbookv1connect.NewSessionsHandler(&service{h: h}, s.sessionsOptions()...)
	return t
}

// tenant returns the tenant of a valid name, building it the first time:
// sdk.DefaultTenant is the host New was given, any other comes from
// Options.Tenant (CONFIG_INVALID without it). Once shutdown began it is
// PLUGIN_UNAVAILABLE.
func (s *Server) tenant(name string) (*tenant, error) {
	s.tenants.mu.Lock()
	defer s.tenants.mu.Unlock()
	if t, ok := s.tenants.byName[name]; ok {
		return t, nil
	}
	if s.tenants.stopped {
		return nil, sdk.Errorf(sdk.CodePluginUnavailable, "serve", "the server is shutting down")
	}
	if s.opts.Tenant == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "serve", "this server serves only tenant %q; tenant %q is not served", sdk.DefaultTenant, name)
	}
	h, err := s.opts.Tenant(name)
	if err != nil {
		return nil, err
	}
	t := s.newTenant(name, h)
	s.tenants.byName[name] = t
	s.tenants.order = append(s.tenants.order, t)
	return t, nil
}

// hosts returns the host of every tenant made so far, the implicit
// tenant's first.
func (s *Server) hosts() []*host.Host {
	s.tenants.mu.Lock()
	defer s.tenants.mu.Unlock()
	out := make([]*host.Host, len(s.tenants.order))
	for i, t := range s.tenants.order {
		out[i] = t.h
	}
	return out
}

// stopTenants stops every tenant's host (host.Stop: their tails end, and
// each refuses new calls) and makes no tenant after it.
func (s *Server) stopTenants() {
	s.tenants.mu.Lock()
	s.tenants.stopped = true
	s.tenants.mu.Unlock()
	for _, h := range s.hosts() {
		h.Stop()
	}
}

type tenantKey struct{}

// withTenant returns ctx carrying the tenant a request runs on.
func withTenant(ctx context.Context, t *tenant) context.Context {
	return context.WithValue(ctx, tenantKey{}, t)
}

// serveTenant serves a request of the /v1 API (rpc false) or of
// logbook.v1.Sessions on the tenant the middleware resolved, as one visit
// of its host (host.Host.Visit), so the sessions it uses stay held while
// it runs.
func serveTenant(rpc bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, _ := r.Context().Value(tenantKey{}).(*tenant)
		if t == nil { // the middleware resolves a tenant for every such request
			panic("server: a tenant request reached its handler without a tenant")
		}
		ctx, done := t.h.Visit(r.Context())
		defer done()
		r = r.WithContext(ctx)
		if rpc {
			t.rpc.ServeHTTP(w, r)
		} else {
			t.api.ServeHTTP(w, r)
		}
	})
}

// knownProcedure reports whether name is a method of logbook.v1.Sessions.
func knownProcedure(name string) bool {
	return logbookv1.File_logbook_v1_sessions_proto.Services().ByName("Sessions").Methods().ByName(protoreflect.Name(name)) != nil
}
