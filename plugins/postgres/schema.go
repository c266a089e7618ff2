package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
)

// migrations are the schema's versions: migrations[i] takes a schema at
// version i to version i+1. Version len(migrations) is current. A
// migration is appended, never edited, once it has shipped; each runs in
// the transaction that records its version. %s is the quoted schema name.
var migrations = []string{
	// 1: sessions, events, torn rows.
	`CREATE TABLE %s.sessions(
		id            text PRIMARY KEY,
		header        text NOT NULL,
		created_at    bigint NOT NULL,
		next_seq      bigint NOT NULL CHECK (next_seq >= 0),
		incarnation   text NOT NULL,
		revision      bigint NOT NULL,
		size_bytes    bigint NOT NULL,
		owner_epoch   bigint NOT NULL,
		owner_host    text NOT NULL,
		last_activity timestamptz NOT NULL);
	CREATE TABLE %s.events(
		session_id text NOT NULL REFERENCES %s.sessions(id) ON DELETE CASCADE,
		seq        bigint NOT NULL,
		zstd       boolean NOT NULL,
		envelope   bytea NOT NULL,
		PRIMARY KEY (session_id, seq));
	CREATE TABLE %s.torn_rows(
		cut_id     bigint GENERATED ALWAYS AS IDENTITY,
		session_id text NOT NULL,
		cut_at     timestamptz NOT NULL,
		lines      bytea NOT NULL,
		PRIMARY KEY (cut_id));`,
	// 2: checkpoints, bound to the stored rows they cover.
	`CREATE TABLE %s.checkpoints(
		session_id  text PRIMARY KEY REFERENCES %s.sessions(id) ON DELETE CASCADE,
		incarnation text NOT NULL,
		events      bigint NOT NULL,
		digest      bytea NOT NULL,
		data        bytea NOT NULL);`,
	// 3: the audit log and legal holds (docs/storage.md, "Deleting sessions").
	`CREATE TABLE %s.audit(
		seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		at         timestamptz NOT NULL,
		op         text NOT NULL,
		session_id text NOT NULL,
		events     bigint NOT NULL,
		digest     text NOT NULL,
		reason     text NOT NULL,
		actor      text NOT NULL);
	CREATE TABLE %s.holds(
		session_id text PRIMARY KEY REFERENCES %s.sessions(id) ON DELETE CASCADE);`,
	// 4: tenants (docs/storage.md, "Tenants"): a tenant column, '' for the
	// implicit tenant (every existing row), on every table keyed by
	// session, first in the keys; torn_rows and audit rows carry it.
	// The foreign keys go first, as they depend on the primary key of
	// sessions, and come back over (tenant, session_id).
	`ALTER TABLE %s.events DROP CONSTRAINT events_session_id_fkey;
	ALTER TABLE %s.checkpoints DROP CONSTRAINT checkpoints_session_id_fkey;
	ALTER TABLE %s.holds DROP CONSTRAINT holds_session_id_fkey;
	ALTER TABLE %s.sessions ADD COLUMN tenant text NOT NULL DEFAULT '',
		DROP CONSTRAINT sessions_pkey, ADD PRIMARY KEY (tenant, id);
	ALTER TABLE %s.events ADD COLUMN tenant text NOT NULL DEFAULT '',
		DROP CONSTRAINT events_pkey, ADD PRIMARY KEY (tenant, session_id, seq),
		ADD FOREIGN KEY (tenant, session_id) REFERENCES %s.sessions(tenant, id) ON DELETE CASCADE;
	ALTER TABLE %s.checkpoints ADD COLUMN tenant text NOT NULL DEFAULT '',
		DROP CONSTRAINT checkpoints_pkey, ADD PRIMARY KEY (tenant, session_id),
		ADD FOREIGN KEY (tenant, session_id) REFERENCES %s.sessions(tenant, id) ON DELETE CASCADE;
	ALTER TABLE %s.holds ADD COLUMN tenant text NOT NULL DEFAULT '',
		DROP CONSTRAINT holds_pkey, ADD PRIMARY KEY (tenant, session_id),
		ADD FOREIGN KEY (tenant, session_id) REFERENCES %s.sessions(tenant, id) ON DELETE CASCADE;
	ALTER TABLE %s.torn_rows ADD COLUMN tenant text NOT NULL DEFAULT '';
	ALTER TABLE %s.audit ADD COLUMN tenant text NOT NULL DEFAULT '';`,
}

// SchemaVersion is the version of the schema this build creates and
// writes.
var SchemaVersion = len(migrations)

// ensureSchema brings schema s.schema to SchemaVersion inside one
// transaction, under a transaction advisory lock on the schema's name, so
// that hosts starting together migrate it once: a missing schema or one
// without tables is created, an older version migrated; a newer version,
// or tables that are not logbook's, is SCHEMA_MISMATCH and nothing
// changes. It returns the store id.
func (s *store) ensureSchema(ctx context.Context) (string, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", s.dbErr(ctx, "", "starting the schema check", err)
	}
	defer tx.Rollback(context.Background())
	fail := func(err error) (string, error) { return "", s.dbErr(ctx, "", "checking the schema", err) }
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockKey(s.schema, "\x00schema")); err != nil {
		return fail(err)
	}
	var hasVersion bool
	var tables int
	err = tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, (SELECT count(*) FROM pg_tables WHERE schemaname = $2)`,
		s.q()+".schema_version", s.schema).Scan(&hasVersion, &tables)
	if err != nil {
		return fail(err)
	}
	version, storeID := 0, ""
	switch {
	case hasVersion:
		if err := tx.QueryRow(ctx, "SELECT version, store_id FROM "+s.q()+".schema_version").Scan(&version, &storeID); err != nil {
			if err == pgx.ErrNoRows {
				return "", schemaMismatch(s.schema, "schema_version has no row")
			}
			return fail(err)
		}
	case tables > 0:
		return "", schemaMismatch(s.schema, strconv.Itoa(tables)+" tables but no schema_version table: it is not a logbook schema; choose another schema")
	default:
		storeID = uuid.NewString()
		ddl := "CREATE SCHEMA IF NOT EXISTS " + s.q() + ";" +
			"CREATE TABLE " + s.q() + ".schema_version(singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version integer NOT NULL, store_id text NOT NULL);"
		if _, err := tx.Exec(ctx, ddl); err != nil {
			return fail(err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+s.q()+".schema_version(version, store_id) VALUES (0, $1)", storeID); err != nil {
			return fail(err)
		}
	}
	if version > SchemaVersion || version < 0 || storeID == "" {
		return "", schemaMismatch(s.schema, "schema_version is "+strconv.Itoa(version)+"; this build knows versions up to "+strconv.Itoa(SchemaVersion)+"; upgrade logbook to use this database")
	}
	for v := version; v < SchemaVersion; v++ {
		if _, err := tx.Exec(ctx, strings.ReplaceAll(migrations[v], "%s", s.q())); err != nil {
			return fail(err)
		}
	}
	if version < SchemaVersion {
		if _, err := tx.Exec(ctx, "UPDATE "+s.q()+".schema_version SET version = $1", SchemaVersion); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fail(err)
	}
	return storeID, nil
}

func schemaMismatch(schema, found string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSchemaMismatch, op, "schema %s: %s", strconv.Quote(schema), found)
}

// lockKey is the 64-bit advisory lock key of session id in schema: the
// first 8 bytes of SHA-256 over both, so the key is the same in every
// process and every build.
func lockKey(schema, id string) int64 {
	sum := sha256.Sum256([]byte("logbook\x00" + schema + "\x00" + id))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}
