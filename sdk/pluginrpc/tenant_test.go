package pluginrpc

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
)

// Every request of a tenant view, the long-lived Append stream included,
// names the view's tenant in the request itself (no metadata); the server
// serves it on the backend's view of that tenant, so the session lands
// there and nowhere else.
func TestATenantViewsRequestsReachItsTenant(t *testing.T) {
	var seen metadataKeys
	backend := memory.New()
	c := serveOver(t, backend,
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen.note(ctx)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			seen.note(ss.Context())
			return h(srv, ss)
		}))
	ctx := t.Context()
	v, err := c.Tenant("b")
	if err != nil {
		t.Fatal(err)
	}
	o, err := v.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", Tenant: "b", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := v.Append(ctx, o.Handle, sdk.Seq(i), persistencetest.Batch(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Flush(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	if err := v.Read(ctx, o.Handle, 0, -1, func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Stat(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.keys) > 0 {
		t.Fatalf("calls of a tenant view carried metadata %q", seen.keys)
	}

	bb, err := backend.Tenant("b")
	if err != nil {
		t.Fatal(err)
	}
	if st, err := bb.Stat(ctx, "s"); err != nil || st.EventCount != 3 || st.Header.Tenant != "b" {
		t.Fatalf("tenant b's session in the backend = %+v, %v; want 3 events and the header of tenant b", st, err)
	}
	if _, err := backend.Stat(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("the implicit tenant's Stat(s) = %v; want SESSION_NOT_FOUND", err)
	}
}

// A call naming a tenant reaches a backend without tenancy only as
// USAGE naming the rule, and Tenants as CONFIG_INVALID.
func TestATenantCallToABackendWithoutTenancyIsUsage(t *testing.T) {
	c := serveOver(t, plainLog{memory.New()})
	v, err := c.Tenant("b")
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Stat(t.Context(), "s")
	persistencetest.RequireCode(t, err, sdk.CodeUsage, `"b"`, sdk.CapabilityTenants)
	_, err = v.Create(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", Tenant: "b", CreatedAt: 1})
	persistencetest.RequireCode(t, err, sdk.CodeUsage, sdk.CapabilityTenants)
	err = c.Tenants(t.Context(), func(string) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, sdk.CapabilityTenants)
}

// The server checks the tenant a request names: TENANT_INVALID for a bad
// name (the implicit tenant's name too: it is named by none), on a unary
// call as on an Append stream.
func TestTheServerChecksTheTenantOfACall(t *testing.T) {
	c := serveOver(t, memory.New())
	ctx := t.Context()
	for _, name := range []string{"B", sdk.DefaultTenant, "-b"} {
		_, err := c.rpc.Stat(ctx, &logbookv1.StatRequest{Id: "s", Tenant: name})
		persistencetest.RequireCode(t, fromStatus(ctx, "persistence.Stat", err), sdk.CodeTenantInvalid)
	}
	st, err := c.rpc.Append(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&logbookv1.AppendRequest{Handle: "h", Tenant: "B"}); err != nil {
		t.Fatal(err)
	}
	_, err = st.Recv()
	persistencetest.RequireCode(t, fromStatus(ctx, "persistence.Append", err), sdk.CodeTenantInvalid)
}
