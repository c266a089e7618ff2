package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

const validHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tokenJSON is a token file holding the given token objects.
func tokenJSON(tokens ...string) string {
	return `{"version": 1, "tokens": [` + strings.Join(tokens, ",") + `]}`
}

func tokenObj(name, tenant, role, hash string) string {
	return `{"name": "` + name + `", "tenant": "` + tenant + `", "role": "` + role + `", "sha256": "` + hash + `", "created": "2026-12-07T19:53:28.5Z"}`
}

func TestParseTokenFileReadsTheDocument(t *testing.T) {
	other := strings.Repeat("ab", 32)
	set, err := parseTokenFile([]byte(tokenJSON(tokenObj("z-ci", "acme", "write", validHash), tokenObj("ops", "*", "operator", other))), "f")
	if err != nil {
		t.Fatal(err)
	}
	got := set.tokens()
	want := []Token{
		{Name: "ops", Tenant: "*", Role: RoleOperator, Created: time.Date(2026, 12, 7, 19, 53, 28, 5e8, time.UTC)},
		{Name: "z-ci", Tenant: "acme", Role: RoleWrite, Created: time.Date(2026, 12, 7, 19, 53, 28, 5e8, time.UTC)},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("tokens = %+v; want %+v (in name order)", got, want)
	}
	// Encoding and parsing again gives the same set.
	again, err := parseTokenFile(encodeTokenFile(set), "f")
	if err != nil || len(again.entries) != 2 || again.entries[0] != set.entries[0] || again.entries[1] != set.entries[1] {
		t.Fatalf("round trip: %+v, %v; want %+v", again, err, set.entries)
	}
}

func TestParseTokenFileRefusesBadShapesNamingTheFileAndToken(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"not JSON", `tokens`, []string{"is not the token document"}},
		{"not an object", `[]`, []string{"is not the token document"}},
		{"unknown member", `{"version": 1, "tokens": [], "extra": 1}`, []string{"is not the token document", "extra"}},
		{"unknown token member", tokenJSON(`{"name": "a", "secret": "x"}`), []string{"is not the token document", "secret"}},
		{"two documents", tokenJSON() + tokenJSON(), []string{"data after its JSON document"}},
		{"no version", `{"tokens": []}`, []string{"has no version"}},
		{"newer version", `{"version": 2, "tokens": []}`, []string{"is version 2; this build reads version 1"}},
		{"no tokens", `{"version": 1}`, []string{`has no "tokens" array`}},
		{"bad name", tokenJSON(tokenObj("CI", "acme", "write", validHash)), []string{`token 0 ("CI")`, "must match [a-z0-9][a-z0-9._-]{0,63}"}},
		{"bad role", tokenJSON(tokenObj("ci", "acme", "root", validHash)), []string{`token 0 ("ci")`, `role "root"`}},
		{"bad tenant", tokenJSON(tokenObj("ci", "Acme", "write", validHash)), []string{`token 0 ("ci")`, "must match [a-z0-9][a-z0-9-]{0,62}"}},
		{"star without operator", tokenJSON(tokenObj("ci", "*", "admin", validHash)), []string{`needs role operator, not admin`}},
		{"operator of one tenant", tokenJSON(tokenObj("ci", "acme", "operator", validHash)), []string{`its tenant must be "*"`}},
		{"uppercase hash", tokenJSON(tokenObj("ci", "acme", "write", strings.ToUpper(validHash))), []string{"sha256 must be 64 lowercase hex digits"}},
		{"short hash", tokenJSON(tokenObj("ci", "acme", "write", validHash[:10])), []string{"sha256 must be 64 lowercase hex digits"}},
		{"bad created", tokenJSON(strings.Replace(tokenObj("ci", "acme", "write", validHash), "2026-12-07T19:53:28.5Z", "yesterday", 1)), []string{`created "yesterday" is not an RFC 3339 time`}},
		{"name twice", tokenJSON(tokenObj("ci", "acme", "write", validHash), tokenObj("ci", "b", "read", strings.Repeat("ab", 32))), []string{`token 1: name "ci" is used twice`}},
		{"hash twice", tokenJSON(tokenObj("ci", "acme", "write", validHash), tokenObj("cd", "b", "read", validHash)), []string{`token 1 ("cd"): same sha256 as token "ci"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := parseTokenFile([]byte(tc.data), `token file "/d/tokens"`)
			if set != nil || sdk.CodeOf(err) != sdk.CodeConfigInvalid {
				t.Fatalf("got %v, %v; want CONFIG_INVALID", set, err)
			}
			msg := err.Error()
			for _, w := range append(tc.want, `token file "/d/tokens": `) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// FuzzParseTokenFile checks that the parser never panics, and that what
// it accepts holds only valid tokens and reads back the same once
// written.
func FuzzParseTokenFile(f *testing.F) {
	f.Add([]byte(tokenJSON(tokenObj("ci", "acme", "write", validHash))))
	f.Add([]byte(tokenJSON(tokenObj("ops", "*", "operator", validHash), tokenObj("r", "default", "read", strings.Repeat("0", 64)))))
	f.Add([]byte(tokenJSON()))
	f.Add([]byte(`{"version": 1, "tokens": null}`))
	f.Add([]byte(`{"version": 1e400, "tokens": [{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := parseTokenFile(data, "f")
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeConfigInvalid {
				t.Fatalf("error %v is not CONFIG_INVALID", err)
			}
			return
		}
		for _, e := range set.entries {
			if ValidateTokenName(e.Name) != nil || CheckScope(e.Tenant, e.Role) != nil {
				t.Fatalf("accepted an invalid token %+v", e.Token)
			}
		}
		again, err := parseTokenFile(encodeTokenFile(set), "f")
		if err != nil || len(again.entries) != len(set.entries) {
			t.Fatalf("re-encoded file: %v, %d entries; want %d", err, len(again.entries), len(set.entries))
		}
		for i := range set.entries {
			if again.entries[i].Name != set.entries[i].Name || again.entries[i].hash != set.entries[i].hash || !again.entries[i].Created.Equal(set.entries[i].Created) {
				t.Fatalf("entry %d changed: %+v became %+v", i, set.entries[i], again.entries[i])
			}
		}
	})
}

func TestCheckScope(t *testing.T) {
	for _, tc := range []struct {
		tenant string
		role   Role
		code   sdk.Code
	}{
		{"acme", RoleRead, ""},
		{"default", RoleAdmin, ""},
		{"*", RoleOperator, ""},
		{"*", RoleAdmin, sdk.CodeUsage},
		{"acme", RoleOperator, sdk.CodeUsage},
		{"Acme", RoleWrite, sdk.CodeTenantInvalid},
		{"", RoleWrite, sdk.CodeTenantInvalid},
		{"acme", Role(9), sdk.CodeUsage},
	} {
		if got := sdk.CodeOf(CheckScope(tc.tenant, tc.role)); got != tc.code {
			t.Errorf("CheckScope(%q, %s) = %q; want %q", tc.tenant, tc.role, got, tc.code)
		}
	}
}
