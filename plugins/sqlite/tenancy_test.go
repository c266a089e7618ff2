package sqlite_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore/sqlstoretest"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestTenantScoping: every call of a tenant's view reads and writes that
// tenant's rows only (sqlstoretest.Scoping).
func TestTenantScoping(t *testing.T) {
	paths := map[*testing.T]string{}
	sqlstoretest.Scoping(t, func(t *testing.T) sqlstoretest.Backend {
		paths[t] = dbPath(t)
		return openBackend(t, sqlite.DefaultConfig(paths[t]))
	}, func(t *testing.T, tenant, id string, header []byte) {
		rawExec(t, paths[t], "UPDATE sessions SET header = ? WHERE tenant = ? AND id = ?", string(header), tenant, id)
	})
}

// A named tenant's files live in its own directories: its write claims
// lock <path>.locks/<tenant>/<enc(id)>.lock, a write open of its torn
// session keeps the cut rows in <path>.torn/<tenant>/ (0700), and its
// Delete removes them there, leaving the implicit tenant's session of the
// same id alone.
func TestTenantFilesLiveInTheTenantsDirectories(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	av, err := b.Tenant("a")
	must(t, err)
	a := av.(*sqlite.Backend)
	for _, p := range []struct {
		p      *sqlite.Backend
		tenant string
	}{{b, ""}, {a, "a"}} {
		h := header("s1")
		h.Tenant = p.tenant
		o, err := p.p.Create(t.Context(), h)
		must(t, err)
		appendOK(t, p.p, o.Handle, persistencetest.Batch(0, 2))
		must(t, p.p.Close(t.Context(), o.Handle))
	}
	if _, err := os.Stat(filepath.Join(path+".locks", "a", "s1.lock")); err != nil {
		t.Fatalf("the lock file of a/s1: %v", err)
	}
	rawExec(t, path, "INSERT INTO events(tenant, session_id, seq, type, time, data) VALUES ('a', 's1', 2, 'x-test/torn', 1, '{}')")
	o, err := a.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	if dir := filepath.Join(path+".torn", "a"); filepath.Dir(o.Torn.Artifact) != dir {
		t.Fatalf("the torn rows of a/s1 were kept in %s; want a file in %s", o.Torn.Artifact, dir)
	}
	fi, err := os.Stat(filepath.Dir(o.Torn.Artifact))
	must(t, err)
	if fi.Mode() != os.ModeDir|0o700 {
		t.Fatalf("%s has mode %v; want a 0700 directory", filepath.Dir(o.Torn.Artifact), fi.Mode())
	}
	must(t, a.Close(t.Context(), o.Handle))
	if _, err := a.Delete(t.Context(), "s1", sdk.AuditRequest{By: sdk.ByCLI}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(o.Torn.Artifact); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the torn-row file of the deleted a/s1: %v; want it removed", err)
	}
	if st, err := b.Stat(t.Context(), "s1"); err != nil || st.EventCount != 2 {
		t.Fatalf("Stat(s1) of the implicit tenant after a/s1 was deleted = %+v, %v; want its 2 events", st, err)
	}
}
