package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// fileConfig is a configuration whose token store is <dir>/tokens.
func fileConfig(t testing.TB) *config.Config {
	t.Helper()
	return &config.Config{DataDir: t.TempDir()}
}

func openStore(t testing.TB, cfg *config.Config) *Store {
	t.Helper()
	s, err := OpenStore(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestFileStoreCreateListRevoke(t *testing.T) {
	ctx := context.Background()
	cfg := fileConfig(t)
	s := openStore(t, cfg)
	path := filepath.Join(cfg.DataDir, "tokens")
	if s.Where() != `token file "`+path+`"` {
		t.Fatalf("Where = %s", s.Where())
	}
	secret, tok, err := s.Create(ctx, Token{Name: "ci", Tenant: "acme", Role: RoleWrite})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) != len(TokenPrefix)+43 || strings.ContainsAny(secret, "+/=") {
		t.Fatalf("secret %q is not lb_ + 43 base64url characters", secret)
	}
	if tok.Name != "ci" || tok.Tenant != "acme" || tok.Role != RoleWrite || time.Since(tok.Created) > time.Minute {
		t.Fatalf("created %+v", tok)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), secret) || strings.Contains(string(data), secret[len(TokenPrefix):]) {
		t.Fatal("the token file holds the secret")
	}
	if _, _, err := s.Create(ctx, Token{Name: "ops", Tenant: AllTenants, Role: RoleOperator}); err != nil {
		t.Fatal(err)
	}
	// A second handle (another process) sees both.
	list, err := openStore(t, cfg).List(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "ci" || list[1].Name != "ops" || list[1].Tenant != AllTenants {
		t.Fatalf("List = %+v, %v", list, err)
	}
	if err := s.Revoke(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx); len(list) != 1 || list[0].Name != "ops" {
		t.Fatalf("List after revoke = %+v", list)
	}
}

func TestFileStoreRefusals(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, fileConfig(t))
	if _, _, err := s.Create(ctx, Token{Name: "ci", Tenant: "acme", Role: RoleRead}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tok  Token
		code sdk.Code
		want string
	}{
		{"name taken", Token{Name: "ci", Tenant: "b", Role: RoleRead}, sdk.CodeUsage, `a token named "ci" exists`},
		{"bad name", Token{Name: "-x", Tenant: "b", Role: RoleRead}, sdk.CodeUsage, "must match"},
		{"bad tenant", Token{Name: "x", Tenant: "B", Role: RoleRead}, sdk.CodeTenantInvalid, "tenant name"},
		{"star needs operator", Token{Name: "x", Tenant: AllTenants, Role: RoleAdmin}, sdk.CodeUsage, "needs role operator"},
		{"operator needs star", Token{Name: "x", Tenant: "b", Role: RoleOperator}, sdk.CodeUsage, `its tenant must be "*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secret, _, err := s.Create(ctx, tc.tok)
			if secret != "" || sdk.CodeOf(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Create(%+v) = %q, %v; want %s containing %q", tc.tok, secret, err, tc.code, tc.want)
			}
			if list, _ := s.List(ctx); len(list) != 1 {
				t.Fatalf("the store changed: %+v", list)
			}
		})
	}
	err := s.Revoke(ctx, "nope")
	if sdk.CodeOf(err) != sdk.CodeUsage || !strings.Contains(err.Error(), `no token named "nope"`) {
		t.Fatalf("Revoke(unknown) = %v", err)
	}
}

func TestFileStoreRefusesAWiderModeOrABadFile(t *testing.T) {
	cfg := fileConfig(t)
	path := filepath.Join(cfg.DataDir, "tokens")
	if err := os.WriteFile(path, []byte(tokenJSON()), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644) // whatever the umask
	_, err := OpenStore(context.Background(), cfg)
	if sdk.CodeOf(err) != sdk.CodeConfigInvalid || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "0644") || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("OpenStore(0644 file) = %v; want CONFIG_INVALID naming the file, its mode and the fix", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte(`{"version": 1}`), 0o600)
	_, err = OpenStore(context.Background(), cfg)
	if sdk.CodeOf(err) != sdk.CodeConfigInvalid || !strings.Contains(err.Error(), path) {
		t.Fatalf("OpenStore(bad shape) = %v; want CONFIG_INVALID naming the file", err)
	}
}

func TestTokensFileOverridesThePath(t *testing.T) {
	cfg := fileConfig(t)
	cfg.Auth.TokensFile = filepath.Join(cfg.DataDir, "sub", "creds")
	s := openStore(t, cfg)
	if _, _, err := s.Create(context.Background(), Token{Name: "a", Tenant: "t", Role: RoleRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.Auth.TokensFile); err != nil {
		t.Fatalf("tokens_file not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, "tokens")); err == nil {
		t.Fatal("<data_dir>/tokens written although tokens_file names another file")
	}
}

func TestConcurrentCreatesKeepEveryToken(t *testing.T) {
	cfg := fileConfig(t)
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			s, err := OpenStore(context.Background(), cfg)
			if err == nil {
				_, _, err = s.Create(context.Background(), Token{Name: "t" + string(rune('a'+i)), Tenant: "x", Role: RoleRead})
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if list, err := openStore(t, cfg).List(context.Background()); err != nil || len(list) != n {
		t.Fatalf("List = %d tokens, %v; want %d (a writer lost another's token)", len(list), err, n)
	}
}
