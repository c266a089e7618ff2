package pluginhost

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// view returns the plugin's current persistence adapter as T: the
// implicit tenant's when tenant is "", else its view of the tenant (which
// the adapter caches per name, so asking on every call is cheap, and a
// restarted plugin's new adapter gives a new view).
func view[T any](p *Plugin, tenant string) (T, error) {
	var zero T
	a, err := adapter[sdk.Persistence](p, sdk.KindPersistence)
	if err != nil {
		return zero, err
	}
	if tenant != "" {
		if a, err = a.(sdk.Tenancy).Tenant(tenant); err != nil { // every pluginrpc adapter is an sdk.Tenancy
			return zero, err
		}
	}
	return a.(T), nil
}

// Tenant implements sdk.Tenancy: the view of tenant name, which follows
// the plugin across restarts as the proxy does and reports the same
// capability accessors. A plugin that did not declare
// sdk.CapabilityTenants at its start is CONFIG_INVALID naming it; name must
// be a valid tenant name other than sdk.DefaultTenant (TENANT_INVALID).
// The view of a view is the plugin's view of that name.
func (x persistenceProxy) Tenant(name string) (sdk.Persistence, error) {
	if err := handles.CheckViewName("plugin", name); err != nil {
		return nil, err
	}
	if err := x.tenancy(); err != nil {
		return nil, err
	}
	return persistenceProxy{p: x.p, tenant: name}, nil
}

// Tenants implements sdk.Tenancy over the current plugin process; a plugin
// that did not declare sdk.CapabilityTenants is CONFIG_INVALID naming it.
func (x persistenceProxy) Tenants(ctx context.Context, fn func(name string) error) error {
	if err := x.tenancy(); err != nil {
		return err
	}
	t, err := view[sdk.Tenancy](x.p, "")
	if err != nil {
		return err
	}
	return x.p.observe(t.Tenants(ctx, fn))
}

// tenancy is CONFIG_INVALID naming the plugin unless it declared
// sdk.CapabilityTenants at its start.
func (x persistenceProxy) tenancy() error {
	if x.declares(sdk.CapabilityTenants) {
		return nil
	}
	return sdk.Errorf(sdk.CodeConfigInvalid, "plugin", "persistence plugin %q keeps no tenants (it does not declare the capability %q); serve only the default tenant, or use a backend that keeps tenants",
		x.p.spec.Name, sdk.CapabilityTenants)
}

var _ sdk.Tenancy = persistenceProxy{}
