package sqlite_test

import (
	"bytes"
	"database/sql"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// legacyDatabase is a database of schema version v (1 … 3) as the build
// of that version left it: s1 with 2 events, s2 with 1 event under a
// legal hold, and (v ≥ 2) the audit records of the hold and of deleting
// s3. It is made at the current version and rebuilt table by table with
// the legacy DDL, every row copied without its tenant; it returns the
// path and the audit log the current build read before the rebuild.
func legacyDatabase(t *testing.T, v int64) (string, []sdk.AuditRecord) {
	t.Helper()
	path := dbPath(t)
	b, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
	must(t, err)
	for id, n := range map[string]int{"s1": 2, "s2": 1, "s3": 1} {
		o, err := b.Create(t.Context(), header(id))
		must(t, err)
		appendOK(t, b, o.Handle, persistencetest.Batch(0, n))
		must(t, b.Close(t.Context(), o.Handle))
	}
	_, _, err = b.SetHold(t.Context(), "s2", true, sdk.AuditRequest{By: sdk.ByCLI, Reason: "legal"})
	must(t, err)
	_, err = b.Delete(t.Context(), "s3", sdk.AuditRequest{By: sdk.ByCLI, Reason: "gone"})
	must(t, err)
	audit := auditOf(t, b)
	must(t, b.Shutdown())

	db := rawDB(t, path)
	tx, err := db.Begin()
	must(t, err)
	exec := func(q string) {
		t.Helper()
		if _, err := tx.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tables := []string{"sessions", "events", "audit", "holds"}
	for _, name := range tables {
		exec("ALTER TABLE " + name + " RENAME TO " + name + "_current")
	}
	for _, ddl := range sqlite.LegacyDDL(v) {
		if strings.HasPrefix(ddl, "CREATE TABLE store_state") {
			continue
		}
		exec(ddl)
	}
	for _, name := range tables {
		var cols string
		err := tx.QueryRow("SELECT group_concat(name, ', ') FROM pragma_table_info(?)", name).Scan(&cols)
		if err == sql.ErrNoRows || cols == "" {
			continue // a table version v does not have
		}
		must(t, err)
		exec("INSERT INTO " + name + "(" + cols + ") SELECT " + cols + " FROM " + name + "_current")
	}
	for _, name := range []string{"holds", "events", "audit", "sessions"} {
		exec("DROP TABLE " + name + "_current")
	}
	exec("PRAGMA user_version = " + strconv.FormatInt(v, 10))
	must(t, tx.Commit())
	if v < 2 {
		audit = nil
	}
	return path, audit
}

func auditOf(t *testing.T, p sdk.Persistence) []sdk.AuditRecord {
	t.Helper()
	var recs []sdk.AuditRecord
	must(t, p.(sdk.Deleter).Audit(t.Context(), func(r sdk.AuditRecord) error {
		recs = append(recs, r)
		return nil
	}))
	return recs
}

// A database of schema version 1, 2 or 3 (no tenant column) is migrated
// on open to version 4 in one transaction: every row lands in the
// implicit tenant, intact (events, holds, the audit log), the database
// then matches the reference schema (a second open accepts it), ids are
// unique per tenant (a named tenant may store an id the implicit tenant
// has), and an event with an operation member round-trips byte-exact.
func TestOlderDatabaseIsMigratedOnOpen(t *testing.T) {
	for v := int64(1); v <= 3; v++ {
		t.Run("v"+strconv.FormatInt(v, 10), func(t *testing.T) {
			path, audit := legacyDatabase(t, v)
			b := openBackend(t, sqlite.DefaultConfig(path))
			if got := queryInt(t, path, "PRAGMA user_version"); got != sqlite.UserVersion {
				t.Fatalf("user_version after the migration = %d; want %d", got, sqlite.UserVersion)
			}
			if n := queryInt(t, path, "SELECT count(*) FROM sessions WHERE tenant = ''"); n != 2 {
				t.Fatalf("%d sessions rows of the implicit tenant after the migration; want 2", n)
			}
			if n := queryInt(t, path, "SELECT count(*) FROM events WHERE tenant = ''"); n != 3 {
				t.Fatalf("%d events rows of the implicit tenant after the migration; want 3", n)
			}
			for id, n := range map[string]int{"s1": 2, "s2": 1} {
				st, err := b.Stat(t.Context(), id)
				if err != nil || st.EventCount != int64(n) {
					t.Fatalf("Stat(%s) of the migrated session = %+v, %v; want %d events", id, st, err, n)
				}
				r, err := b.Open(t.Context(), id, sdk.AccessRead)
				must(t, err)
				requireRead(t, "migrated "+id, b, r.Handle, persistencetest.Batch(0, n))
				must(t, b.Close(t.Context(), r.Handle))
			}
			if got := auditOf(t, b); len(got) != len(audit) || (len(audit) > 0 && got[len(got)-1] != audit[len(audit)-1]) {
				t.Fatalf("audit log after the migration = %+v; want %+v", got, audit)
			}
			if v >= 2 {
				if held, err := b.Held(t.Context(), "s2"); err != nil || !held {
					t.Fatalf("Held(s2) after the migration = %t, %v; want the hold kept", held, err)
				}
			}
			if _, changed, err := b.SetHold(t.Context(), "s1", true, sdk.AuditRequest{By: sdk.ByCLI}); err != nil || !changed {
				t.Fatalf("SetHold on the migrated database = %t, %v", changed, err)
			}

			a, err := b.Tenant("a")
			must(t, err)
			h := header("s1")
			h.Tenant = "a"
			o, err := a.Create(t.Context(), h)
			must(t, err)
			appendOK(t, a, o.Handle, persistencetest.Batch(0, 1))
			must(t, a.Close(t.Context(), o.Handle))
			if st, err := b.Stat(t.Context(), "s1"); err != nil || st.EventCount != 2 {
				t.Fatalf("Stat(s1) of the implicit tenant after tenant a stored s1 = %+v, %v; want its 2 events", st, err)
			}

			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			must(t, err)
			ev := []byte(`{"seq":2,"time":3,"type":"x-test/note","data":{},"ignorable":true,"operation":{"id":"op \"1\"","count":1}}`)
			appendOK(t, b, w.Handle, [][]byte{ev})
			if got := persistencetest.ReadAll(t, b, w.Handle); len(got) != 3 || !bytes.Equal(got[2], ev) {
				t.Fatalf("the operation event read back as %q; want %s", got, ev)
			}
			must(t, b.Close(t.Context(), w.Handle))
			closeAfter(t, b)
			again := openBackend(t, sqlite.DefaultConfig(path)) // the migrated schema is the reference schema
			if st, err := again.Stat(t.Context(), "s1"); err != nil || st.EventCount != 3 {
				t.Fatalf("Stat(s1) on the second open = %+v, %v; want 3 events", st, err)
			}
		})
	}
}

// The schema migration is all or nothing: when a row cannot be copied
// (here an events row whose session is missing, which the version 4
// foreign key refuses) the open fails and the database stays at version
// 3, its tables and rows as they were.
func TestSchemaMigrationThatFailsChangesNothing(t *testing.T) {
	path, _ := legacyDatabase(t, 3)
	rawExec(t, path, "INSERT INTO events(session_id, seq, type, time, data) VALUES ('ghost', 0, 'x', 1, '{}')")
	schemaBefore := queryString(t, path, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)")
	_, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
	if err == nil {
		t.Fatal("Open of a database whose migration cannot copy a row succeeded")
	}
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "migrating the schema from version 3")
	if got := queryInt(t, path, "PRAGMA user_version"); got != 3 {
		t.Fatalf("user_version after the failed migration = %d; want 3", got)
	}
	if got := queryString(t, path, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)"); got != schemaBefore {
		t.Fatalf("schema after the failed migration:\n%s\nwant\n%s", got, schemaBefore)
	}
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != 4 {
		t.Fatalf("%d events rows after the failed migration; want 4", n)
	}
}
