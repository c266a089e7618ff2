package pluginrpc

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// tenantsSeen records the tenant metadata of every call a server
// receives, by method.
type tenantsSeen struct {
	mu    sync.Mutex
	calls []string // "<method> <tenants, comma-separated, or ->"
}

func (s *tenantsSeen) options() []grpc.ServerOption {
	note := func(ctx context.Context, method string) {
		md, _ := metadata.FromIncomingContext(ctx)
		names := strings.Join(md.Get(tenantKey), ",")
		if names == "" {
			names = "-"
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.calls = append(s.calls, method+" "+names)
	}
	return []grpc.ServerOption{
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			note(ctx, info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			note(ss.Context(), info.FullMethod)
			return h(srv, ss)
		}),
	}
}

// Every call of a tenant view, the long-lived Append stream included,
// names the view's tenant; the server serves it on the backend's view of
// that tenant, so the session lands there and nowhere else.
func TestATenantViewNamesItsTenantOnEveryCall(t *testing.T) {
	var seen tenantsSeen
	backend := memory.New()
	c := serveOver(t, backend, seen.options()...)
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
	for _, call := range seen.calls {
		if !strings.HasSuffix(call, " b") {
			t.Fatalf("call %q; want every call of tenant b's view to name tenant b", call)
		}
	}
	if len(seen.calls) < 6 {
		t.Fatalf("the server saw %q; want create, append stream, flush, read, stat and close", seen.calls)
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

// The server checks the tenant a call names: TENANT_INVALID for a bad
// name, USAGE for more than one.
func TestTheServerChecksTheTenantOfACall(t *testing.T) {
	c := serveOver(t, memory.New())
	ctx := t.Context()
	for _, name := range []string{"B", sdk.DefaultTenant, ""} {
		_, err := logbookv1.NewPersistenceClient(tenantConn{cc: c.cc, tenant: name}).Stat(ctx, &logbookv1.StatRequest{Id: "s"})
		persistencetest.RequireCode(t, fromStatus(ctx, "persistence.Stat", err), sdk.CodeTenantInvalid)
	}
	two := metadata.AppendToOutgoingContext(ctx, tenantKey, "b", tenantKey, "c")
	_, err := logbookv1.NewPersistenceClient(c.cc).Stat(two, &logbookv1.StatRequest{Id: "s"})
	persistencetest.RequireCode(t, fromStatus(ctx, "persistence.Stat", err), sdk.CodeUsage, 2)
}
