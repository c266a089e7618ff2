package handles

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// CheckTenant checks the header given to a tenant view's Create, Import
// or CopyPrefix: its Tenant must be the view's, tenant (a Header.Tenant:
// "" for the implicit tenant), else USAGE naming both, before anything
// is claimed.
func CheckTenant(op string, h sdk.Header, tenant string) error {
	if h.Tenant == tenant {
		return nil
	}
	return sdk.Errorf(sdk.CodeUsage, op, "the header of session %s names tenant %s, but this view stores the sessions of tenant %s; create it through that tenant's view",
		strconv.Quote(h.ID), strconv.Quote(sdk.TenantName(h.Tenant)), strconv.Quote(sdk.TenantName(tenant))).WithSession(h.ID)
}

// StoredTenant checks a stored header read through a tenant view: a
// header naming another tenant than the view's, tenant (a Header.Tenant),
// is CORRUPT_LOG naming both and where (the file or table it came from).
func StoredTenant(op string, h sdk.Header, tenant, where string) error {
	if h.Tenant == tenant {
		return nil
	}
	return sdk.Errorf(sdk.CodeCorruptLog, op, "%s: the stored header of session %s names tenant %s, but it is stored among the sessions of tenant %s",
		where, strconv.Quote(h.ID), strconv.Quote(sdk.TenantName(h.Tenant)), strconv.Quote(sdk.TenantName(tenant))).WithSession(h.ID)
}

// CheckViewName checks the name given to sdk.Tenancy.Tenant: a valid
// tenant name (TENANT_INVALID naming the rule) other than
// sdk.DefaultTenant, whose sessions the backend itself serves
// (TENANT_INVALID saying so).
func CheckViewName(op, name string) error {
	if err := sdk.ValidateTenant(name); err != nil {
		return err
	}
	if name == sdk.DefaultTenant {
		return sdk.Errorf(sdk.CodeTenantInvalid, op, "tenant %s is the implicit tenant: use the backend itself, not a view of it", strconv.Quote(name))
	}
	return nil
}
