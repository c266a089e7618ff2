package jsonl

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Tenants (docs/storage.md, "Tenants"):
//
//	<root>/<enc(id)>/…                  the implicit tenant's sessions, as before tenants existed
//	<root>/.audit.jsonl, <root>/.deleting
//	<root>/.tenants/<name>/<enc(id)>/…  the sessions of the named tenant <name>
//	<root>/.tenants/<name>/.audit.jsonl, <root>/.tenants/<name>/.deleting
//
// Each tenant directory is laid out as the root is (session directories,
// the audit log and holds, torn artifacts and temp files inside the
// session directories), so everything the backend does under the root it
// does under a tenant directory for that tenant's view. ".tenants" is a
// name EncodeID never produces (a leading '.' is encoded as "~2E"), so no
// session directory of the implicit tenant is ever it, and List of the
// implicit tenant skips it as it skips every name that does not decode.
// Tenant names are [a-z0-9][a-z0-9-]{0,62} (sdk.ValidateTenant), so they
// are directory names as they are.
//
// A tenant directory is made by the first Create (or CopyPrefix, Import)
// of a session in it, with its parents, each parent fsynced after it gains
// the entry (sdk/durable.MkdirAll), before that Create returns; and the
// first Create of each view in a process fsyncs .tenants and the root
// all the same (syncTenantDir), as another process may have made them and
// not synced them yet. The session's own acknowledgement (the fsync of
// its log's directory) comes after, so a crash never keeps a session
// whose tenant directory it loses.

// tenantsDir is the directory under the root that holds one directory per
// named tenant.
const tenantsDir = ".tenants"

// tenantRoot is the directory of the sessions of the tenant whose
// Header.Tenant is tenant, under root.
func tenantRoot(root, tenant string) string {
	if tenant == "" {
		return root
	}
	return filepath.Join(root, tenantsDir, tenant)
}

var _ sdk.Tenancy = (*Backend)(nil)

// Tenant implements sdk.Tenancy: the view of the named tenant name, a
// Backend over <root>/.tenants/<name> with every capability of this one,
// sharing its configuration (Configure of any view reconfigures them
// all). Its handles, claims, List, audit log and holds are the tenant's
// alone; a handle of another view is HANDLE_CLOSED on it. Its Create,
// CopyPrefix and Import refuse a header whose Tenant is not name (USAGE);
// a log in its directory whose header names another tenant is
// CORRUPT_LOG. Every call with one name returns the same view, from any
// view. name must be a valid tenant name other than sdk.DefaultTenant
// (TENANT_INVALID), whose view is the Backend New returned.
func (b *Backend) Tenant(name string) (sdk.Persistence, error) {
	if err := sdk.ValidateTenant(name); err != nil {
		return nil, err
	}
	if name == sdk.DefaultTenant {
		return nil, sdk.Errorf(sdk.CodeTenantInvalid, op, "tenant %s is the implicit tenant: its view is the backend itself, not one Tenant returns", strconv.Quote(name))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.views[name]
	if !ok {
		v = newView(b.shared, name)
		b.views[name] = v
	}
	return v, nil
}

// Tenants implements sdk.Tenancy: it calls fn, in ascending order, with
// the name of every directory under <root>/.tenants that is a valid tenant
// name and holds at least one stored session (a session directory with a
// log, damaged or not). Other entries there are not tenants and are
// skipped. An error from fn ends the listing and is returned as is.
func (b *Backend) Tenants(ctx context.Context, fn func(name string) error) error {
	if err := handles.Ended(ctx, op, "tenants"); err != nil {
		return err
	}
	cfg, err := b.base.config()
	if err != nil {
		return err
	}
	dir := filepath.Join(cfg.Root, tenantsDir)
	names, err := b.fs.ReadDir(dir) // sorted
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return handles.IOError(op, "", "listing "+dir, err)
	}
	for _, name := range names {
		if name == sdk.DefaultTenant || sdk.ValidateTenant(name) != nil {
			continue
		}
		held, err := b.holdsSession(filepath.Join(dir, name), cfg)
		if err != nil {
			return err
		}
		if !held {
			continue
		}
		if err := handles.Ended(ctx, op, "tenants"); err != nil {
			return err
		}
		if err := fn(name); err != nil {
			return err
		}
	}
	return nil
}

// holdsSession reports whether the tenant directory dir holds a stored
// session: a session directory in which findLog finds a log, or finds one
// it refuses (CORRUPT_LOG, COMPRESSION_MISMATCH), which is a session all
// the same.
func (b *Backend) holdsSession(dir string, cfg Config) (bool, error) {
	names, err := b.fs.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil
	}
	if err != nil {
		return false, handles.IOError(op, "", "listing "+dir, err)
	}
	for _, name := range names {
		id, ok := DecodeID(name)
		if !ok || sdk.ValidateSessionID(id) != nil {
			continue
		}
		_, _, err := b.findLog(id, filepath.Join(dir, name), cfg)
		switch {
		case err == nil || errors.Is(err, sdk.CodeCorruptLog) || errors.Is(err, sdk.CodeCompressionMismatch):
			return true, nil
		case !errors.Is(err, sdk.CodeSessionNotFound):
			return false, err
		}
	}
	return false, nil
}

// syncTenantDir makes the directory of this view's named tenant, whose
// sessions are under root, durable: it fsyncs .tenants and the root, the
// directories holding its entries, once per view. sdk/durable.MkdirAll
// syncs only the entries it made itself; one another process made a moment
// ago may not be synced yet, and a crash would take the tenant directory,
// and the session acknowledged in it, away.
func (b *Backend) syncTenantDir(id, root string) error {
	if b.tenant == "" || b.synced.Load() {
		return nil
	}
	tenants := filepath.Dir(root)
	for _, dir := range []string{tenants, filepath.Dir(tenants)} {
		if err := b.fs.SyncDir(dir); err != nil {
			return handles.IOError(op, id, "syncing "+dir, err)
		}
	}
	b.synced.Store(true)
	return nil
}
