package service_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// tenantBackends are the configurations the tenant tests run over: real
// plugin subprocesses, each in its own data directory.
var tenantBackends = map[string]string{
	"jsonl":  "persistence \"jsonl\" {}\n",
	"sqlite": "persistence \"sqlite\" {}\n",
}

// openTenantService opens a service over body in a new data directory,
// with a retention block and the live-session cap maxLive (0: the
// default).
func openTenantService(t *testing.T, body string, maxLive int) *service.Service {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Parse(fmt.Appendf(nil, "data_dir = %q\n%sretention {\n  max_age = \"1d\"\n}\n", t.TempDir(), body), "tenants.hcl")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin, MaxLiveSessions: maxLive})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(ctx) })
	return svc
}

// tenant returns svc's service of name, failing the test on an error.
func tenant(t *testing.T, svc *service.Service, name string) *service.Service {
	t.Helper()
	ts, err := svc.Tenant(name)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", name, err)
	}
	return ts
}

// storedIDs lists the ids svc's tenant stores.
func storedIDs(t *testing.T, svc *service.Service) []string {
	t.Helper()
	list, err := svc.ListStored(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

// Service.Tenant validates the name, returns the same service for the
// same name (the root for "default", from any tenant), and Tenants lists
// "default" first, then the tenants holding sessions.
func TestTenantServices(t *testing.T) {
	svc := openTenantService(t, tenantBackends["jsonl"], 0)
	for _, bad := range []string{"", "A", "-a", "a_b", "a/b", "*"} {
		if _, err := svc.Tenant(bad); sdk.CodeOf(err) != sdk.CodeTenantInvalid {
			t.Errorf("Tenant(%q): %v; want TENANT_INVALID", bad, err)
		}
	}
	a := tenant(t, svc, "a")
	if tenant(t, svc, "a") != a || tenant(t, a, "a") != a {
		t.Error("Tenant(\"a\") returned another service the second time")
	}
	if tenant(t, svc, sdk.DefaultTenant) != svc || tenant(t, a, sdk.DefaultTenant) != svc {
		t.Error("Tenant(\"default\") is not the service Open returned")
	}
	if a.TenantName() != "a" || svc.TenantName() != sdk.DefaultTenant {
		t.Errorf("TenantName: %q and %q", a.TenantName(), svc.TenantName())
	}
	ctx := context.Background()
	if names, err := svc.Tenants(ctx); err != nil || !slices.Equal(names, []string{sdk.DefaultTenant}) {
		t.Fatalf("Tenants with no sessions: %v, %v; want [default]", names, err)
	}
	for _, ts := range []*service.Service{tenant(t, svc, "zz"), a} {
		create(t, ts, "s", 1)
		if err := ts.Release(ctx, "s"); err != nil { // Tenants lists the tenants of stored sessions
			t.Fatal(err)
		}
	}
	if names, err := a.Tenants(ctx); err != nil || !slices.Equal(names, []string{sdk.DefaultTenant, "a", "zz"}) {
		t.Fatalf("Tenants: %v, %v; want [default a zz]", names, err)
	}
}

// Two tenants of one service over real plugin subprocesses: the same id
// is two sessions; fork, import, search and gc stay inside their tenant;
// every session a tenant makes carries its name in the header.
func TestTenantsKeepSessionsApart(t *testing.T) {
	for name, body := range tenantBackends {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			svc := openTenantService(t, body, 0)
			a, b := tenant(t, svc, "a"), tenant(t, svc, "b")
			create(t, a, "s", 2)
			create(t, b, "s", 3)
			for _, x := range []struct {
				svc  *service.Service
				want int64
			}{{a, 2}, {b, 3}} {
				st, err := x.svc.Stat(ctx, "s")
				if err != nil || st.Length != sdk.Offset(x.want) || st.Header.Tenant != x.svc.TenantName() {
					t.Fatalf("tenant %s: Stat of s: %+v, %v; want %d events, Header.Tenant %q", x.svc.TenantName(), st, err, x.want, x.svc.TenantName())
				}
			}
			if _, err := svc.Stat(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
				t.Fatalf("the default tenant's Stat of another tenant's id: %v; want SESSION_NOT_FOUND", err)
			}

			child, err := a.Fork(ctx, service.ForkRequest{Source: "s", As: "child"})
			if err != nil {
				t.Fatal(err)
			}
			if h := child.Header(); h.Tenant != "a" || h.ParentSession != "s" {
				t.Fatalf("the fork's header: %+v; want tenant a, parent s", h)
			}
			if _, err := b.Fork(ctx, service.ForkRequest{Source: "child", As: "c2"}); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
				t.Fatalf("tenant b forking tenant a's session: %v; want SESSION_NOT_FOUND", err)
			}
			for _, x := range []*service.Service{a, b} {
				if err := x.Release(ctx, "s"); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.Release(ctx, "child"); err != nil {
				t.Fatal(err)
			}

			// An export of tenant a's session imported into tenant b is b's.
			l, err := a.OpenStored(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			var envs [][]byte
			err = l.Read(ctx, 0, l.Len(), func(batch [][]byte) error {
				for _, e := range batch {
					envs = append(envs, slices.Clone(e))
				}
				return nil
			})
			h := l.Header()
			l.Close()
			if err != nil {
				t.Fatal(err)
			}
			h.ID = "imported"
			if err := b.Import(ctx, h, envs); err != nil {
				t.Fatal(err)
			}
			if st, err := b.StatStored(ctx, "imported"); err != nil || st.Header.Tenant != "b" {
				t.Fatalf("the import into b: %+v, %v; want Header.Tenant b", st, err)
			}

			if got := storedIDs(t, a); !slices.Equal(got, []string{"child", "s"}) {
				t.Fatalf("tenant a lists %v", got)
			}
			if got := storedIDs(t, b); !slices.Equal(got, []string{"imported", "s"}) {
				t.Fatalf("tenant b lists %v", got)
			}
			if got := storedIDs(t, svc); len(got) != 0 {
				t.Fatalf("the default tenant lists %v", got)
			}

			// GC of tenant b deletes b's sessions only.
			ds, err := b.GC(ctx, service.GCOptions{Now: time.Now().Add(48 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			var deleted []string
			for _, d := range ds {
				if d.Err != nil {
					t.Fatalf("gc of %s: %v", d.ID, d.Err)
				}
				if d.Delete {
					deleted = append(deleted, d.ID)
				}
			}
			slices.Sort(deleted)
			if !slices.Equal(deleted, []string{"imported", "s"}) {
				t.Fatalf("gc in tenant b deleted %v; want [imported s]", deleted)
			}
			if got := storedIDs(t, b); len(got) != 0 {
				t.Fatalf("after gc tenant b lists %v", got)
			}
			if got := storedIDs(t, a); !slices.Equal(got, []string{"child", "s"}) {
				t.Fatalf("gc in tenant b changed tenant a: %v", got)
			}
			var audit []sdk.AuditRecord
			if err := a.Audit(ctx, func(r sdk.AuditRecord) error { audit = append(audit, r); return nil }); err != nil || len(audit) != 0 {
				t.Fatalf("tenant a's audit log after gc in b: %v, %v; want empty", audit, err)
			}
		})
	}
}

// max_live_sessions counts the live sessions of every tenant: one more
// in any tenant is TOO_MANY_LIVE_SESSIONS, and a release in another
// tenant makes room.
func TestTenantsShareTheLiveSessionCap(t *testing.T) {
	ctx := context.Background()
	svc := openTenantService(t, tenantBackends["jsonl"], 2)
	a, b := tenant(t, svc, "a"), tenant(t, svc, "b")
	create(t, svc, "s", 0)
	create(t, a, "s", 0)
	if _, err := b.Create(ctx, service.CreateRequest{ID: "s"}); sdk.CodeOf(err) != sdk.CodeTooManyLiveSessions {
		t.Fatalf("a third live session across tenants: %v; want TOO_MANY_LIVE_SESSIONS", err)
	}
	if err := a.Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	create(t, b, "s", 0)
}
