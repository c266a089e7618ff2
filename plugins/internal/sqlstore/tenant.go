package sqlstore

import (
	"context"
	"strconv"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The tenants of a SQL backend (sdk.Tenancy, docs/storage.md "Tenants"):
// every table keyed by session has a tenant column, '' for the implicit
// tenant, and the name of a named tenant otherwise; a backend's view of
// one tenant runs every statement scoped by it (Dialect.Tenant, Scope).

// TenantsQuery is the query that lists the named tenants holding at
// least one session, ascending, over the sessions table as the backend
// writes it (Dialect.Table): it reads the primary key's index only.
func TenantsQuery(sessions string) string {
	return "SELECT DISTINCT tenant FROM " + sessions + " WHERE tenant <> '' ORDER BY tenant"
}

// Views are a backend's views of its named tenants, one per name, made on
// first use: asking for a name again returns the same view. The zero
// value is ready to use; it is safe for concurrent use.
type Views[V any] struct {
	mu    sync.Mutex
	views map[string]V
}

// Get returns the view of the tenant name, made by open when it is the
// first ask. name must be a valid tenant name other than
// sdk.DefaultTenant, whose view is the backend itself (TENANT_INVALID).
func (vs *Views[V]) Get(op, name string, open func(tenant string) (V, error)) (V, error) {
	var zero V
	if err := sdk.ValidateTenant(name); err != nil {
		return zero, err
	}
	if name == sdk.DefaultTenant {
		return zero, sdk.Errorf(sdk.CodeTenantInvalid, op, "tenant %s is the implicit tenant: its view is the backend itself, not a Tenant view", strconv.Quote(name))
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if v, ok := vs.views[name]; ok {
		return v, nil
	}
	v, err := open(name)
	if err != nil {
		return zero, err
	}
	if vs.views == nil {
		vs.views = map[string]V{}
	}
	vs.views[name] = v
	return v, nil
}

// All returns every view made so far, in no order.
func (vs *Views[V]) All() []V {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	out := make([]V, 0, len(vs.views))
	for _, v := range vs.views {
		out = append(out, v)
	}
	return out
}

// Tenant implements sdk.Tenancy.Tenant for a backend's configured
// instance, whose views vs keeps: after open checks the instance's store,
// the view of the tenant name (Views.Get), made by view on the first ask.
func Tenant[S any, V sdk.Persistence](op, name string, open func() (S, error), vs *Views[V], view func(tenant string) V) (sdk.Persistence, error) {
	if _, err := open(); err != nil {
		return nil, err
	}
	v, err := vs.Get(op, name, func(tenant string) (V, error) { return view(tenant), nil })
	if err != nil {
		return nil, err // not v: a nil view in a non-nil interface
	}
	return v, nil
}

// Tenants implements sdk.Tenancy.Tenants: after the backend's store
// (open) and ctx are checked, the store runs TenantsQuery over its
// sessions table, then fn gets each named tenant in ascending order while
// the backend holds nothing; an error of the query is mapped by DBErr, and
// an error of fn ends the listing and is returned as is.
func Tenants[S Dialect](ctx context.Context, op string, open func() (S, error), fn func(name string) error) error {
	st, err := open()
	if err != nil {
		return err
	}
	if err := handles.Ended(ctx, op, "tenants"); err != nil {
		return err
	}
	ns, err := tenantNames(ctx, st)
	if err != nil {
		return DBErr(ctx, st, "", "listing the tenants", err)
	}
	for _, n := range ns {
		if err := fn(n); err != nil {
			return err
		}
	}
	return nil
}

// tenantNames reads the named tenants of d's database (TenantsQuery).
func tenantNames(ctx context.Context, d Dialect) ([]string, error) {
	rows, done, err := d.Query(ctx, TenantsQuery(d.Table("sessions")))
	if err != nil {
		return nil, err
	}
	defer done()
	return Collect(rows, func(r Row) (string, error) {
		var n string
		return n, r.Scan(&n)
	})
}
