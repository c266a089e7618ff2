package service

import (
	"context"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
)

// TokenStore is the store of the scoped tokens logbook serve accepts
// (docs/operations.md, "auth"): the token file, or a table of the
// postgres primary's schema. `logbook token` creates, lists and revokes
// through it; serve reads the same store. It needs no running Service.
type TokenStore struct{ s *auth.Store }

// NewToken is a token to create.
type NewToken struct {
	// Name names it: [a-z0-9][a-z0-9._-]{0,63}, unique in the store.
	Name string
	// Tenant is the tenant it is scoped to, or "*" (every tenant) for an
	// operator.
	Tenant string
	// Role is read, write, admin or operator; operator goes with tenant
	// "*" and only with it.
	Role string
}

// TokenInfo describes a stored token; the secret is never stored.
type TokenInfo struct {
	// Name names the token in `logbook token revoke` and in the by of
	// the audit records its requests make.
	Name string `json:"name"`
	// Tenant is the tenant it is scoped to, or "*" for an operator.
	Tenant string `json:"tenant"`
	// Role is read, write, admin or operator.
	Role string `json:"role"`
	// Created is when it was made, in UTC.
	Created time.Time `json:"created"`
}

// OpenTokenStore opens the token store cfg names and reads it: an invalid
// token file, or one others than its owner may read, is CONFIG_INVALID
// naming it. A store that does not exist yet holds no tokens.
func OpenTokenStore(ctx context.Context, cfg *config.Config) (*TokenStore, error) {
	s, err := auth.OpenStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &TokenStore{s: s}, nil
}

// Where names the store: `token file "…"` or `table "…".auth_tokens`.
func (t *TokenStore) Where() string { return t.s.Where() }

// Create makes the token and returns its secret, which exists nowhere
// else: the store keeps its SHA-256. A bad name, role or scope, or a name
// the store holds already, is USAGE; a bad tenant name TENANT_INVALID.
func (t *TokenStore) Create(ctx context.Context, n NewToken) (string, TokenInfo, error) {
	role, err := auth.ParseRole(n.Role)
	if err != nil {
		return "", TokenInfo{}, err
	}
	secret, tok, err := t.s.Create(ctx, auth.Token{Name: n.Name, Tenant: n.Tenant, Role: role})
	if err != nil {
		return "", TokenInfo{}, err
	}
	return secret, tokenInfo(tok), nil
}

// List returns the stored tokens in name order.
func (t *TokenStore) List(ctx context.Context) ([]TokenInfo, error) {
	toks, err := t.s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]TokenInfo, len(toks))
	for i, tok := range toks {
		out[i] = tokenInfo(tok)
	}
	return out, nil
}

// Revoke removes the token called name; every serve over the store
// refuses it within a second. An unknown name is USAGE naming it.
func (t *TokenStore) Revoke(ctx context.Context, name string) error { return t.s.Revoke(ctx, name) }

// Close releases the store's database connections, if any.
func (t *TokenStore) Close() error { return t.s.Close() }

// tokenInfo describes t to callers outside the runtime.
func tokenInfo(t auth.Token) TokenInfo {
	return TokenInfo{Name: t.Name, Tenant: t.Tenant, Role: t.Role.String(), Created: t.Created}
}
