package pluginrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The tenants capability (sdk.Tenancy) over gRPC. A tenant view of the
// client sends every call, the long-lived Append stream included, with
// the metadata tenantKey: <name>; the implicit tenant's calls carry none.
// The server resolves the metadata of each call to the backend's view of
// that tenant (cached per name) before it serves the call, so a handle
// the plugin issued under one tenant reaches only that tenant's view, for
// which any other tenant's handle is HANDLE_CLOSED (the persistencetest
// Tenancy group holds every backend to it).

// tenantKey is the gRPC metadata key that names the tenant of a call.
const tenantKey = "logbook-tenant"

// tenantConn sends every call of the clients built on it with the
// metadata of one tenant.
type tenantConn struct {
	cc     grpc.ClientConnInterface
	tenant string
}

func (c tenantConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.cc.Invoke(metadata.AppendToOutgoingContext(ctx, tenantKey, c.tenant), method, args, reply, opts...)
}

func (c tenantConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(metadata.AppendToOutgoingContext(ctx, tenantKey, c.tenant), desc, method, opts...)
}

// tenantViews are the tenant views of one persistence client, by name.
type tenantViews struct {
	mu    sync.Mutex
	views map[string]*persistenceClient
}

// Tenant implements sdk.Tenancy: the view of tenant name, which sends
// every call under the tenant's metadata and keeps its own Append
// streams. The same name gives the same view; a view's Tenant gives the
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
		v = &persistenceClient{rpc: logbookv1.NewPersistenceClient(tenantConn{cc: c.cc, tenant: name}), cc: c.cc, views: t,
			done: c.done, maxBytes: c.maxBytes, streams: map[string]*appendStream{}}
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
	st, err := logbookv1.NewPersistenceClient(c.cc).Tenants(tctx, &logbookv1.TenantsRequest{})
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
// it has none. It lists every tenant, whatever the call's metadata.
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

// backend returns the backend a call serves: the backend itself when the
// call names no tenant, else its view of the tenant the metadata names.
// More than one name, or a name on a backend that is no sdk.Tenancy, is
// USAGE naming the rule; an invalid name TENANT_INVALID.
func (s *persistenceServer) backend(ctx context.Context) (sdk.Persistence, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	names := md.Get(tenantKey)
	switch len(names) {
	case 0:
		return s.impl, nil
	case 1:
	default:
		return nil, sdk.Errorf(sdk.CodeUsage, errOp, "a call names %d tenants in its %s metadata; it must name one, or none for the implicit tenant", len(names), tenantKey)
	}
	name := names[0]
	if err := sdk.ValidateTenant(name); err != nil {
		return nil, err
	}
	t, ok := s.impl.(sdk.Tenancy)
	if !ok {
		return nil, sdk.Errorf(sdk.CodeUsage, errOp, "the call names tenant %s, but this persistence backend keeps no tenants (it implements no sdk.Tenancy); only a plugin declaring the capability %q serves tenants",
			strconv.Quote(name), sdk.CapabilityTenants)
	}
	s.views.mu.Lock()
	defer s.views.mu.Unlock()
	if v, ok := s.views.views[name]; ok {
		return v, nil
	}
	v, err := t.Tenant(name)
	if err != nil {
		return nil, err
	}
	if s.views.views == nil {
		s.views.views = map[string]sdk.Persistence{}
	}
	s.views.views[name] = v
	return v, nil
}

// served returns the call's backend (see backend) as its capability T, or
// the Unimplemented status with missing when it has none.
func served[T any](ctx context.Context, s *persistenceServer, missing string) (T, error) {
	var zero T
	p, err := s.backend(ctx)
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
