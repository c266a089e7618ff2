package sqlite_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore/sqlstoretest"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
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
