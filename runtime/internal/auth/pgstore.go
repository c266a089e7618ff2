package auth

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
)

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

// pgBackend keeps the tokens in the postgres primary's schema.
type pgBackend struct {
	pool   *pgxpool.Pool
	schema string
	dsn    string // for redacting its password from errors
}

// openPGBackend connects to the database of the postgres persistence
// block's config (postgres.ParseConfig) and creates the token tables in
// its schema when they are missing. A schema that does not exist yet is
// first created as the postgres backend creates it, so that the backend
// later finds a logbook schema.
func openPGBackend(ctx context.Context, raw json.RawMessage) (*pgBackend, error) {
	cfg, err := postgres.ParseConfig(raw)
	if err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil { // ParseConfig checked it
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, op, "the postgres dsn does not parse")
	}
	pc.MaxConns, pc.MinConns = 2, 0
	b := &pgBackend{schema: cfg.Schema, dsn: cfg.DSN}
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
func (b *pgBackend) q() string { return pgx.Identifier{b.schema}.Sanitize() }

func (b *pgBackend) where() string { return "table " + b.q() + ".auth_tokens" }

func (b *pgBackend) close() error {
	b.pool.Close()
	return nil
}

// ensure creates the schema (through the postgres backend) and the token
// tables when they are missing, under a transaction advisory lock so that
// processes starting together create them once.
func (b *pgBackend) ensure(ctx context.Context, cfg postgres.Config) error {
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

// version is the change counter.
func (b *pgBackend) version(ctx context.Context) (string, error) {
	var n int64
	if err := b.pool.QueryRow(ctx, "SELECT changes FROM "+b.q()+".auth_tokens_state").Scan(&n); err != nil {
		return "", b.dbErr("reading the token change counter", err)
	}
	return strconv.FormatInt(n, 10), nil
}

// load reads the counter and the rows in one snapshot.
func (b *pgBackend) load(ctx context.Context) (*tokenSet, string, error) {
	var set *tokenSet
	var n int64
	err := pgx.BeginTxFunc(ctx, b.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, "SELECT changes FROM "+b.q()+".auth_tokens_state").Scan(&n); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT name, sha256, tenant, role, created_at FROM "+b.q()+".auth_tokens")
		if err != nil {
			return err
		}
		var entries []entry
		for rows.Next() {
			var ft fileToken
			var hash []byte
			var created time.Time
			if err := rows.Scan(&ft.Name, &hash, &ft.Tenant, &ft.Role, &created); err != nil {
				return err
			}
			ft.SHA256, ft.Created = hex.EncodeToString(hash), created.UTC().Format(time.RFC3339Nano)
			e, err := ft.entry()
			if err != nil {
				return sdk.Errorf(sdk.CodeConfigInvalid, op, "%s: row %s: %s", b.where(), strconv.Quote(ft.Name), detail(err))
			}
			entries = append(entries, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		set = newTokenSet(entries)
		return nil
	})
	if err != nil {
		return nil, "", b.dbErr("reading the tokens", err)
	}
	return set, strconv.FormatInt(n, 10), nil
}

func (b *pgBackend) create(ctx context.Context, e entry) error {
	return b.tx(ctx, "storing the token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "INSERT INTO "+b.q()+".auth_tokens(name, sha256, tenant, role, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING",
			e.Name, e.hash[:], e.Tenant, e.Role.String(), e.Created)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return duplicate(e.Name, b.where())
		}
		return b.bump(ctx, tx)
	})
}

func (b *pgBackend) revoke(ctx context.Context, name string) error {
	return b.tx(ctx, "revoking the token", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, "DELETE FROM "+b.q()+".auth_tokens WHERE name = $1", name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return unknown(name, b.where())
		}
		return b.bump(ctx, tx)
	})
}

// bump counts a change, in the transaction that makes it.
func (b *pgBackend) bump(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, "UPDATE "+b.q()+".auth_tokens_state SET changes = changes + 1")
	return err
}

// tx runs fn in a transaction; a database error is IO_ERROR saying what
// was being done.
func (b *pgBackend) tx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	if err := pgx.BeginFunc(ctx, b.pool, fn); err != nil {
		return b.dbErr(what, err)
	}
	return nil
}

// dbErr reports a database error as IO_ERROR, with the DSN's password
// removed from its text; an *sdk.Error passes unchanged.
func (b *pgBackend) dbErr(what string, err error) error {
	var e *sdk.Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	if pc, perr := pgxpool.ParseConfig(b.dsn); perr == nil && pc.ConnConfig.Password != "" {
		msg = strings.ReplaceAll(msg, pc.ConnConfig.Password, "********")
	}
	return sdk.Errorf(sdk.CodeIOError, op, "%s: %s in schema %s: %s", b.where(), what, strconv.Quote(b.schema), msg)
}
