package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
)

// An operator gives a team a write token of its tenant, lists the tokens
// (never their secrets) and revokes one; serve sees each change within a
// second.
func ExampleTokenStore() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "logbook-tokens")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	src := fmt.Sprintf("persistence \"memory\" {}\nauth { tokens_file = %q }\n", filepath.Join(dir, "tokens"))
	cfg, err := config.Parse([]byte(src), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	store, err := service.OpenTokenStore(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	secret, info, err := store.Create(ctx, service.NewToken{Name: "ci", Tenant: "acme", Role: "write"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created:", info.Name, info.Tenant, info.Role, "secret starts lb_:", strings.HasPrefix(secret, "lb_"))
	if _, _, err := store.Create(ctx, service.NewToken{Name: "ops", Tenant: "*", Role: "operator"}); err != nil {
		fmt.Println(err)
		return
	}
	_, _, err = store.Create(ctx, service.NewToken{Name: "bad", Tenant: "*", Role: "read"})
	fmt.Println("a read token of every tenant:", err)

	if err := store.Revoke(ctx, "ci"); err != nil {
		fmt.Println(err)
		return
	}
	toks, err := store.List(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range toks {
		fmt.Println("stored:", t.Name, t.Tenant, t.Role)
	}
	// Output:
	// created: ci acme write secret starts lb_: true
	// a read token of every tenant: auth: USAGE: tenant "*" (all tenants) needs role operator, not read
	// stored: ops * operator
}
