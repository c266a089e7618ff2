package service_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Each tenant's service sees its own sessions only: the same id in two
// tenants is two sessions, and another tenant's id is not found.
func ExampleService_Tenant() {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)
	acme, err := svc.Tenant("acme")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range []*service.Service{svc, acme} {
		if _, err := s.Create(ctx, service.CreateRequest{ID: "s1", Stored: true}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if _, err := acme.Create(ctx, service.CreateRequest{ID: "only-acme", Stored: true}); err != nil {
		fmt.Println(err)
		return
	}
	_, err = svc.Stat(ctx, "only-acme")
	fmt.Println("default tenant, only-acme:", sdk.CodeOf(err))
	_, err = svc.Tenant("Acme!")
	fmt.Println("bad name:", sdk.CodeOf(err))
	names, err := svc.Tenants(ctx)
	fmt.Println(names, err)
	// Output:
	// default tenant, only-acme: SESSION_NOT_FOUND
	// bad name: TENANT_INVALID
	// [default acme] <nil>
}
