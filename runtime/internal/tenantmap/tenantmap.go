// Package tenantmap keeps the named tenants' values of a root (the
// engine's tenant engines, the service's tenant services): one per name,
// built on the first ask, refused once the root is closed.
package tenantmap

import (
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Map is the named tenants' values of one root. The zero value is ready
// to use; it is safe for concurrent use.
type Map[T any] struct {
	mu     sync.Mutex
	m      map[string]T
	closed string // why Get refuses, once Close is called; "" while open
}

// Get returns the value of tenant name (sdk.ValidateTenant, else
// TENANT_INVALID): root for sdk.DefaultTenant, otherwise the one build
// made on the first call for name, which every later call returns. build
// runs under the map's lock, so a name is built once; an error of build
// is returned as is and nothing is kept. After Close a named tenant is
// SESSION_CLOSED with Close's reason.
func (tm *Map[T]) Get(name string, root T, build func(name string) (T, error)) (T, error) {
	var zero T
	if err := sdk.ValidateTenant(name); err != nil {
		return zero, err
	}
	if name == sdk.DefaultTenant {
		return root, nil
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.closed != "" {
		return zero, sdk.Errorf(sdk.CodeSessionClosed, "tenant", "%s", tm.closed)
	}
	if t, ok := tm.m[name]; ok {
		return t, nil
	}
	t, err := build(name)
	if err != nil {
		return zero, err
	}
	if tm.m == nil {
		tm.m = map[string]T{}
	}
	tm.m[name] = t
	return t, nil
}

// Close refuses every later Get of a named tenant, saying reason (which
// must not be empty), and returns every value built so far, in no order,
// and whether the map was open until now. Calling it again returns the
// same values.
func (tm *Map[T]) Close(reason string) (built []T, wasOpen bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	wasOpen = tm.closed == ""
	tm.closed = reason
	built = make([]T, 0, len(tm.m))
	for _, t := range tm.m {
		built = append(built, t)
	}
	return built, wasOpen
}
