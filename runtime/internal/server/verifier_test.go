package server_test

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/sdk"
)

// tokens is a Verifier of fixed bearer tokens, each with its principal.
type tokens map[string]auth.Principal

// Configured implements server.Verifier.
func (t tokens) Configured() bool { return len(t) > 0 }

// Verify implements server.Verifier.
func (t tokens) Verify(_ context.Context, bearer string) (auth.Principal, error) {
	p, ok := t[bearer]
	if !ok {
		return auth.Principal{}, sdk.Errorf(sdk.CodeUnauthenticated, "auth", "unknown token")
	}
	return p, nil
}

// operator is a Verifier of one operator token of every tenant, as
// `serve --token-file` makes.
func operator(token string) tokens {
	return tokens{token: {Name: "token-file", Tenant: auth.AllTenants, Role: auth.RoleOperator}}
}
