package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Tenants (docs/storage.md "Tenants"): every table keyed by session has a
// tenant column, '' for the implicit tenant and the tenant's name
// otherwise, first in its key, and torn_rows and audit rows carry it; a
// Backend is the view of one tenant, and the one the host configures is
// the implicit tenant's. Its views share its pool, its ownership
// connection and its watches' listener. A named tenant's session has an
// advisory lock key and a notification payload of its own (lockKey,
// payload); the implicit tenant's are those of the schemas before tenants.

var _ sdk.Tenancy = (*Backend)(nil)

// space is one tenant's part of a store: the statements a space runs
// read and write only the rows whose tenant column is tenant. It is what
// every operation of a Backend runs on (Backend.store), so a statement
// cannot be written without its tenant at hand.
type space struct {
	*store
	tenant string // "" for the implicit tenant
}

// Tenant implements sqlstore.Dialect.
func (s space) Tenant() string { return s.tenant }

// lockKey is the advisory lock key of session id of s's tenant: that of
// the id for the implicit tenant, of the tenant and the id, apart by a
// byte no id has, for a named one.
func (s space) lockKey(id string) int64 {
	if s.tenant == "" {
		return lockKey(s.schema, id)
	}
	return lockKey(s.schema, s.tenant+"\x00"+id)
}

// payloadSep parts the tenant from the id in the notification payload of
// a named tenant's session: a byte no id has (sdk.ValidateSessionID) and
// PostgreSQL allows in text.
const payloadSep = "\x1f"

// payload is the NOTIFY payload of session id of s's tenant: the id for
// the implicit tenant, <tenant> US <id> for a named one.
func (s space) payload(id string) string {
	if s.tenant == "" {
		return id
	}
	return s.tenant + payloadSep + id
}

// Tenant implements sdk.Tenancy: the view of tenant name's sessions, a
// Backend over the same pool, ownership connection and listener, with its
// own handles, claims and creates. name is a valid tenant name other than
// sdk.DefaultTenant (TENANT_INVALID). Every call returns the same view;
// shutting the configured Backend down shuts its views down.
func (b *Backend) Tenant(name string) (sdk.Persistence, error) {
	root := b.rootOf()
	return sqlstore.Tenant(op, name, root.store, &root.views, func(tenant string) *Backend {
		v := New()
		v.st, v.own, v.compressMin, v.tenant, v.root = root.st, root.own, root.compressMin, tenant, root
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
