package auth

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Role is what a credential may do. Each role allows everything the ones
// below it do.
type Role int

// The roles, weakest first.
const (
	// RoleRead reads: views, events, follow, search, export.
	RoleRead Role = iota + 1
	// RoleWrite reads and writes: create, append, fork, compact, flush,
	// release, import.
	RoleWrite
	// RoleAdmin writes and administers its tenant: delete, hold,
	// release-hold, gc and the audit log.
	RoleAdmin
	// RoleOperator is an admin of every tenant (AllTenants).
	RoleOperator
)

var roleNames = [...]string{RoleRead: "read", RoleWrite: "write", RoleAdmin: "admin", RoleOperator: "operator"}

// String returns the role's name: read, write, admin or operator.
func (r Role) String() string {
	if r < RoleRead || r > RoleOperator {
		return "role(" + strconv.Itoa(int(r)) + ")"
	}
	return roleNames[r]
}

// ParseRole reads a role name; anything else is USAGE naming the four.
func ParseRole(s string) (Role, error) {
	for r := RoleRead; r <= RoleOperator; r++ {
		if roleNames[r] == s {
			return r, nil
		}
	}
	return 0, sdk.Errorf(sdk.CodeUsage, "auth", "role %s must be read, write, admin or operator", strconv.Quote(s))
}

// Allows reports whether a credential of role r may do what needs role
// need.
func (r Role) Allows(need Role) bool { return r >= need }

// AllTenants is the Tenant of an operator credential: it may address every
// tenant.
const AllTenants = "*"

// Principal is who a request comes from, as its credential says.
type Principal struct {
	// Name names the credential in audit records and logs: the token's
	// name or the JWT's subject, never the secret.
	Name string
	// Tenant is the tenant the credential is scoped to (sdk.DefaultTenant
	// for the implicit one), or AllTenants for an operator.
	Tenant string
	// Role is what it may do.
	Role Role
}

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal NewContext put in ctx; false when
// there is none (a server without credentials, or a call from inside the
// process).
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
