package handles_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// A view accepts a header of its own tenant only: another tenant's (the
// implicit one's too) is USAGE naming both tenants.
func TestCheckTenantRefusesAHeaderOfAnotherTenant(t *testing.T) {
	for _, tc := range []struct{ header, view string }{{"", ""}, {"b", "b"}} {
		if err := handles.CheckTenant("x", sdk.Header{ID: "s", Tenant: tc.header}, tc.view); err != nil {
			t.Fatalf("CheckTenant(header %q, view %q): %v", tc.header, tc.view, err)
		}
	}
	for _, tc := range []struct{ header, view, headerName, viewName string }{
		{"c", "b", `"c"`, `"b"`}, {"", "b", `"default"`, `"b"`}, {"b", "", `"b"`, `"default"`},
	} {
		err := handles.CheckTenant("x", sdk.Header{ID: "s", Tenant: tc.header}, tc.view)
		persistencetest.RequireCode(t, err, sdk.CodeUsage, tc.headerName, tc.viewName, `"s"`)
	}
}

// A stored header naming another tenant than the one it is stored under
// is CORRUPT_LOG naming both and where.
func TestStoredTenantOfAnotherTenantIsCorrupt(t *testing.T) {
	if err := handles.StoredTenant("x", sdk.Header{ID: "s", Tenant: "b"}, "b", "f"); err != nil {
		t.Fatal(err)
	}
	err := handles.StoredTenant("x", sdk.Header{ID: "s", Tenant: "c"}, "b", "/data/.tenants/b/s/events.v5.jsonl")
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, `"c"`, `"b"`, "/data/.tenants/b/s/events.v5.jsonl")
}
