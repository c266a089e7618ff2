package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A backend that is no sdk.Tenancy serves only the default tenant:
// asking it for a named one is CONFIG_INVALID naming its plugin.
func TestTenantViewOfABackendWithoutTenancy(t *testing.T) {
	type plain struct{ sdk.Persistence } // the methods of Persistence only
	_, err := TenantView(store.Backend{Name: "legacy", Persistence: plain{}}, "a")
	var e *sdk.Error
	if sdk.CodeOf(err) != sdk.CodeConfigInvalid || !errors.As(err, &e) || !strings.Contains(e.Detail, `"legacy"`) || !strings.Contains(e.Detail, sdk.CapabilityTenants) {
		t.Fatalf("TenantView of a backend without tenancy: %v; want CONFIG_INVALID naming the plugin and the capability", err)
	}
}

// The engine of a named tenant, over the default profile's JSONL plugin
// subprocess: the same engine for the same name, the root for "default";
// its own store over the tenant's directory, stamping Header.Tenant; the
// plugin processes shared; the root's Close closes the tenant's sessions
// too and then stops the plugins.
func TestTenantEngine(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	e, err := Start(ctx, config.Default(config.Overrides{DataDir: dataDir}), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	a, err := e.Tenant("a")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := e.Tenant("a"); again != a {
		t.Fatal("a second Tenant(\"a\") built another engine")
	}
	if root, _ := a.Tenant(sdk.DefaultTenant); root != e {
		t.Fatal("Tenant(\"default\") of a tenant's engine is not the root")
	}
	if _, err := e.Tenant("No"); sdk.CodeOf(err) != sdk.CodeTenantInvalid {
		t.Fatalf("Tenant(\"No\"): %v; want TENANT_INVALID", err)
	}
	if a.Store == e.Store || a.Host != e.Host || a.TenantName() != "a" || e.TenantName() != sdk.DefaultTenant {
		t.Fatal("a tenant's engine must have its own store and share the plugin host")
	}
	s, err := a.Store.Create(ctx, store.CreateOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Header().Tenant != "a" {
		t.Fatalf("Header.Tenant %q; want a", s.Header().Tenant)
	}
	if _, err := e.Store.Create(ctx, store.CreateOptions{ID: "s1"}); err != nil {
		t.Fatalf("the same id in the default tenant: %v", err)
	}
	if _, err := a.Store.Flush(ctx, s); err != nil { // Tenants lists stored sessions' tenants
		t.Fatal(err)
	}
	var names []string
	if err := e.Tenants(ctx, func(n string) error { names = append(names, n); return nil }); err != nil || strings.Join(names, ",") != "default,a" {
		t.Fatalf("Tenants: %v, %v; want default,a", names, err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !s.Closed() {
		t.Fatal("the root's Close left the tenant's session live")
	}
	logs, _ := filepath.Glob(filepath.Join(dataDir, ".tenants", "a", "s1", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl.zst"))
	if len(logs) != 1 {
		entries, _ := os.ReadDir(dataDir)
		t.Fatalf("tenant a's session is not under <root>/.tenants/a: %v (root holds %v)", logs, entries)
	}
	if _, err := e.Tenant("b"); sdk.CodeOf(err) != sdk.CodeSessionClosed {
		t.Fatalf("Tenant after Close: %v; want SESSION_CLOSED", err)
	}
}
