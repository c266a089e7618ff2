package auth

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// TokenRow is one stored token as a table of a database keeps it.
type TokenRow struct {
	Name, Tenant, Role string
	// SHA256 is the SHA-256 of the secret, 32 bytes.
	SHA256  []byte
	Created time.Time
}

// TokenTable keeps the tokens in a database that several hosts share: the
// token store of a primary persistence that is a database server. A
// package registers one for its plugin with RegisterTokenTable, so that a
// program links the database driver only when it imports that package.
// Its methods may be called from several goroutines and processes at once.
type TokenTable interface {
	// Version identifies the stored rows cheaply: it changes whenever they
	// do (a change counter bumped in the transaction of every change).
	Version(ctx context.Context) (string, error)
	// Rows reads every row and the version they had, in one snapshot.
	Rows(ctx context.Context) ([]TokenRow, string, error)
	// Insert stores r unless a row of its name exists; inserted is false
	// then.
	Insert(ctx context.Context, r TokenRow) (inserted bool, err error)
	// Delete removes the row called name; deleted is false when there was
	// none.
	Delete(ctx context.Context, name string) (deleted bool, err error)
	// Where names the table in messages, never with a password.
	Where() string
	// Close releases the connections.
	Close() error
}

// OpenTokenTable opens the token table of a primary persistence plugin
// from its configuration (the persistence block's config as JSON).
type OpenTokenTable func(ctx context.Context, pluginConfig json.RawMessage) (TokenTable, error)

var (
	tablesMu sync.Mutex
	tables   = map[string]OpenTokenTable{}
)

// RegisterTokenTable makes the token store of every configuration whose
// primary persistence plugin is named plugin (and that sets no
// auth.tokens_file) a table that open opens. It is called from an init
// function; registering a plugin twice panics.
func RegisterTokenTable(plugin string, open OpenTokenTable) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if _, dup := tables[plugin]; dup {
		panic("auth: a token table is registered twice for plugin " + strconv.Quote(plugin))
	}
	tables[plugin] = open
}

// tokenTable returns the opener registered for plugin.
func tokenTable(plugin string) (OpenTokenTable, bool) {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	open, ok := tables[plugin]
	return open, ok
}

// tableBackend is a backend over a TokenTable.
type tableBackend struct{ t TokenTable }

func (b tableBackend) version(ctx context.Context) (string, error) { return b.t.Version(ctx) }

func (b tableBackend) load(ctx context.Context) (*tokenSet, string, error) {
	rows, v, err := b.t.Rows(ctx)
	if err != nil {
		return nil, "", err
	}
	entries := make([]entry, 0, len(rows))
	for _, r := range rows {
		ft := fileToken{Name: r.Name, Tenant: r.Tenant, Role: r.Role, SHA256: hex.EncodeToString(r.SHA256), Created: r.Created.UTC().Format(time.RFC3339Nano)}
		e, err := ft.entry()
		if err != nil {
			return nil, "", sdk.Errorf(sdk.CodeConfigInvalid, op, "%s: row %s: %s", b.t.Where(), strconv.Quote(r.Name), detail(err))
		}
		entries = append(entries, e)
	}
	return newTokenSet(entries), v, nil
}

func (b tableBackend) create(ctx context.Context, e entry) error {
	ok, err := b.t.Insert(ctx, TokenRow{Name: e.Name, Tenant: e.Tenant, Role: e.Role.String(), SHA256: e.hash[:], Created: e.Created})
	if err == nil && !ok {
		return duplicate(e.Name, b.t.Where())
	}
	return err
}

func (b tableBackend) revoke(ctx context.Context, name string) error {
	ok, err := b.t.Delete(ctx, name)
	if err == nil && !ok {
		return unknown(name, b.t.Where())
	}
	return err
}

func (b tableBackend) where() string { return b.t.Where() }

func (b tableBackend) close() error { return b.t.Close() }
