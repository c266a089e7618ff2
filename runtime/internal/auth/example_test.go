package auth_test

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
)

// A token made with the store is accepted by a Verifier over the same
// configuration; anything else is refused, saying why.
func ExampleVerifier() {
	dir, _ := os.MkdirTemp("", "auth-example")
	defer os.RemoveAll(dir)
	cfg := &config.Config{DataDir: dir} // tokens in <dir>/tokens
	ctx := context.Background()

	store, _ := auth.OpenStore(ctx, cfg)
	defer store.Close()
	secret, _, _ := store.Create(ctx, auth.Token{Name: "ci", Tenant: "acme", Role: auth.RoleWrite})

	v, _ := auth.NewVerifier(ctx, auth.Options{Config: cfg})
	defer v.Close()
	_, err := v.Verify(ctx, "Bearer "+secret) // the header's value, not the token
	fmt.Println(err)
	p, _ := v.Verify(ctx, secret)
	fmt.Printf("%s of tenant %s, role %s\n", p.Name, p.Tenant, p.Role)
	// Output:
	// auth: UNAUTHENTICATED: unknown bearer token: not a logbook token (lb_…) and not the --token-file token
	// ci of tenant acme, role write
}
