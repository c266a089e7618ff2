package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
)

var tokenRE = regexp.MustCompile(`^lb_[A-Za-z0-9_-]{43}$`)

// wantToken asserts that r printed one token, alone, as its last (and
// only) stdout line, and returns it.
func wantToken(t *testing.T, r result) string {
	t.Helper()
	lines := r.lines()
	if len(lines) != 1 || !tokenRE.MatchString(lines[0]) {
		t.Fatalf("stdout %q: want the token alone on the last line", r.stdout)
	}
	if strings.Contains(r.stderr, lines[0]) {
		t.Fatalf("the token is printed twice (stderr %q)", r.stderr)
	}
	return lines[0]
}

// tokenCommands runs create, list and revoke with extra global flags.
func tokenCommands(t *testing.T, data string, flags ...string) {
	run := func(args ...string) result { return ok(t, data, "", append(args, flags...)...) }
	bad := func(code sdk.Code, want string, args ...string) {
		t.Helper()
		r := fail(t, data, "", code, append(args, flags...)...)
		if !strings.Contains(r.lastLine(), want) {
			t.Errorf("logbook %v: %q does not say %q", args, r.lastLine(), want)
		}
		if r.stdout != "" {
			t.Errorf("logbook %v printed %q on a refusal", args, r.stdout)
		}
	}
	ci := wantToken(t, run("token", "create", "--tenant", "acme", "--role", "write", "--name", "ci"))
	ops := wantToken(t, run("token", "create", "--tenant", "*", "--role", "operator", "--name", "ops"))
	if ci == ops {
		t.Fatal("two creates printed the same token")
	}
	bad(sdk.CodeUsage, `a token named "ci" exists`, "token", "create", "--tenant", "b", "--role", "read", "--name", "ci")
	bad(sdk.CodeUsage, `its tenant must be "*"`, "token", "create", "--tenant", "acme", "--role", "operator", "--name", "x")
	bad(sdk.CodeUsage, "needs role operator", "token", "create", "--tenant", "*", "--role", "admin", "--name", "x")
	bad(sdk.CodeTenantInvalid, "tenant name", "token", "create", "--tenant", "Acme!", "--role", "read", "--name", "x")
	bad(sdk.CodeUsage, `role "root"`, "token", "create", "--tenant", "acme", "--role", "root", "--name", "x")
	bad(sdk.CodeUsage, "token create needs --role, --name", "token", "create", "--tenant", "acme")
	bad(sdk.CodeUsage, "must match", "token", "create", "--tenant", "acme", "--role", "read", "--name", "Bad Name")

	list := run("token", "list")
	if lines := list.lines(); len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") ||
		!regexp.MustCompile(`^ci\s+acme\s+write\s+\d{4}-`).MatchString(lines[1]) || !regexp.MustCompile(`^ops\s+\*\s+operator\s+`).MatchString(lines[2]) {
		t.Fatalf("token list:\n%s", list.stdout)
	}
	if strings.Contains(list.stdout, ci) || strings.Contains(list.stdout, ops) {
		t.Fatal("token list prints a token")
	}
	var js []struct{ Name, Tenant, Role, Created string }
	if err := json.Unmarshal([]byte(run("token", "list", "--json").stdout), &js); err != nil || len(js) != 2 || js[0].Name != "ci" || js[0].Tenant != "acme" || js[0].Role != "write" || js[0].Created == "" {
		t.Fatalf("token list --json: %+v, %v", js, err)
	}

	bad(sdk.CodeUsage, `no token named "nope"`, "token", "revoke", "nope")
	run("token", "revoke", "ci")
	if err := json.Unmarshal([]byte(run("token", "list", "--json").stdout), &js); err != nil || len(js) != 1 || js[0].Name != "ops" {
		t.Fatalf("token list --json after revoke: %+v, %v", js, err)
	}
	bad(sdk.CodeUsage, `no token named "ci"`, "token", "revoke", "ci")
}

func TestTokenCommandsFileStore(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	tokenCommands(t, data)
	path := filepath.Join(data, "tokens")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, mode %v; want 0600", path, err, fi.Mode())
	}
	// A token file others may read is refused, naming it.
	os.Chmod(path, 0o644)
	r := fail(t, data, "", sdk.CodeConfigInvalid, "token", "list")
	if !strings.Contains(r.lastLine(), path) || !strings.Contains(r.lastLine(), "chmod 600") {
		t.Errorf("token list over a 0644 file: %q", r.lastLine())
	}
}

func TestTokenCommandsTokensFile(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := writeConfig(t, data, "l.hcl", "persistence \"memory\" {}\nauth {\n  tokens_file = \"creds/tokens\"\n}\n")
	tokenCommands(t, data, "--config", cfg)
	if _, err := os.Stat(filepath.Join(data, "creds", "tokens")); err != nil {
		t.Fatalf("tokens_file was not used: %v", err)
	}
}

func TestTokenCommandsPostgresStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	data := t.TempDir()
	cfg := writeConfig(t, data, "pg.hcl", "persistence \"postgres\" {\n  dsn = \""+dsn+"\"\n  schema = \""+schema+"\"\n}\n")
	tokenCommands(t, data, "--config", cfg)
	if _, err := os.Stat(filepath.Join(data, "tokens")); err == nil {
		t.Fatal("a token file was written although the primary is postgres")
	}
	// The backend still opens the schema holding the token tables.
	ok(t, data, "", "create", "s1", "--config", cfg)
}

func TestTokenNeedsASubcommand(t *testing.T) {
	t.Parallel()
	r := fail(t, t.TempDir(), "", sdk.CodeUsage, "token")
	if !strings.Contains(r.lastLine(), "create, list or revoke") {
		t.Errorf("logbook token: %q", r.lastLine())
	}
}
