package sqlite_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestMigrationThatFailsLeavesV1: a write open whose migration
// transaction cannot commit (another connection holds the database's
// write lock past busy_timeout) fails with BACKEND_BUSY and leaves the
// session at v1, header and rows as they were, readable; the next write
// open, with the lock gone, stores v2 in one transaction.
func TestMigrationThatFailsLeavesV1(t *testing.T) {
	events := turnLog(4)
	path, _, b, o := busySession(t)
	appendOK(t, b, o.Handle, events)
	must(t, b.Close(t.Context(), o.Handle))
	setFormatVersion(t, path, "s1", "1")
	var before string
	db := rawDB(t, path)
	must(t, db.QueryRow("SELECT header FROM sessions WHERE id = 's1'").Scan(&before))

	release := holdWriteLock(t, path)
	_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeBackendBusy, "s1", "format migration")
	release()

	var after string
	var version int64
	must(t, db.QueryRow("SELECT header, format_version FROM sessions WHERE id = 's1'").Scan(&after, &version))
	if after != before || version != 1 {
		t.Fatalf("after the failed migration: format_version %d, header %s; want 1 and %s", version, after, before)
	}
	r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	must(t, err)
	if r.Header.FormatVersion != sdk.FormatVersion {
		t.Fatalf("Open(read) after the failed migration: header v%d", r.Header.FormatVersion)
	}
	requireRead(t, "after the failed migration", b, r.Handle, events)
	must(t, b.Close(t.Context(), r.Handle))

	w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	must(t, err)
	requireRead(t, "the migrated session", b, w.Handle, events)
	must(t, b.Close(t.Context(), w.Handle))
	must(t, db.QueryRow("SELECT header, format_version FROM sessions WHERE id = 's1'").Scan(&after, &version))
	if version != int64(sdk.FormatVersion) || after == before {
		t.Fatalf("after the write open: format_version %d, header %s; want v%d stored", version, after, sdk.FormatVersion)
	}
}
