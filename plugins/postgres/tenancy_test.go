package postgres_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore/sqlstoretest"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestTenantScoping: every call of a tenant's view reads and writes that
// tenant's rows only (sqlstoretest.Scoping).
func TestTenantScoping(t *testing.T) {
	dsn := pgtest.DSN(t)
	schemas := map[*testing.T]string{}
	sqlstoretest.Scoping(t, func(t *testing.T) sqlstoretest.Backend {
		cfg := postgres.DefaultConfig(dsn)
		cfg.Schema = pgtest.Schema(t, dsn)
		schemas[t] = cfg.Schema
		return openBackend(t, cfg)
	}, func(t *testing.T, tenant, id string, header []byte) {
		pgtest.Exec(t, dsn, "UPDATE "+schemas[t]+".sessions SET header = $1 WHERE tenant = $2 AND id = $3", string(header), tenant, id)
	})
}

// legacySchema makes a schema at version v (1 … 3) holding what that
// version's build stored: s1 with 2 events and a torn_rows row, s2 with 1
// event, and (v = 3) a legal hold on s2 and its audit record.
func legacySchema(t *testing.T, dsn string, v int) string {
	t.Helper()
	schema := pgtest.Schema(t, dsn)
	pgtest.Exec(t, dsn, postgres.LegacySchema(schema, "store-"+strconv.Itoa(v), v))
	for id, n := range map[string]int{"s1": 2, "s2": 1} {
		hdr := headerjson.Encode(sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: 1})
		pgtest.Exec(t, dsn, "INSERT INTO "+schema+".sessions(id, header, created_at, next_seq, incarnation, revision, size_bytes, owner_epoch, owner_host, last_activity) "+
			"VALUES ($1, $2, 1, $3, 'inc-'||$1, 1, 0, 1, 'old-host', now())", id, string(hdr), n)
		for i, ev := range persistencetest.Batch(0, n) {
			pgtest.Exec(t, dsn, "INSERT INTO "+schema+".events(session_id, seq, zstd, envelope) VALUES ($1, $2, false, $3)", id, i, ev)
		}
	}
	pgtest.Exec(t, dsn, "INSERT INTO "+schema+".torn_rows(session_id, cut_at, lines) VALUES ('s1', now(), 'x')")
	if v >= 3 {
		pgtest.Exec(t, dsn, "INSERT INTO "+schema+".holds(session_id) VALUES ('s2')")
		pgtest.Exec(t, dsn, "INSERT INTO "+schema+".audit(at, op, session_id, events, digest, reason, actor) VALUES (now(), 'hold', 's2', 1, 'd', 'legal', 'cli')")
	}
	return schema
}

func count(t *testing.T, dsn, query string) int {
	t.Helper()
	var n int
	if err := pgtest.Conn(t, dsn).QueryRow(t.Context(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestOlderSchemaIsMigrated: a schema at version 1, 2 or 3 is brought to
// the current version when a backend opens it, in one transaction: every
// row lands in the implicit tenant, intact (events, torn rows, holds,
// the audit log), checkpoints and holds work, and ids are unique per
// tenant (a named tenant may store an id the implicit tenant has).
func TestOlderSchemaIsMigrated(t *testing.T) {
	dsn := pgtest.DSN(t)
	for v := 1; v < postgres.SchemaVersion; v++ {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			schema := legacySchema(t, dsn, v)
			cfg := postgres.DefaultConfig(dsn)
			cfg.Schema = schema
			b := openBackend(t, cfg)
			if got := count(t, dsn, "SELECT version FROM "+schema+".schema_version"); got != postgres.SchemaVersion {
				t.Fatalf("schema_version after the migration: %d; want %d", got, postgres.SchemaVersion)
			}
			for table, want := range map[string]int{"sessions": 2, "events": 3, "torn_rows": 1} {
				if n := count(t, dsn, "SELECT count(*) FROM "+schema+"."+table+" WHERE tenant = ''"); n != want {
					t.Fatalf("%d %s rows of the implicit tenant after the migration; want %d", n, table, want)
				}
			}
			for id, n := range map[string]int{"s1": 2, "s2": 1} {
				if got := readAll(t, b, id); len(got) != n {
					t.Fatalf("%s reads %d events after the migration; want %d", id, len(got), n)
				}
			}
			if v >= 3 {
				if held, err := b.Held(t.Context(), "s2"); err != nil || !held {
					t.Fatalf("Held(s2) after the migration = %t, %v; want the hold kept", held, err)
				}
				var ops []sdk.AuditOp
				must(t, b.Audit(t.Context(), func(r sdk.AuditRecord) error { ops = append(ops, r.Op); return nil }))
				if len(ops) != 1 || ops[0] != sdk.AuditHold {
					t.Fatalf("audit log after the migration = %v; want the hold", ops)
				}
			}
			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			must(t, err)
			if err := b.WriteCheckpoint(t.Context(), w.Handle, 2, []byte("x")); err != nil {
				t.Fatalf("a checkpoint after the migration: %v", err)
			}
			if _, changed, err := b.SetHold(t.Context(), "s1", true, sdk.AuditRequest{By: sdk.ByCLI}); err != nil || !changed {
				t.Fatalf("a hold after the migration: %t, %v", changed, err)
			}
			a, err := b.Tenant("a")
			must(t, err)
			o, err := a.Create(t.Context(), sdk.Header{ID: "s1", Tenant: "a", CreatedAt: 1})
			must(t, err)
			appendEvents(t, a, o.Handle, 0, 1)
			if got := readAll(t, b, "s1"); len(got) != 2 {
				t.Fatalf("the implicit tenant's s1 reads %d events after tenant a stored its s1; want 2", len(got))
			}
		})
	}
}

// TestSchemaMigrationThatFailsChangesNothing: the migration runs in one
// transaction, so a step that fails (here: audit already has a tenant
// column) leaves the schema at its version, every earlier step undone.
func TestSchemaMigrationThatFailsChangesNothing(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := legacySchema(t, dsn, 3)
	pgtest.Exec(t, dsn, "ALTER TABLE "+schema+".audit ADD COLUMN tenant integer")
	cfg := postgres.DefaultConfig(dsn)
	cfg.Schema = schema
	if _, err := postgres.Open(t.Context(), cfg); err == nil {
		t.Fatal("Open of a schema whose migration fails succeeded")
	}
	if got := count(t, dsn, "SELECT version FROM "+schema+".schema_version"); got != 3 {
		t.Fatalf("schema_version after the failed migration: %d; want 3", got)
	}
	if n := count(t, dsn, "SELECT count(*) FROM information_schema.columns WHERE table_schema = '"+schema+"' AND table_name = 'sessions' AND column_name = 'tenant'"); n != 0 {
		t.Fatal("sessions has a tenant column after the failed migration")
	}
	if n := count(t, dsn, "SELECT count(*) FROM "+schema+".events"); n != 3 {
		t.Fatalf("%d events rows after the failed migration; want 3", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// hosts returns two Backends over one new schema, as two hosts are, and
// each one's view of tenant a.
func hosts(t *testing.T) (h1, h2 *postgres.Backend, a1, a2 sdk.Persistence) {
	t.Helper()
	dsn := pgtest.DSN(t)
	cfg := postgres.DefaultConfig(dsn)
	cfg.Schema = pgtest.Schema(t, dsn)
	cfg.HostName = "h1"
	h1 = openBackend(t, cfg)
	cfg.HostName = "h2"
	h2 = openBackend(t, cfg)
	var err error
	a1, err = h1.Tenant("a")
	must(t, err)
	a2, err = h2.Tenant("a")
	must(t, err)
	return h1, h2, a1, a2
}

// Ownership is per tenant and id across hosts: while host 1 writes a/s1,
// host 2 may write the implicit tenant's s1 but not a/s1
// (ALREADY_OWNED naming host 1).
func TestOwnershipIsPerTenantAcrossHosts(t *testing.T) {
	h1, h2, a1, a2 := hosts(t)
	for _, c := range []struct {
		p      sdk.Persistence
		tenant string
	}{{h1, ""}, {a1, "a"}} {
		o, err := c.p.Create(t.Context(), sdk.Header{ID: "s1", Tenant: c.tenant, CreatedAt: 1})
		must(t, err)
		appendEvents(t, c.p, o.Handle, 0, 1)
		must(t, c.p.Close(t.Context(), o.Handle))
	}
	w, err := a1.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	defer a1.Close(t.Context(), w.Handle)
	o, err := h2.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatalf("host 2's write open of the implicit tenant's s1 while host 1 writes a/s1: %v", err)
	}
	appendEvents(t, h2, o.Handle, 1, 1)
	must(t, h2.Close(t.Context(), o.Handle))
	_, err = a2.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, `"h1"`)
	appendEvents(t, a1, w.Handle, 1, 1) // host 1's claim on a/s1 held throughout
}

// A watch of a/s1 on one host wakes for a/s1 appended on another host,
// never for the implicit tenant's s1 (the notification carries the tenant).
func TestWatchAcrossHostsIsPerTenant(t *testing.T) {
	h1, _, a1, a2 := hosts(t)
	handles := map[string]string{}
	for _, c := range []struct {
		p      sdk.Persistence
		tenant string
	}{{h1, ""}, {a1, "a"}} {
		o, err := c.p.Create(t.Context(), sdk.Header{ID: "s1", Tenant: c.tenant, CreatedAt: 1})
		must(t, err)
		appendEvents(t, c.p, o.Handle, 0, 1)
		handles[c.tenant] = o.Handle
		defer c.p.Close(t.Context(), o.Handle)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got := make(chan sdk.Offset, 4)
	done := make(chan error, 1)
	go func() {
		done <- a2.(sdk.Watcher).Watch(ctx, "s1", 2, func(n sdk.Offset) error { got <- n; return nil })
	}()
	appendEvents(t, h1, handles[""], 1, 3)
	select {
	case n := <-got:
		t.Fatalf("host 2's watch of a/s1 reported %d after the implicit tenant's s1 grew on host 1", n)
	case err := <-done:
		t.Fatalf("the watch ended: %v", err)
	case <-time.After(time.Second):
	}
	appendEvents(t, a1, handles["a"], 1, 1)
	select {
	case n := <-got:
		if n != 2 {
			t.Fatalf("host 2's watch of a/s1 reported %d; want 2", n)
		}
	case err := <-done:
		t.Fatalf("the watch ended: %v", err)
	case <-ctx.Done():
		t.Fatal("host 2's watch of a/s1 never reported host 1's append")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the watch ended with %v; want context.Canceled", err)
	}
}
