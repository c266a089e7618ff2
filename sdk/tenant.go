package sdk

import (
	"context"
	"strconv"
)

// DefaultTenant is the name of the implicit tenant: the one every session
// belongs to when no tenants are configured, whose sessions are stored as
// before tenants existed (a Header.Tenant of "", no header member, the
// backend's root). Credentials and commands name it "default".
const DefaultTenant = "default"

// MaxTenantBytes is the longest tenant name.
const MaxTenantBytes = 63

// ValidateTenant checks a tenant name: [a-z0-9][a-z0-9-]{0,62}, else
// TENANT_INVALID naming the rule. DefaultTenant is a valid name.
func ValidateTenant(name string) error {
	if len(name) == 0 || len(name) > MaxTenantBytes {
		return Errorf(CodeTenantInvalid, "tenant", "tenant name must be 1–63 bytes of [a-z0-9-] starting with a letter or digit; got %d bytes", len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '-') {
			return Errorf(CodeTenantInvalid, "tenant", "tenant name %s must match [a-z0-9][a-z0-9-]{0,62}; byte %d is %s", strconv.Quote(name), i, strconv.QuoteRune(rune(c)))
		}
	}
	return nil
}

// HeaderTenant returns the Header.Tenant of a valid tenant name: "" for
// DefaultTenant, the name itself otherwise.
func HeaderTenant(name string) string {
	if name == DefaultTenant {
		return ""
	}
	return name
}

// TenantName returns the name of a Header.Tenant: DefaultTenant for "",
// the value itself otherwise.
func TenantName(headerTenant string) string {
	if headerTenant == "" {
		return DefaultTenant
	}
	return headerTenant
}

// CapabilityTenants is the Info capability of a persistence plugin whose
// backend is a Tenancy.
const CapabilityTenants = "tenants"

// Tenancy is the optional persistence capability "tenants": the backend
// keeps the sessions of each tenant apart (docs/storage.md, "Tenants"),
// and the Persistence itself is the view of the implicit tenant. The host
// discovers it by type assertion on an in-process backend and by
// CapabilityTenants in GetInfo on a plugin; without it only the implicit
// tenant can be served.
type Tenancy interface {
	// Tenant returns the backend's view of one tenant's sessions: a
	// Persistence (with every optional capability the backend has) on
	// which ids, List, the audit log and holds are the tenant's alone, and
	// whose Create stores Header.Tenant = name. name is a valid tenant name
	// other than DefaultTenant (TENANT_INVALID otherwise). Views of one
	// name share their state; asking again is cheap. A header given to the
	// view's Create or Import whose Tenant is not name is USAGE; a stored
	// log whose header names another tenant is CORRUPT_LOG.
	Tenant(name string) (Persistence, error)
	// Tenants calls fn with the name of every tenant other than the
	// implicit one that holds at least one stored session, in ascending
	// order.
	Tenants(ctx context.Context, fn func(name string) error) error
}
