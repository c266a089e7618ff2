package tenantmap

import (
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestGetBuildsANameOnceAndTheDefaultIsTheRoot(t *testing.T) {
	var tm Map[*string]
	root, builds := new(string), 0
	build := func(name string) (*string, error) { builds++; return &name, nil }
	if v, err := tm.Get(sdk.DefaultTenant, root, build); err != nil || v != root {
		t.Fatalf("default tenant: %v, %v; want the root", v, err)
	}
	a, err := tm.Get("acme", root, build)
	if err != nil || *a != "acme" {
		t.Fatalf("acme: %v, %v", a, err)
	}
	if again, _ := tm.Get("acme", root, build); again != a || builds != 1 {
		t.Fatalf("second Get: %p after %d builds; want %p after 1", again, builds, a)
	}
}

func TestGetRefusesAnInvalidNameAndKeepsNoFailedBuild(t *testing.T) {
	var tm Map[*string]
	if _, err := tm.Get("no.dots", nil, func(string) (*string, error) { t.Fatal("built"); return nil, nil }); sdk.CodeOf(err) != sdk.CodeTenantInvalid {
		t.Fatalf("invalid name: %v; want TENANT_INVALID", err)
	}
	boom := errors.New("boom")
	if _, err := tm.Get("acme", nil, func(string) (*string, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed build: %v; want boom", err)
	}
	if built, _ := tm.Close("closed"); len(built) != 0 {
		t.Fatalf("a failed build was kept: %v", built)
	}
}

func TestCloseRefusesNamedTenantsWithItsReason(t *testing.T) {
	var tm Map[*string]
	root := new(string)
	build := func(name string) (*string, error) { return &name, nil }
	a, _ := tm.Get("acme", root, build)
	built, open := tm.Close("the engine is closed")
	if !open || len(built) != 1 || built[0] != a {
		t.Fatalf("Close: %v, %v; want [acme], true", built, open)
	}
	_, err := tm.Get("acme", root, build)
	var se *sdk.Error
	if !errors.As(err, &se) || se.Code != sdk.CodeSessionClosed || se.Detail != "the engine is closed" {
		t.Fatalf("Get after Close: %v; want SESSION_CLOSED with the reason", err)
	}
	if v, err := tm.Get(sdk.DefaultTenant, root, build); err != nil || v != root {
		t.Fatalf("default tenant after Close: %v, %v; want the root", v, err)
	}
	if built, open := tm.Close("the engine is closed"); open || len(built) != 1 {
		t.Fatalf("second Close: %v, %v; want [acme], false", built, open)
	}
}
