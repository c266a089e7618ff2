package service

import (
	"context"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// tenants are the named tenants' services, built on first use.
type tenants struct {
	mu     sync.Mutex
	m      map[string]*Service
	closed bool
}

// close marks the services closed; it reports whether they were open.
func (ts *tenants) close() bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	was := !ts.closed
	ts.closed = true
	return was
}

// all returns every tenant's service built so far.
func (ts *tenants) all() []*Service {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]*Service, 0, len(ts.m))
	for _, t := range ts.m {
		out = append(out, t)
	}
	return out
}

// Tenant returns the service of tenant name, whose every method acts
// within that tenant: its sessions, ids, listing, search, audit log,
// holds, retention, exports and imports are the tenant's alone, and the
// sessions it creates, forks, salvages or imports belong to it
// (Header.Tenant). name must pass sdk.ValidateTenant (else
// TENANT_INVALID); sdk.DefaultTenant returns s's root service (the one
// Open returned, whose sessions are those stored before tenants existed).
// Every call with one name returns the same *Service, built on the first.
// Tenants share the plugin processes, the metrics and the limits
// max_live_sessions and max_pending_bytes_total, which count every
// tenant's sessions together. A persistence backend without the tenants
// capability makes every other name CONFIG_INVALID naming its plugin.
// After Close it is SESSION_CLOSED. Safe for concurrent use.
func (s *Service) Tenant(name string) (*Service, error) {
	if err := sdk.ValidateTenant(name); err != nil {
		return nil, err
	}
	root := s
	if s.root != nil {
		root = s.root
	}
	if name == sdk.DefaultTenant {
		return root, nil
	}
	ts := &root.tenants
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return nil, sdk.Errorf(sdk.CodeSessionClosed, "tenant", "the service is closed")
	}
	if t, ok := ts.m[name]; ok {
		return t, nil
	}
	e, err := root.e.Tenant(name)
	if err != nil {
		return nil, err
	}
	t := &Service{e: e, cfg: root.cfg, metrics: root.metrics, log: root.log, readOnly: root.readOnly, root: root}
	t.h = root.newHost(e)
	if ts.m == nil {
		ts.m = map[string]*Service{}
	}
	ts.m[name] = t
	return t, nil
}

// TenantName returns the name of the service's tenant: sdk.DefaultTenant
// for the service Open returned.
func (s *Service) TenantName() string { return s.e.TenantName() }

// Tenants returns the tenants that hold sessions: sdk.DefaultTenant
// first, always, then every named tenant with at least one session stored
// in the primary backend, in ascending order. A primary without the
// tenants capability has only the default tenant.
func (s *Service) Tenants(ctx context.Context) ([]string, error) {
	var names []string
	err := s.e.Tenants(ctx, func(name string) error {
		names = append(names, name)
		return nil
	})
	return names, err
}
