package auth

import (
	"context"
	"crypto/sha256"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// backend is where a Store keeps its tokens: the token file or a table of
// the PostgreSQL schema. Its methods may be called from several
// goroutines and processes at once; create and revoke are atomic against
// every other writer.
type backend interface {
	// version identifies the stored content cheaply (a stat, one row): it
	// changes whenever the content does.
	version(ctx context.Context) (string, error)
	// load reads the content and the version it had.
	load(ctx context.Context) (*tokenSet, string, error)
	// create stores e; a name already stored is USAGE naming it.
	create(ctx context.Context, e entry) error
	// revoke removes the token called name; an unknown name is USAGE
	// naming it.
	revoke(ctx context.Context, name string) error
	// where names the store in messages, never with a password.
	where() string
	close() error
}

// Store holds the scoped tokens: their names, tenants, roles and the
// SHA-256 of their secrets. It is the token file (<data_dir>/tokens, or
// auth.tokens_file) or, when the primary persistence is postgres, a table
// of its schema (package doc). Its methods are safe for concurrent use;
// several processes may use one store, each seeing the others' changes
// once it refreshes.
type Store struct {
	b   backend
	cur atomic.Pointer[snapshot]
}

// snapshot is what the store held when it was last read.
type snapshot struct {
	set     *tokenSet
	version string
}

// OpenStore opens the token store cfg names (Auth.TokensFile, else a
// table of the postgres primary's schema, else <DataDir>/tokens) and
// reads it: a token file with permissions wider than 0600 or another
// shape is CONFIG_INVALID naming it. A store that does not exist yet holds
// no tokens; Create makes it.
func OpenStore(ctx context.Context, cfg *config.Config) (*Store, error) {
	var b backend
	switch {
	case cfg.Auth.TokensFile != "":
		b = &fileBackend{path: cfg.Auth.TokensFile}
	case len(cfg.Persistence) > 0 && cfg.Persistence[0].Name == "postgres":
		open, ok := tokenTable(cfg.Persistence[0].Name)
		if !ok {
			return nil, sdk.Errorf(sdk.CodeConfigInvalid, op, "the postgres primary keeps the tokens in its database, and this program does not link that token store: import github.com/seed-e5e476df/logbook/runtime/service/pgtokens (the logbook binary does), or set auth { tokens_file }")
		}
		t, err := open(ctx, cfg.Persistence[0].Config)
		if err != nil {
			return nil, err
		}
		b = tableBackend{t}
	default:
		b = &fileBackend{path: cfg.ResolvePath("tokens")}
	}
	s := &Store{b: b}
	if err := s.reload(ctx); err != nil {
		b.close()
		return nil, err
	}
	return s, nil
}

// Where names the store: `token file "/path"` or `table "schema".auth_tokens`.
func (s *Store) Where() string { return s.b.where() }

// Create makes a token for t's tenant and role, named t.Name, and returns
// its secret — the only time the secret exists outside the caller — and
// the stored description (Created set to now). A bad name or scope is
// USAGE (TENANT_INVALID for the tenant name), a name the store holds
// already is USAGE naming it.
func (s *Store) Create(ctx context.Context, t Token) (string, Token, error) {
	if err := ValidateTokenName(t.Name); err != nil {
		return "", Token{}, err
	}
	if err := CheckScope(t.Tenant, t.Role); err != nil {
		return "", Token{}, err
	}
	secret, hash := newSecret()
	t.Created = time.Now().UTC().Truncate(time.Microsecond) // PostgreSQL keeps microseconds
	if err := s.b.create(ctx, entry{Token: t, hash: hash}); err != nil {
		return "", Token{}, err
	}
	return secret, t, s.reload(ctx)
}

// List returns the stored tokens in name order, as the store holds them
// now.
func (s *Store) List(ctx context.Context) ([]Token, error) {
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	return s.cur.Load().set.tokens(), nil
}

// Revoke removes the token called name: every verifier over the store
// refuses it once it refreshes (within a second). An unknown name is
// USAGE naming it.
func (s *Store) Revoke(ctx context.Context, name string) error {
	if err := ValidateTokenName(name); err != nil {
		return err
	}
	if err := s.b.revoke(ctx, name); err != nil {
		return err
	}
	return s.reload(ctx)
}

// Close releases the store's database connections, if any.
func (s *Store) Close() error { return s.b.close() }

// reload reads the store.
func (s *Store) reload(ctx context.Context) error {
	set, v, err := s.b.load(ctx)
	if err != nil {
		return err
	}
	s.cur.Store(&snapshot{set: set, version: v})
	return nil
}

// refresh reloads the store when its version changed since the last read.
func (s *Store) refresh(ctx context.Context) error {
	v, err := s.b.version(ctx)
	if err != nil {
		return err
	}
	if v == s.cur.Load().version {
		return nil
	}
	return s.reload(ctx)
}

// clear makes the store hold no tokens until the next successful read: a
// store that became unreadable or invalid accepts nothing.
func (s *Store) clear() {
	s.cur.Store(&snapshot{set: newTokenSet(nil), version: ""})
}

// lookup returns the token whose secret has SHA-256 hash.
func (s *Store) lookup(hash [sha256.Size]byte) (Token, bool) {
	t, ok := s.cur.Load().set.byHash[hash]
	return t, ok
}

// empty reports whether the store held no token when last read.
func (s *Store) empty() bool { return len(s.cur.Load().set.entries) == 0 }

// duplicate is the USAGE error of a name that is taken.
func duplicate(name, where string) error {
	return sdk.Errorf(sdk.CodeUsage, op, "a token named %s exists in %s; revoke it first or choose another name", strconv.Quote(name), where)
}

// unknown is the USAGE error of a name that is not stored.
func unknown(name, where string) error {
	return sdk.Errorf(sdk.CodeUsage, op, "no token named %s in %s; 'logbook token list' shows the names", strconv.Quote(name), where)
}
