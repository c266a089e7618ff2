package pluginrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The tenants capability (sdk.Tenancy) over gRPC. Every request of a
// tenant view of the client names the view's tenant in its field tenant
// (each message of the Append stream, the first of an Import stream); the
// implicit tenant's name none. The server serves each request on the
// backend's view of the tenant it names (asked once per name and kept),
// so a handle the plugin issued under one tenant reaches only that
// tenant's view, for which any other tenant's handle is HANDLE_CLOSED
// (the persistencetest Tenancy group holds every backend to it).

// tenantViews are the tenant views of one persistence client, by name.
type tenantViews struct {
	mu    sync.Mutex
	views map[string]*persistenceClient
}

// Tenant implements sdk.Tenancy: the view of tenant name, whose requests
// name the tenant and which keeps its own Append streams. The same name gives the same view; a view's Tenant gives the
// same views as the client's. name must be a valid tenant name other than
// sdk.DefaultTenant (TENANT_INVALID). A plugin that does not declare
// sdk.CapabilityTenants answers every call of a view with USAGE; the host
// asks only plugins that declare it.
func (c *persistenceClient) Tenant(name string) (sdk.Persistence, error) {
	if err := sdk.ValidateTenant(name); err != nil {
		return nil, err
	}
	if name == sdk.DefaultTenant {
		return nil, sdk.Errorf(sdk.CodeTenantInvalid, errOp, "tenant %s is the implicit tenant: use the backend itself, not a view of it", strconv.Quote(name))
	}
	t := c.views
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.views[name]
	if !ok {
		v = &persistenceClient{rpc: c.rpc, tenant: name, views: t, done: c.done, maxBytes: c.maxBytes, streams: map[string]*appendStream{}}
		t.views[name] = v
	}
	return v, nil
}

// Tenants implements sdk.Tenancy over the Tenants stream. A plugin whose
// backend has no such capability answers Unimplemented, which becomes
// CONFIG_INVALID.
func (c *persistenceClient) Tenants(ctx context.Context, fn func(name string) error) error {
	const call = "persistence.Tenants"
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.Tenants(tctx, &logbookv1.TenantsRequest{})
	for err == nil {
		var r *logbookv1.TenantsReply
		if r, err = st.Recv(); err == nil {
			if ferr := fn(r.GetName()); ferr != nil {
				return ferr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp,
			Detail: "the persistence plugin keeps no tenants (it does not implement Tenants); it must not declare the capability " + sdk.CapabilityTenants, Err: err}
	}
	return fromStatus(ctx, call, err)
}

// Tenants serves the backend's sdk.Tenancy, or answers Unimplemented when
// it has none. It lists every tenant.
func (s *persistenceServer) Tenants(_ *logbookv1.TenantsRequest, stream logbookv1.Persistence_TenantsServer) error {
	t, ok := s.impl.(sdk.Tenancy)
	if !ok {
		return status.Error(codes.Unimplemented, "this persistence backend keeps no tenants (it implements no sdk.Tenancy)")
	}
	var sendErr error
	err := t.Tenants(stream.Context(), func(name string) error {
		sendErr = stream.Send(&logbookv1.TenantsReply{Name: name})
		return sendErr
	})
	if sendErr != nil {
		return sendErr
	}
	return toStatus(err)
}

// serverViews are the backend's tenant views a server has resolved, by
// name.
type serverViews struct {
	mu    sync.Mutex
	views map[string]sdk.Persistence
}

// backend returns the backend a request for tenant serves: the backend
// itself for "", else its view of the tenant. A tenant on a backend that
// is no sdk.Tenancy is USAGE naming the rule; an invalid name
// TENANT_INVALID.
func (s *persistenceServer) backend(tenant string) (sdk.Persistence, error) {
	if tenant == "" {
		return s.impl, nil
	}
	if err := sdk.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	t, ok := s.impl.(sdk.Tenancy)
	if !ok {
		return nil, sdk.Errorf(sdk.CodeUsage, errOp, "the request names tenant %s, but this persistence backend keeps no tenants (it implements no sdk.Tenancy); only a plugin declaring the capability %q serves tenants",
			strconv.Quote(tenant), sdk.CapabilityTenants)
	}
	s.views.mu.Lock()
	defer s.views.mu.Unlock()
	if v, ok := s.views.views[tenant]; ok {
		return v, nil
	}
	v, err := t.Tenant(tenant)
	if err != nil {
		return nil, err
	}
	if s.views.views == nil {
		s.views.views = map[string]sdk.Persistence{}
	}
	s.views.views[tenant] = v
	return v, nil
}

// served returns the backend of a request for tenant (see backend) as
// its capability T, or the Unimplemented status with missing when it has
// none.
func served[T any](s *persistenceServer, tenant, missing string) (T, error) {
	var zero T
	p, err := s.backend(tenant)
	if err != nil {
		return zero, toStatus(err)
	}
	c, ok := p.(T)
	if !ok {
		return zero, status.Error(codes.Unimplemented, missing)
	}
	return c, nil
}

var _ sdk.Tenancy = (*persistenceClient)(nil)
