package pluginhost

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// The tenancy conformance group through the host's proxy of a real memory
// plugin: the proxy's views pass it, capability accessors included.
func TestTenancyConformanceThroughTheProxy(t *testing.T) {
	h := newHost(t, Options{})
	persistencetest.RunTenancy(t, persistencetest.Harness{
		New: func(t *testing.T) sdk.Persistence {
			p, err := h.Start(t.Context(), Spec{Name: "memory"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Stop)
			return p.Persistence()
		},
		Declared: memory.Capabilities(),
		Served:   memory.New(),
	})
}

// A tenant view survives a restart of its plugin as the proxy does, and
// its capability accessors answer by the plugin's declaration.
func TestATenantViewFollowsThePluginAcrossRestarts(t *testing.T) {
	h := newHost(t, Options{RestartMin: 10 * time.Millisecond})
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	b, err := p.Persistence().(sdk.Tenancy).Tenant("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.(interface{ Watcher() (sdk.Watcher, bool) }).Watcher(); !ok {
		t.Fatal("the view of tenant b reports no Watcher though the memory plugin declares watch")
	}
	create := func() {
		t.Helper()
		o, err := b.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", Tenant: "b", CreatedAt: 1})
		if err != nil {
			t.Fatalf("Create through tenant b's view: %v", err)
		}
		if _, err := b.Flush(ctx, o.Handle); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(ctx, o.Handle); err != nil {
			t.Fatal(err)
		}
	}
	create()
	if _, err := p.Persistence().Stat(ctx, "s"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("Stat of tenant b's session through the implicit tenant: %v; want SESSION_NOT_FOUND", err)
	}

	pid := p.Pid()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for p.Restarts() == 0 || p.Pid() == pid {
		if time.Now().After(deadline) {
			t.Fatal("plugin not restarted within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The restarted memory plugin starts empty; the same view value serves
	// tenant b on the new process.
	var st sdk.Stat
	for {
		if _, err = b.Stat(ctx, "s"); errors.Is(err, sdk.CodeSessionNotFound) {
			break
		}
		if !errors.Is(err, sdk.CodePluginUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Stat through the view after the restart: %v; want SESSION_NOT_FOUND from the new, empty process", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	create()
	if st, err = b.Stat(ctx, "s"); err != nil || st.Header.Tenant != "b" {
		t.Fatalf("Stat through the view after the restart = %+v, %v; want the header of tenant b", st.Header, err)
	}
	var names []string
	if err := p.Persistence().(sdk.Tenancy).Tenants(ctx, func(n string) error { names = append(names, n); return nil }); err != nil || len(names) != 1 || names[0] != "b" {
		t.Fatalf("Tenants = %q, %v; want [b]", names, err)
	}
}

func TestTenantNamesAreCheckedByTheProxy(t *testing.T) {
	h := newHost(t, Options{})
	p, err := h.Start(context.Background(), Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "B", sdk.DefaultTenant} {
		if _, err := p.Persistence().(sdk.Tenancy).Tenant(name); !errors.Is(err, sdk.CodeTenantInvalid) {
			t.Fatalf("Tenant(%q): %v; want TENANT_INVALID", name, err)
		}
	}
}

// A plugin that did not declare the capability "tenants" has no tenant
// views and no tenant list: CONFIG_INVALID naming the plugin, before any
// call reaches it.
func TestAPluginWithoutTenantsRefusesTenantViews(t *testing.T) {
	p := &Plugin{spec: Spec{Name: "plain"}, cur: &conn{info: sdk.Info{Name: "plain", Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: []string{sdk.CapabilityWatch}}}}
	_, err := p.Persistence().(sdk.Tenancy).Tenant("b")
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, `"plain"`, sdk.CapabilityTenants)
	err = p.Persistence().(sdk.Tenancy).Tenants(t.Context(), func(string) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, `"plain"`, sdk.CapabilityTenants)
}
