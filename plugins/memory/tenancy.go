package memory

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// The tenants capability (sdk.Tenancy): every tenant has a store of its
// own (sessions, claims, holds, audit log, watch wake-up, each under the
// store's lock as for the implicit tenant), created the first time any
// instance asks for the tenant and shared by every instance of the
// storage. An instance keeps one view per tenant, each with its own
// handle table, so a handle of one view is HANDLE_CLOSED in every other.

// tenants is the registry of the stores of one storage, one per tenant.
type tenants struct {
	mu       sync.Mutex
	implicit *store            // the implicit tenant's
	named    map[string]*store // by tenant name
}

// store returns the store of the named tenant, creating it empty.
func (ts *tenants) store(name string) *store {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	st, ok := ts.named[name]
	if !ok {
		st = newStore(name, ts)
		ts.named[name] = st
	}
	return st
}

// instance is what the views of one instance share: the view of each
// named tenant asked for so far, by name.
type instance struct {
	mu    sync.Mutex
	views map[string]*Backend
}

// Tenant returns this instance's view of tenant name (sdk.Tenancy): a
// Backend with every capability of this one, over the tenant's store,
// whose Create and Import refuse a header naming another tenant (USAGE).
// The same name gives the same view on every call; name must be a valid
// tenant name other than sdk.DefaultTenant (TENANT_INVALID). Asking a view
// gives the same views as asking the instance.
func (b *Backend) Tenant(name string) (sdk.Persistence, error) {
	if err := handles.CheckViewName(op, name); err != nil {
		return nil, err
	}
	in := b.inst
	in.mu.Lock()
	defer in.mu.Unlock()
	v, ok := in.views[name]
	if !ok {
		v = &Backend{st: b.st.all.store(name), handles: handles.NewTable[handle](op), inst: in}
		in.views[name] = v
	}
	return v, nil
}

// Tenants calls fn, in ascending order, with the name of every named
// tenant that has at least one stored session (sdk.Tenancy); an
// unmaterialized create does not count. fn runs without any lock held; an
// error from fn ends the listing and is returned as is.
func (b *Backend) Tenants(ctx context.Context, fn func(name string) error) error {
	if err := handles.Ended(ctx, op, "tenants"); err != nil {
		return err
	}
	all := b.st.all
	all.mu.Lock()
	stores := make([]*store, 0, len(all.named))
	for _, st := range all.named {
		stores = append(stores, st)
	}
	all.mu.Unlock()
	var names []string
	for _, st := range stores {
		st.mu.Lock()
		if len(st.sessions) > 0 {
			names = append(names, st.tenant)
		}
		st.mu.Unlock()
	}
	slices.SortFunc(names, strings.Compare)
	for _, name := range names {
		if err := fn(name); err != nil {
			return err
		}
	}
	return nil
}

// decode decodes the stored header of session id in st: the format gate
// of headerjson.Decode, then a header naming another tenant than st's is
// CORRUPT_LOG; st.mu is held.
func (st *store) decode(s *session, id string) (sdk.Header, error) {
	h, err := headerjson.Decode(s.header, id, artifact)
	if err != nil {
		return sdk.Header{}, err
	}
	return h, handles.StoredTenant(op, h, st.tenant, artifact)
}

var _ sdk.Tenancy = (*Backend)(nil)
