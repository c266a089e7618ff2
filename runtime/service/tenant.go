package service

import "context"

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
	root := s
	if s.root != nil {
		root = s.root
	}
	return root.tenants.Get(name, root, func(name string) (*Service, error) {
		e, err := root.e.Tenant(name)
		if err != nil {
			return nil, err
		}
		t := &Service{e: e, cfg: root.cfg, metrics: root.metrics, log: root.log, readOnly: root.readOnly, root: root}
		t.h = root.newHost(e)
		return t, nil
	})
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
