package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TokenPrefix starts every token `logbook token create` makes: "lb_" and
// the unpadded base64url of 32 random bytes.
const TokenPrefix = "lb_"

// tokenRandomBytes is how much randomness a token carries.
const tokenRandomBytes = 32

// MaxTokenNameBytes is the longest token name.
const MaxTokenNameBytes = 64

// op is the Op of this package's errors.
const op = "auth"

// Token describes a stored token: everything but its secret, which is
// kept only as its SHA-256.
type Token struct {
	// Name names the token in `logbook token` and in audit records:
	// [a-z0-9][a-z0-9._-]{0,63}, unique in its store.
	Name string
	// Tenant is the tenant it is scoped to, or AllTenants for an
	// operator.
	Tenant string
	// Role is what it may do.
	Role Role
	// Created is when it was made, in UTC.
	Created time.Time
}

// principal is who a request bearing t comes from.
func (t Token) principal() Principal {
	return Principal{Name: t.Name, Tenant: t.Tenant, Role: t.Role}
}

// newSecret returns a fresh token and its SHA-256.
func newSecret() (string, [sha256.Size]byte) {
	var b [tokenRandomBytes]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	s := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return s, sha256.Sum256([]byte(s))
}

// ValidateTokenName checks a token name: [a-z0-9][a-z0-9._-]{0,63}, else
// USAGE naming the rule.
func ValidateTokenName(name string) error {
	if len(name) == 0 || len(name) > MaxTokenNameBytes {
		return sdk.Errorf(sdk.CodeUsage, op, "token name must be 1–%d bytes of [a-z0-9._-] starting with a letter or digit; got %d bytes", MaxTokenNameBytes, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return sdk.Errorf(sdk.CodeUsage, op, "token name %s must match [a-z0-9][a-z0-9._-]{0,63}; byte %d is %s", strconv.Quote(name), i, strconv.QuoteRune(rune(c)))
		}
	}
	return nil
}

// CheckScope checks the tenant and role of a credential: the tenant is a
// valid tenant name (TENANT_INVALID otherwise) or AllTenants, and
// AllTenants goes with RoleOperator and only with it (USAGE otherwise).
func CheckScope(tenant string, role Role) error {
	if role < RoleRead || role > RoleOperator {
		return sdk.Errorf(sdk.CodeUsage, op, "%s is not a role; roles are read, write, admin and operator", role)
	}
	switch {
	case tenant == AllTenants && role != RoleOperator:
		return sdk.Errorf(sdk.CodeUsage, op, "tenant %q (all tenants) needs role operator, not %s", AllTenants, role)
	case tenant == AllTenants:
		return nil
	case role == RoleOperator:
		return sdk.Errorf(sdk.CodeUsage, op, "role operator acts on every tenant: its tenant must be %q, not %s", AllTenants, strconv.Quote(tenant))
	}
	return sdk.ValidateTenant(tenant)
}
