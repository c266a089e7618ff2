package engine

import (
	"context"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// tenantsDir is the directory that holds a directory per named tenant:
// under a JSONL root (docs/storage.md), and under the default tenant's
// salvage directory elsewhere (no salvage artifact or hidden salvage file
// is ever named so).
const tenantsDir = ".tenants"

// Tenant returns the engine of tenant name (sdk.ValidateTenant, else
// TENANT_INVALID): for sdk.DefaultTenant the engine Start returned,
// otherwise one built on the first call and returned by every later one.
// A tenant's engine shares everything with the default tenant's but the
// store, the compactor that flushes through it and the spiller's directory:
// the plugin processes, the projections, the summarizer and pruner, the
// observer, and the limits max_live_sessions and max_pending_bytes_total,
// which count the sessions and queued bytes of every tenant together. Its
// store runs over each backend's view of the tenant (sdk.Tenancy.Tenant)
// and gives every session it creates, forks, salvages or imports a
// Header.Tenant of name. A backend without the tenants capability makes
// every tenant but the default CONFIG_INVALID naming its plugin. Tenant
// may be called on a tenant's engine too, with the same result. After
// Close it is SESSION_CLOSED.
func (e *Engine) Tenant(name string) (*Engine, error) {
	root := e
	if e.root != nil {
		root = e.root
	}
	return root.tenants.Get(name, root, root.newTenant)
}

// newTenant builds the engine of the named tenant name over the root's
// backends' views of it.
func (e *Engine) newTenant(name string) (*Engine, error) {
	backends := make([]store.Backend, len(e.backends))
	for i, b := range e.backends {
		view, err := TenantView(b, name)
		if err != nil {
			return nil, err
		}
		backends[i] = store.Backend{Name: b.Name, Persistence: view}
	}
	so := e.storeOpts
	so.Backends, so.Tenant, so.Budget = backends, sdk.HeaderTenant(name), e.Store.Budget()
	if so.SalvageDir != "" {
		so.SalvageDir = salvageDir(e.cfg, name)
	}
	st, err := store.New(so)
	if err != nil {
		return nil, err
	}
	t := &Engine{Store: st, Host: e.Host, Plugins: e.Plugins, Projections: e.Projections,
		backends: backends, storeOpts: so, compact: e.compact, cfg: e.cfg, root: e, tenant: name}
	if e.compact != nil {
		if t.Compactor, err = e.compact(st); err != nil {
			return nil, err
		}
		// The tenant's spilled tool outputs sit apart from the others':
		// under <spill_root>/.tenants/<name> (the store names its own
		// directories session-<hash>, never so).
		spill := e.cfg.Compaction.Spill
		if spill.Root != "" {
			spill.Root = filepath.Join(spill.Root, tenantsDir, name)
		}
		if t.Spiller, err = compaction.NewSpiller(spill, so.Logger); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// TenantView returns backend b's view of the named tenant name: the
// sdk.Tenancy.Tenant of its persistence (store.TenancyOf). A backend
// without that capability is CONFIG_INVALID naming its plugin.
func TenantView(b store.Backend, name string) (sdk.Persistence, error) {
	ty, ok := store.TenancyOf(b.Persistence)
	if !ok {
		return nil, noTenancy(b.Name, name)
	}
	return ty.Tenant(name)
}

// noTenancy is the refusal of tenant name by the backend called backend,
// which keeps no tenants.
func noTenancy(backend, name string) error {
	return sdk.Errorf(sdk.CodeConfigInvalid, "tenant",
		"persistence plugin %q keeps no tenants (it lacks the %q capability), so it serves only the tenant %q, not %q; configure backends that keep tenants",
		backend, sdk.CapabilityTenants, sdk.DefaultTenant, name)
}

// TenantName returns the name of the engine's tenant: sdk.DefaultTenant
// for the engine Start returned.
func (e *Engine) TenantName() string {
	if e.root == nil {
		return sdk.DefaultTenant
	}
	return e.tenant
}

// Tenants calls fn with sdk.DefaultTenant, then with the name of every
// other tenant that holds a stored session in the primary backend, in
// ascending order (sdk.Tenancy.Tenants; a session is stored from its
// create on). A primary that keeps no tenants lists only the default
// tenant.
func (e *Engine) Tenants(ctx context.Context, fn func(name string) error) error {
	root := e
	if e.root != nil {
		root = e.root
	}
	if err := fn(sdk.DefaultTenant); err != nil {
		return err
	}
	if len(root.backends) == 0 {
		return nil
	}
	ty, ok := store.TenancyOf(root.backends[0].Persistence)
	if !ok {
		return nil
	}
	return ty.Tenants(ctx, fn)
}

// Backend returns the persistence plugin called name as the engine's
// tenant sees it: its view of the tenant (the plugin itself for the
// default tenant). A configured persistence backend is the one the store
// writes through; another running plugin that serves persistence (a
// migration's target) is asked for its view now. A name no running plugin
// serves persistence under is CONFIG_INVALID, as is a plugin that keeps no
// tenants asked for a named tenant.
func (e *Engine) Backend(name string) (sdk.Persistence, error) {
	for _, b := range e.backends {
		if b.Name == name {
			return b.Persistence, nil
		}
	}
	pl, ok := e.Plugins[name]
	if !ok || pl.Persistence() == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "logbook", "no persistence block %q is configured", name)
	}
	b := store.Backend{Name: name, Persistence: pl.Persistence()}
	if e.root == nil {
		return b.Persistence, nil
	}
	return TenantView(b, e.tenant)
}
