package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// queryInt returns the one integer query yields on a connection of the
// test's own.
func queryInt(t testing.TB, path, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := rawDB(t, path).QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func queryString(t testing.TB, path, query string, args ...any) string {
	t.Helper()
	var s string
	if err := rawDB(t, path).QueryRow(query, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// newDatabase makes a logbook database at a fresh path and releases it.
func newDatabase(t *testing.T) string {
	t.Helper()
	path := dbPath(t)
	b, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Shutdown(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewDatabaseGetsTheSchemaAndItsIdentity(t *testing.T) {
	path := newDatabase(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("new database has mode %04o; want 0600", fi.Mode().Perm())
	}
	if got := queryInt(t, path, "PRAGMA application_id"); got != sqlite.ApplicationID {
		t.Errorf("application_id = %d; want %d", got, sqlite.ApplicationID)
	}
	if got := queryInt(t, path, "PRAGMA user_version"); got != sqlite.UserVersion {
		t.Errorf("user_version = %d; want %d", got, sqlite.UserVersion)
	}
	if got := queryString(t, path, "PRAGMA journal_mode"); got != "wal" {
		t.Errorf("journal_mode = %s; want wal (persistent in the file)", got)
	}
	if n := queryInt(t, path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND sql LIKE '%STRICT'"); n != 5 {
		t.Errorf("%d STRICT tables; want store_state, sessions, events, audit, holds", n)
	}
	id := queryString(t, path, "SELECT store_id FROM store_state WHERE singleton = 1")
	if len(id) != 36 {
		t.Errorf("store id %q is not a UUID", id)
	}
	// Opening it again keeps the store id.
	closeAfter(t, openBackend(t, sqlite.DefaultConfig(path)))
	if again := queryString(t, path, "SELECT store_id FROM store_state"); again != id {
		t.Errorf("store id changed from %s to %s on reopening", id, again)
	}
}

func closeAfter(t *testing.T, b *sqlite.Backend) {
	t.Helper()
	if err := b.Shutdown(); err != nil {
		t.Fatal(err)
	}
}

func TestForeignDatabaseIsSCHEMA_MISMATCHNamingWhatDiffers(t *testing.T) {
	cases := []struct {
		name    string
		damage  []string // run on a fresh logbook database; nil: a foreign one
		foreign []string
		values  []any
	}{
		{name: "wrong application_id", damage: []string{"PRAGMA application_id = 42"}, values: []any{"application_id is 42", sqlite.ApplicationID}},
		{name: "wrong user_version", damage: []string{"PRAGMA user_version = 7"}, values: []any{"user_version is 7", "want 1"}},
		{name: "extra table", damage: []string{"CREATE TABLE extra(x)"}, values: []any{`unexpected table "extra"`}},
		{name: "extra index", damage: []string{"CREATE INDEX by_type ON events(type)"}, values: []any{`unexpected index "by_type"`}},
		{name: "changed table", damage: []string{"DROP TABLE events", "CREATE TABLE events(session_id TEXT, seq INTEGER)"}, values: []any{`table "events" differs`}},
		{name: "no store id", damage: []string{"DELETE FROM store_state"}, values: []any{"store_state has no store id"}},
		{name: "someone else's tables", foreign: []string{"CREATE TABLE notes(body TEXT)"}, values: []any{"application_id is 0", "user_version is 0", `unexpected table "notes"`}},
		{name: "someone else's application id", foreign: []string{"PRAGMA application_id = 5"}, values: []any{"application_id is 5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var path string
			if c.damage != nil {
				path = newDatabase(t)
				for _, q := range c.damage {
					rawExec(t, path, q)
				}
			} else {
				path = dbPath(t)
				for _, q := range c.foreign {
					rawExec(t, path, q)
				}
				if err := os.Chmod(path, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			mode := queryString(t, path, "PRAGMA journal_mode")
			_, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
			persistencetest.RequireCode(t, err, sdk.CodeSchemaMismatch, append(c.values, path)...)
			if got := queryString(t, path, "PRAGMA journal_mode"); got != mode {
				t.Fatalf("the refused database was converted from journal mode %s to %s", mode, got)
			}
		})
	}
}

func TestFileThatIsNotADatabaseIsSCHEMA_MISMATCH(t *testing.T) {
	path := dbPath(t)
	if err := os.WriteFile(path, []byte("these are my notes, not a database; they are long enough to fill the header of one...."), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
	persistencetest.RequireCode(t, err, sdk.CodeSchemaMismatch, path)
}

func TestAppendRechecksTheDatabaseIdentity(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	if err != nil {
		t.Fatal(err)
	}
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 2))
	newer := strconv.Itoa(sqlite.UserVersion + 1)
	rawExec(t, path, "PRAGMA user_version = "+newer)
	_, err = b.Append(t.Context(), o.Handle, 2, persistencetest.Batch(2, 1))
	persistencetest.RequireCode(t, err, sdk.CodeSchemaMismatch, "user_version is "+newer)
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != 2 {
		t.Fatalf("%d rows after a refused append; want 2", n)
	}
	rawExec(t, path, "PRAGMA user_version = "+strconv.Itoa(sqlite.UserVersion))
	appendOK(t, b, o.Handle, persistencetest.Batch(2, 1)) // nothing was consumed
}

func TestSecondConfigurationOfOneFileMustAgree(t *testing.T) {
	path := dbPath(t)
	openBackend(t, sqlite.DefaultConfig(path))
	cfg := sqlite.DefaultConfig(path)
	cfg.JournalMode = "delete"
	_, err := sqlite.Open(t.Context(), cfg)
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "journal_mode wal", "delete")
	// Another path to the same file is the same database.
	link := filepath.Join(filepath.Dir(path), "hard.db")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	cfg = sqlite.DefaultConfig(link)
	cfg.BusyTimeout = time.Second
	_, err = sqlite.Open(t.Context(), cfg)
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "5000 ms", "1000 ms")
}

// header is a session header with the members the tests care about.
func header(id string) sdk.Header {
	return sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: 1_700_000_000_000}
}

func appendOK(t testing.TB, p sdk.Persistence, handle string, events [][]byte) sdk.Durable {
	t.Helper()
	first := sdk.Seq(0)
	if len(events) > 0 {
		first = seqOf(t, events[0])
	}
	d, err := p.Append(context.Background(), handle, first, events)
	if err != nil {
		t.Fatalf("Append(%s, firstSeq %d, %d events): %v", handle, first, len(events), err)
	}
	return d
}

func seqOf(t testing.TB, ev []byte) sdk.Seq {
	t.Helper()
	var seq int64
	const prefix = `{"seq":`
	if len(ev) <= len(prefix) {
		t.Fatalf("test bug: %q is not an envelope", ev)
	}
	for _, c := range ev[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		seq = seq*10 + int64(c-'0')
	}
	return sdk.Seq(seq)
}
