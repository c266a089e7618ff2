// Package pgtokens keeps the scoped tokens of logbook serve in the
// schema of a postgres primary persistence, so that every host serving it
// sees one set of tokens and their revocation within a second: two tables,
// auth_tokens (the SHA-256 of each secret, never the secret) and
// auth_tokens_state (a change counter the verifiers poll), created on
// first use. It registers itself with the host for the plugin "postgres"
// when imported:
//
//	import _ "github.com/seed-e5e476df/logbook/runtime/service/pgtokens"
//
// The logbook binary imports it. A program that embeds logbook with
// another primary need not, and links no PostgreSQL driver for its tokens.
package pgtokens

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/sdk"
)

func init() {
	auth.RegisterTokenTable("postgres", func(ctx context.Context, raw json.RawMessage) (auth.TokenTable, error) {
		return open(ctx, raw)
	})
}

// op names the operation in errors.
const op = "auth"

// pgTables creates the token tables in a schema (%s, quoted) when they are
// missing: the tokens, and a counter every change bumps in the same
// transaction, which verifiers poll.
const pgTables = `CREATE TABLE IF NOT EXISTS %s.auth_tokens(
		name       text PRIMARY KEY,
		sha256     bytea NOT NULL UNIQUE,
		tenant     text NOT NULL,
		role       text NOT NULL,
		created_at timestamptz NOT NULL);
	CREATE TABLE IF NOT EXISTS %s.auth_tokens_state(
		singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
		changes   bigint NOT NULL);
	INSERT INTO %s.auth_tokens_state(changes) VALUES (0) ON CONFLICT DO NOTHING;`

// table keeps the tokens in the postgres primary's schema.
type table struct {
	pool   *pgxpool.Pool
	schema string
	dsn    string // for redacting its password from errors
}

// open connects to the database of the postgres persistence block's
// config (postgres.ParseConfig) and creates the token tables in its schema
// when they are missing. A schema that does not exist yet is first created
// as the postgres backend creates it, so that the backend later finds a
// logbook schema.
func open(ctx context.Context, raw json.RawMessage) (*table, error) {
	cfg, err := postgres.ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil { // ParseConfig checked it
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, op, "the postgres dsn does not parse")
	}
	pc.MaxConns, pc.MinConns = 2, 0
	b := &table{schema: cfg.Schema, dsn: cfg.DSN}
	if b.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
		return nil, b.dbErr("connecting to the database", err)
	}
	if err := b.ensure(ctx, cfg); err != nil {
		b.pool.Close()
		return nil, err
	}
	return b, nil
}

// q is the quoted schema name.
func (b *table) q() string { return pgx.Identifier{b.schema}.Sanitize() }

// Where names the table.
func (b *table) Where() string { return "table " + b.q() + ".auth_tokens" }

// Close closes the pool.
func (b *table) Close() error {
	b.pool.Close()
	return nil
}

// ensure creates the schema (through the postgres backend) and the token
// tables when they are missing, under a transaction advisory lock so that
// processes starting together create them once.
func (b *table) ensure(ctx context.Context, cfg postgres.Config) error {
	var logbookSchema bool
	if err := b.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", b.q()+".schema_version").Scan(&logbookSchema); err != nil {
		return b.dbErr("checking the schema", err)
	}
	if !logbookSchema {
		pb, err := postgres.Open(ctx, cfg)
		if err != nil {
			return err
		}
		pb.Shutdown()
	}
	return b.tx(ctx, "creating the token tables", func(tx pgx.Tx) error {
		sum := sha256.Sum256([]byte("logbook\x00" + b.schema + "\x00auth_tokens"))
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(binary.BigEndian.Uint64(sum[:8]))); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, strings.ReplaceAll(pgTables, "%s", b.q()))
		return err
	})
}

// Version is the change counter.
func (b *table) Version(ctx context.Context) (string, error) {
	var n int64
	if err := b.pool.QueryRow(ctx, "SELECT changes FROM "+b.q()+".auth_tokens_state").Scan(&n); err != nil {
		return "", b.dbErr("reading the token change counter", err)
	}
	return strconv.FormatInt(n, 10), nil
}

// Rows reads the counter and the rows in one snapshot.
func (b *table) Rows(ctx context.Context) ([]auth.TokenRow, string, error) {
	var out []auth.TokenRow
	var n int64
	err := pgx.BeginTxFunc(ctx, b.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT changes FROM "+b.q()+".auth_tokens_state").Scan(&n); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT name, sha256, tenant, role, created_at FROM "+b.q()+".auth_tokens")
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (auth.TokenRow, error) {
			var r auth.TokenRow
			err := row.Scan(&r.Name, &r.SHA256, &r.Tenant, &r.Role, &r.Created)
			return r, err
		})
		return err
	})
	if err != nil {
		return nil, "", b.dbErr("reading the tokens", err)
	}
	return out, strconv.FormatInt(n, 10), nil
}

// Insert stores r and bumps the counter, unless a row of r's name exists.
func (b *table) Insert(ctx context.Context, r auth.TokenRow) (bool, error) {
	inserted := false
	err := b.tx(ctx, "storing the token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO "+b.q()+".auth_tokens(name, sha256, tenant, role, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING",
			r.Name, r.SHA256, r.Tenant, r.Role, r.Created)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		inserted = true
		return b.bump(ctx, tx)
	})
	return inserted, err
}

// Delete removes the row called name and bumps the counter, if there is
// one.
func (b *table) Delete(ctx context.Context, name string) (bool, error) {
	deleted := false
	err := b.tx(ctx, "revoking the token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM "+b.q()+".auth_tokens WHERE name = $1", name)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		deleted = true
		return b.bump(ctx, tx)
	})
	return deleted, err
}

// bump counts a change, in the transaction that makes it.
func (b *table) bump(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "UPDATE "+b.q()+".auth_tokens_state SET changes = changes + 1")
	return err
}

// tx runs fn in a transaction; a database error is IO_ERROR saying what
// was being done.
func (b *table) tx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	if err := pgx.BeginFunc(ctx, b.pool, fn); err != nil {
		return b.dbErr(what, err)
	}
	return nil
}

// dbErr reports a database error as IO_ERROR, with the DSN's password
// removed from its text; an *sdk.Error passes unchanged.
func (b *table) dbErr(what string, err error) error {
	var e *sdk.Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	if pc, perr := pgxpool.ParseConfig(b.dsn); perr == nil && pc.ConnConfig.Password != "" {
		msg = strings.ReplaceAll(msg, pc.ConnConfig.Password, "********")
	}
	return sdk.Errorf(sdk.CodeIOError, op, "%s: %s in schema %s: %s", b.Where(), what, strconv.Quote(b.schema), msg)
}
