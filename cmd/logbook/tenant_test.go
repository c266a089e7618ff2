package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// tenantIDs are the ids `sessions --json` printed.
func tenantIDs(t *testing.T, out string) []string {
	t.Helper()
	var list []sessionEntry
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, out)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

// --tenant end to end through the logbook binary, over a JSONL primary
// and a SQLite mirror: the same id in two tenants is two sessions; fork,
// import, search, verify, delete and audit act within the tenant named;
// '*' runs sessions, search, verify, gc and audit in every tenant holding
// sessions; a bad name is TENANT_INVALID and '*' elsewhere USAGE, both
// exit status 2.
func TestTenantFlag(t *testing.T) {
	t.Parallel() // its own data directory and config
	data := t.TempDir()
	cfg := writeConfig(t, t.TempDir(), "tenants.hcl", "persistence \"jsonl\" {}\npersistence \"sqlite\" {\n  path = \"mirror.db\"\n}\nretention {\n  max_age = \"30d\"\n}\n")
	run := func(stdin string, args ...string) string {
		return ok(t, data, stdin, append(args, "--config", cfg)...).stdout
	}
	refused := func(code sdk.Code, args ...string) { fail(t, data, "", code, append(args, "--config", cfg)...) }

	run(input(crashLines, finishLines), "append", "s", "--tenant", "a")
	run(input(crashLines), "append", "s", "--tenant", "b")
	ea, eb := run("", "events", "s", "--tenant", "a"), run("", "events", "s", "--tenant", "b")
	if strings.Count(ea, "\n") <= strings.Count(eb, "\n") {
		t.Fatalf("tenant a's s has %d events, tenant b's %d; want a's longer", strings.Count(ea, "\n"), strings.Count(eb, "\n"))
	}
	refused(sdk.CodeSessionNotFound, "events", "s")
	if h, _, _ := strings.Cut(run("", "export", "s", "--tenant", "a"), "\n"); !strings.Contains(h, `"id":"s","tenant":"a"`) {
		t.Fatalf("the exported header of tenant a's session: %s", h)
	}

	run("", "fork", "s", "--as", "c", "--tenant", "a")
	refused(sdk.CodeSessionNotFound, "events", "c", "--tenant", "b")
	exported := strings.Replace(run("", "export", "s", "--tenant", "b"), `"id":"s"`, `"id":"imp"`, 1)
	run(exported, "import", "-", "--tenant", "a")
	if h, _, _ := strings.Cut(run("", "export", "imp", "--tenant", "a"), "\n"); !strings.Contains(h, `"id":"imp","tenant":"a"`) {
		t.Fatalf("an export of tenant b imported into a: %s", h)
	}
	refused(sdk.CodeSessionNotFound, "events", "imp", "--tenant", "b")
	if got := tenantIDs(t, run("", "sessions", "--json", "--tenant", "a")); !slices.Equal(got, []string{"c", "imp", "s"}) {
		t.Fatalf("sessions --tenant a: %v", got)
	}
	if got := tenantIDs(t, run("", "sessions", "--json", "--tenant", "b")); !slices.Equal(got, []string{"s"}) {
		t.Fatalf("sessions --tenant b: %v", got)
	}
	if got := tenantIDs(t, run("", "sessions", "--json")); len(got) != 0 {
		t.Fatalf("sessions of the default tenant: %v", got)
	}

	all := strings.Split(strings.TrimSpace(run("", "sessions", "--json", "--tenant", "*")), "\n")
	var tenants []string
	for _, l := range all {
		var line struct {
			Tenant string          `json:"tenant"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("sessions --tenant '*' --json line %q: %v", l, err)
		}
		tenants = append(tenants, line.Tenant+":"+strings.Join(tenantIDs(t, string(line.Result)), ","))
	}
	if want := []string{"default:", "a:c,imp,s", "b:s"}; !slices.Equal(tenants, want) {
		t.Fatalf("sessions --tenant '*': %v; want %v", tenants, want)
	}

	hits := func(args ...string) []string {
		var ids []string
		for _, l := range strings.Split(strings.TrimSpace(run("", append([]string{"search", "list THE"}, args...)...)), "\n") {
			if !strings.HasPrefix(l, "tenant ") { // the line before each tenant's hits
				ids = append(ids, strings.SplitN(l, "\t", 2)[0])
			}
		}
		slices.Sort(ids)
		return ids
	}
	if got := hits("--tenant", "b"); !slices.Equal(got, []string{"s"}) {
		t.Fatalf("search in tenant b found %v", got)
	}
	if got := hits("--tenant", "*"); !slices.Equal(got, []string{"c", "imp", "s", "s"}) {
		t.Fatalf("search --tenant '*' found %v", got)
	}
	if out := run("", "verify", "--tenant", "*"); strings.Count(out, "tenant ") != 3 || strings.Count(out, " ok") != 4 {
		t.Fatalf("verify --tenant '*':\n%s", out)
	}
	run("", "gc", "--dry-run", "--tenant", "*")

	run("", "delete", "imp", "--tenant", "a", "--reason", "test")
	refused(sdk.CodeSessionNotFound, "events", "imp", "--tenant", "a")
	run("", "events", "s", "--tenant", "b")
	if out := run("", "audit", "--tenant", "b"); strings.Contains(out, "delete") {
		t.Fatalf("tenant b's audit log holds a's deletion:\n%s", out)
	}
	out := run("", "audit", "--tenant", "*")
	_, inA, _ := strings.Cut(out, "tenant a:\n")
	inA, inB, _ := strings.Cut(inA, "tenant b:\n")
	if strings.Count(out, "delete") != 1 || !strings.Contains(inA, "delete") || !strings.Contains(inB, "TIME") {
		t.Fatalf("audit --tenant '*': want a's deletion under tenant a alone:\n%s", out)
	}

	for _, bad := range []string{"A", "-a", "a_b", ""} {
		refused(sdk.CodeTenantInvalid, "sessions", "--tenant", bad)
	}
	refused(sdk.CodeUsage, "create", "x", "--tenant", "*")
	refused(sdk.CodeUsage, "events", "s", "--tenant", "*")
}
