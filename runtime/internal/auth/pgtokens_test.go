package auth_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	_ "github.com/seed-e5e476df/logbook/runtime/service/pgtokens" // the postgres token table
	"github.com/seed-e5e476df/logbook/sdk"
)

// pgConfig is a configuration whose primary persistence is postgres in a
// fresh schema of the test database, dropped when t ends.
func pgConfig(t *testing.T) (*config.Config, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	schema := pgtest.Schema(t, dsn)
	raw, _ := json.Marshal(map[string]string{"dsn": dsn, "schema": schema})
	return &config.Config{DataDir: t.TempDir(), Persistence: []config.Persistence{{Name: "postgres", Config: raw}}}, schema
}

func TestPGStoreCreateListRevoke(t *testing.T) {
	ctx := context.Background()
	cfg, schema := pgConfig(t)
	s := auth.OpenTestStore(t, cfg)
	if want := `table "` + schema + `".auth_tokens`; s.Where() != want {
		t.Fatalf("Where = %s; want %s", s.Where(), want)
	}
	secret, tok, err := s.Create(ctx, auth.Token{Name: "ci", Tenant: "acme", Role: auth.RoleAdmin})
	if err != nil || !strings.HasPrefix(secret, auth.TokenPrefix) {
		t.Fatalf("Create = %q, %v", secret, err)
	}
	if _, _, err := s.Create(ctx, auth.Token{Name: "ci", Tenant: "b", Role: auth.RoleRead}); sdk.CodeOf(err) != sdk.CodeUsage || !strings.Contains(err.Error(), `a token named "ci" exists`) {
		t.Fatalf("duplicate Create = %v; want USAGE naming it", err)
	}
	list, err := auth.OpenTestStore(t, cfg).List(ctx)
	if err != nil || len(list) != 1 || list[0] != tok {
		t.Fatalf("List = %+v, %v; want [%+v]", list, err, tok)
	}
	if err := s.Revoke(ctx, "nope"); sdk.CodeOf(err) != sdk.CodeUsage || !strings.Contains(err.Error(), `no token named "nope"`) {
		t.Fatalf("Revoke(unknown) = %v", err)
	}
	if err := s.Revoke(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx); len(list) != 0 {
		t.Fatalf("List after revoke = %+v", list)
	}
	// The schema the store created is one the postgres backend accepts.
	pcfg, err := postgres.ParseConfig(cfg.Persistence[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgres.Open(ctx, pcfg)
	if err != nil {
		t.Fatalf("the postgres backend refuses the schema holding the token tables: %v", err)
	}
	b.Shutdown()
}

func TestRevocationReachesEveryHostWithinASecondPostgres(t *testing.T) {
	cfg, _ := pgConfig(t)
	auth.RevocationOnTwoHosts(t, cfg)
}
