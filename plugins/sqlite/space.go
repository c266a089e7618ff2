package sqlite

import (
	"context"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Tenants (docs/storage.md "Tenants"): every table keyed by session has a
// tenant column, '' for the implicit tenant and the tenant's name
// otherwise, first in its key; a Backend is the view of one tenant, and
// the one the host configures is the implicit tenant's. Beside the
// database, a named tenant's lock files and torn-row files live in a
// directory named after it under <path>.locks/ and <path>.torn/: no lock
// or torn-row file is ever named like a tenant (theirs end in .lock and
// .jsonl, a tenant name has no dot).

var _ sdk.Tenancy = (*Backend)(nil)

// space is one tenant's part of a store: the statements a space runs
// read and write only the rows whose tenant column is tenant, and its
// claims and files are the tenant's own. It is what every operation of a
// Backend runs on (Backend.store), so a statement cannot be written
// without its tenant at hand.
type space struct {
	*store
	tenant string // "" for the implicit tenant
}

// Tenant implements sqlstore.Dialect.
func (s space) Tenant() string { return s.tenant }

// claimKey is a session of one tenant: the key of the claim table.
type claimKey struct{ tenant, id string }

// claimKey returns the claimKey of session id of s's tenant.
func (s space) claimKey(id string) claimKey { return claimKey{s.tenant, id} }

// dir returns the directory of s's tenant under base: base itself for the
// implicit tenant.
func (s space) dir(base string) string {
	if s.tenant == "" {
		return base
	}
	return filepath.Join(base, s.tenant)
}

// Tenant implements sdk.Tenancy: the view of tenant name's sessions, a
// Backend over the same database, connection and claim table, with its
// own handles and creates. name is a valid tenant name other than
// sdk.DefaultTenant (TENANT_INVALID). Every call returns the same view;
// shutting the configured Backend down shuts its views down.
func (b *Backend) Tenant(name string) (sdk.Persistence, error) {
	root := b.rootOf()
	return sqlstore.Tenant(op, name, root.store, &root.views, func(tenant string) *Backend {
		v := New()
		v.st, v.compressMin, v.tenant, v.root = root.st, root.compressMin, tenant, root
		return v
	})
}

// Tenants implements sdk.Tenancy: the named tenants holding at least one
// stored session, ascending.
func (b *Backend) Tenants(ctx context.Context, fn func(name string) error) error {
	return sqlstore.Tenants(ctx, op, b.store, fn)
}

// rootOf is the Backend whose views b's views are: b, or the Backend b is
// a view of.
func (b *Backend) rootOf() *Backend {
	if b.root != nil {
		return b.root
	}
	return b
}
