package service_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// openWithTokens opens a service over the memory backend whose token
// store is the file <dir>/tokens, and returns the service and the store.
func openWithTokens(t *testing.T) (*service.Service, *auth.Store) {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Parse([]byte("persistence \"memory\" {}"), "memory.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(ctx) })
	store, err := auth.OpenStore(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return svc, store
}

// Off loopback the server needs a credential: none is CONFIG_INVALID; a
// token in the store, or the legacy --token-file token, is enough.
func TestServeNeedsACredentialOffLoopback(t *testing.T) {
	const addr = "192.0.2.10:7420" // never bound: NewServer only checks
	svc, store := openWithTokens(t)
	if _, err := svc.NewServer(service.ServeOptions{Addr: addr}); !errors.Is(err, sdk.CodeConfigInvalid) || !strings.Contains(err.Error(), "credential") {
		t.Fatalf("NewServer off loopback without a credential: %v", err)
	}
	if _, err := svc.NewServer(service.ServeOptions{Addr: addr, Token: "legacy-token-0123456789"}); err != nil {
		t.Fatalf("NewServer off loopback with --token-file: %v", err)
	}
	if _, _, err := store.Create(context.Background(), auth.Token{Name: "ci", Tenant: sdk.DefaultTenant, Role: auth.RoleRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.NewServer(service.ServeOptions{Addr: addr}); err != nil {
		t.Fatalf("NewServer off loopback with a token in the store: %v", err)
	}
}

// With tokens in the store every call needs one, on loopback too; a
// change is audited by the token's name; a revoked token is refused
// within a second.
func TestServeTokens(t *testing.T) {
	svc, store := openWithTokens(t)
	ctx := context.Background()
	secret, _, err := store.Create(ctx, auth.Token{Name: "keeper", Tenant: sdk.DefaultTenant, Role: auth.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := svc.NewServer(service.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	url := "http://" + ln.Addr().String()

	anon := client.New(url, client.Options{})
	defer anon.Close()
	if _, err := anon.List(ctx); err == nil || !strings.Contains(err.Error(), "unauthenticated") && !strings.Contains(err.Error(), "bearer") {
		t.Fatalf("List without a token: %v", err)
	}
	c := client.New(url, client.Options{Token: secret})
	defer c.Close()
	if _, err := c.Create(ctx, "kept", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Session("kept").Release(ctx); err != nil {
		t.Fatal(err)
	}
	rec, changed, err := c.Session("kept").Hold(ctx, client.AuditOptions{Reason: "case 9"})
	if err != nil || !changed || rec.By != "keeper" {
		t.Fatalf("hold: %+v %v %v; want by keeper", rec, changed, err)
	}

	if err := store.Revoke(ctx, "keeper"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		req, _ := http.NewRequest(http.MethodGet, url+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			break
		}
		if took := time.Since(revoked); took > time.Second {
			t.Fatalf("the revoked token still answers %d after %v", resp.StatusCode, took)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
