package persistencetest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The Tenancy group (sdk.Tenancy, capability "tenants"): the views of
// tenants b and c and the backend itself (the implicit tenant) are three
// stores that share nothing but the storage.

// RunTenancy runs only the Tenancy group of Run against the backend h
// reaches: for a backend that is working towards the whole suite, or to
// run the group under a name of its own. It skips when the backend neither
// declares nor implements sdk.Tenancy and fails when only one holds.
func RunTenancy(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("persistencetest: Harness.New is required")
	}
	s := &suite{h: h}
	s.runGroup(t, group{"Tenancy", tenancyRules, sdk.CapabilityTenants})
}

// tenantNames are the named tenants the rules use, in ascending order.
var tenantNames = []string{"b", "c"}

// tenancy returns p's sdk.Tenancy; the group runs only for a backend that
// declares and implements it.
func tenancy(t *testing.T, p sdk.Persistence) sdk.Tenancy {
	t.Helper()
	return implementation[sdk.Tenancy](t, p)
}

// view returns p's view of tenant name.
func view(t *testing.T, p sdk.Persistence, name string) sdk.Persistence {
	t.Helper()
	v, err := tenancy(t, p).Tenant(name)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", name, err)
	}
	if v == nil {
		t.Fatalf("Tenant(%q) returned nil", name)
	}
	return v
}

// tenantViews returns p itself (the implicit tenant, as sdk.DefaultTenant)
// and its views of tenantNames, by name.
func tenantViews(t *testing.T, p sdk.Persistence) map[string]sdk.Persistence {
	t.Helper()
	out := map[string]sdk.Persistence{sdk.DefaultTenant: p}
	for _, name := range tenantNames {
		out[name] = view(t, p, name)
	}
	return out
}

// tenantHeader is header(id) of tenant name's view.
func tenantHeader(id, name string) sdk.Header {
	h := header(id)
	h.Tenant = sdk.HeaderTenant(name)
	return h
}

// storedIn creates session id in tenant name's view v with n events of its
// own (the type names the tenant) and returns its handle, still open, and
// the events.
func storedIn(t *testing.T, v sdk.Persistence, name, id string, n int) (string, [][]byte) {
	t.Helper()
	o, err := v.Create(t.Context(), tenantHeader(id, name))
	if err != nil {
		t.Fatalf("tenant %s: Create(%q): %v", name, id, err)
	}
	evs := make([][]byte, n)
	for i := range evs {
		evs[i] = Envelope(i, "tenant/"+name, `{"n":`+strconv.Itoa(i)+`}`)
	}
	if n == 0 {
		flush(t, v, o.Handle)
	} else {
		appendOK(t, v, o.Handle, evs)
	}
	return o.Handle, evs
}

// requireTenantSession fails unless view v of tenant name holds session id
// with exactly events, and its stored header names the tenant.
func requireTenantSession(t *testing.T, v sdk.Persistence, name, id string, events [][]byte) {
	t.Helper()
	o, err := v.Open(t.Context(), id, sdk.AccessRead)
	if err != nil {
		t.Fatalf("tenant %s: Open(%q, read): %v", name, id, err)
	}
	defer closeHandle(t, v, o.Handle)
	requireEvents(t, "tenant "+name+" session "+id, ReadAll(t, v, o.Handle), events)
	want := sdk.HeaderTenant(name)
	if o.Header.Tenant != want {
		t.Fatalf("tenant %s: Open(%q) header names tenant %q; want %q", name, id, o.Header.Tenant, want)
	}
	if st := stat(t, v, id); st.Header.Tenant != want {
		t.Fatalf("tenant %s: Stat(%q) header names tenant %q; want %q", name, id, st.Header.Tenant, want)
	}
	e, ok := list(t, v)[id]
	if !ok || e.Err != nil || e.Header.Tenant != want {
		t.Fatalf("tenant %s: List entry of %q = %+v (listed %t); want its header naming tenant %q", name, id, e, ok, want)
	}
}

// requireAbsent fails unless view v of tenant name does not see session
// id: Stat and Open are SESSION_NOT_FOUND and List does not name it.
func requireAbsent(t *testing.T, v sdk.Persistence, name, id string) {
	t.Helper()
	_, err := v.Stat(t.Context(), id)
	RequireCode(t, err, sdk.CodeSessionNotFound, id)
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := v.Open(t.Context(), id, a)
		RequireCode(t, err, sdk.CodeSessionNotFound, id)
	}
	if _, ok := list(t, v)[id]; ok {
		t.Fatalf("tenant %s: List yields session %q of another tenant", name, id)
	}
}

// readStored returns every stored event of session id in v.
func readStored(t *testing.T, v sdk.Persistence, id string) [][]byte {
	t.Helper()
	o := open(t, v, id, sdk.AccessRead)
	defer closeHandle(t, v, o.Handle)
	return ReadAll(t, v, o.Handle)
}

// tenantsOf returns what p's Tenants reports, in its order.
func tenantsOf(t *testing.T, p sdk.Persistence) []string {
	t.Helper()
	var out []string
	if err := tenancy(t, p).Tenants(t.Context(), func(name string) error { out = append(out, name); return nil }); err != nil {
		t.Fatalf("Tenants: %v", err)
	}
	return out
}

// needs skips the rule unless the backend has the optional capability
// name (as the group of that capability decides; the Capabilities group
// reports a declaration that disagrees with the type).
func (s *suite) needs(t *testing.T, name string) {
	t.Helper()
	i := slices.IndexFunc(capabilities, func(c capability) bool { return c.name == name })
	c := capabilities[i]
	if v := s.served(t); !c.implementedBy(v) {
		t.Skipf("%T implements no %s: this rule checks that capability's view of a tenant", v, c.iface)
	}
}

var tenancyRules = []rule{
	{name: "the-same-id-in-three-tenants-is-three-sessions", run: func(t *testing.T, s *suite) {
		views := tenantViews(t, s.backend(t))
		events := map[string][][]byte{}
		for i, name := range []string{sdk.DefaultTenant, "b", "c"} {
			h, evs := storedIn(t, views[name], name, "s", i+2)
			closeHandle(t, views[name], h)
			events[name] = evs
		}
		for name, v := range views {
			requireTenantSession(t, v, name, "s", events[name])
			if n := len(list(t, v)); n != 1 {
				t.Fatalf("tenant %s: List yields %d sessions; want its own 1", name, n)
			}
		}
	}},
	{name: "a-view-sees-none-of-another-tenants-sessions", run: func(t *testing.T, s *suite) {
		views := tenantViews(t, s.backend(t))
		for _, name := range []string{sdk.DefaultTenant, "b", "c"} {
			h, _ := storedIn(t, views[name], name, "only-"+name, 1)
			closeHandle(t, views[name], h)
		}
		for name, v := range views {
			for other := range views {
				if other != name {
					requireAbsent(t, v, name, "only-"+other)
				}
			}
		}
	}},
	{name: "a-header-of-another-tenant-is-usage-and-changes-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		views := tenantViews(t, p)
		importing := is[sdk.Importer](s.served(t))
		for name, v := range views {
			for other := range views {
				if other == name {
					continue
				}
				_, err := v.Create(t.Context(), tenantHeader("x", other))
				RequireCode(t, err, sdk.CodeUsage, sdk.TenantName(other), name)
				if importing {
					_, err := implementation[sdk.Importer](t, v).Import(t.Context(), tenantHeader("x", other), yielding([][][]byte{Batch(0, 2)}, nil))
					RequireCode(t, err, sdk.CodeUsage, sdk.TenantName(other), name)
				}
			}
		}
		for name, v := range views {
			requireAbsent(t, v, name, "x")
			if n := len(list(t, v)); n != 0 {
				t.Fatalf("tenant %s: List yields %d sessions after refused creates; want none", name, n)
			}
			// The refused creates claimed nothing: the id can be created.
			h, _ := storedIn(t, v, name, "x", 1)
			closeHandle(t, v, h)
		}
	}},
	{name: "a-handle-is-closed-in-every-other-view", run: func(t *testing.T, s *suite) {
		views := tenantViews(t, s.backend(t))
		handles := map[string]string{}
		for name, v := range views {
			handles[name], _ = storedIn(t, v, name, "s", 1)
		}
		for name, v := range views {
			for other, h := range handles {
				if other == name {
					continue
				}
				_, err := v.Append(t.Context(), h, 1, Batch(1, 1))
				RequireCode(t, err, sdk.CodeHandleClosed, h)
				err = v.Read(t.Context(), h, 0, -1, func([][]byte) error { return nil })
				RequireCode(t, err, sdk.CodeHandleClosed, h)
				_, err = v.Flush(t.Context(), h)
				RequireCode(t, err, sdk.CodeHandleClosed, h)
				if err := v.Close(t.Context(), h); err != nil {
					t.Fatalf("tenant %s: Close of tenant %s's handle %s: %v; want a no-op", name, other, h, err)
				}
			}
		}
		// Closing another view's handle closed nothing.
		for name, v := range views {
			appendOK(t, v, handles[name], Batch(1, 1))
			if got := stat(t, v, "s"); got.EventCount >= 0 && got.EventCount != 2 {
				t.Fatalf("tenant %s: Stat(s) counts %d events; want 2", name, got.EventCount)
			}
		}
	}},
	{name: "views-of-one-name-share-their-state", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		v1, v2 := view(t, p, "b"), view(t, p, "b")
		h, _ := storedIn(t, v1, "b", "s", 1)
		appendOK(t, v2, h, Batch(1, 1))
		closeHandle(t, v2, h)
		requireTenantSession(t, v1, "b", "s", readStored(t, v2, "s"))
		if n := len(readStored(t, v1, "s")); n != 2 {
			t.Fatalf("tenant b: one view appended 1 event, the other 1 more; the log holds %d", n)
		}
	}},
	{name: "tenant-names-are-checked", run: func(t *testing.T, s *suite) {
		ty := tenancy(t, s.backend(t))
		for _, name := range []string{"", "B", "-b", "b_c", sdk.DefaultTenant, strings.Repeat("b", sdk.MaxTenantBytes+1)} {
			_, err := ty.Tenant(name)
			RequireCode(t, err, sdk.CodeTenantInvalid)
		}
	}},
	{name: "tenants-lists-the-named-tenants-with-stored-sessions-in-order", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		if got := tenantsOf(t, p); len(got) != 0 {
			t.Fatalf("Tenants of an empty backend = %q; want none", got)
		}
		h, _ := storedIn(t, p, sdk.DefaultTenant, "s", 1)
		closeHandle(t, p, h)
		for _, name := range []string{"c", "b"} {
			v := view(t, p, name)
			h, _ := storedIn(t, v, name, "s", 1)
			closeHandle(t, v, h)
		}
		// A create not stored yet holds no session.
		d := view(t, p, "d")
		o, err := d.Create(t.Context(), tenantHeader("pending", "d"))
		if err != nil {
			t.Fatalf("tenant d: Create: %v", err)
		}
		defer closeHandle(t, d, o.Handle)
		if got := tenantsOf(t, p); !slices.Equal(got, tenantNames) {
			t.Fatalf("Tenants = %q; want %q (the named tenants with stored sessions, in order, not %q)", got, tenantNames, sdk.DefaultTenant)
		}
		if got := tenantsOf(t, view(t, p, "b")); !slices.Equal(got, tenantNames) {
			t.Fatalf("Tenants through tenant b's view = %q; want %q", got, tenantNames)
		}
	}},
	{name: "delete-holds-and-audit-are-per-tenant", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		s.needs(t, sdk.CapabilityDelete)
		views := tenantViews(t, p)
		events := map[string][][]byte{}
		for name, v := range views {
			h, evs := storedIn(t, v, name, "s", 2)
			closeHandle(t, v, h)
			events[name] = evs
		}
		b, c := views["b"], views["c"]
		if _, changed, err := deleter(t, c).SetHold(t.Context(), "s", true, byTest); err != nil || !changed {
			t.Fatalf("tenant c: SetHold(s) = changed %t, %v", changed, err)
		}
		for name, v := range views {
			held, err := deleter(t, v).Held(t.Context(), "s")
			if err != nil || held != (name == "c") {
				t.Fatalf("tenant %s: Held(s) = %t, %v; only tenant c's session is held", name, held, err)
			}
		}
		deleteOK(t, b, "s", 2)
		requireAbsent(t, b, "b", "s")
		_, err := deleter(t, c).Delete(t.Context(), "s", byTest)
		RequireCode(t, err, sdk.CodeSessionHeld, "s")
		for _, name := range []string{sdk.DefaultTenant, "c"} {
			requireTenantSession(t, views[name], name, "s", events[name])
		}
		for name, v := range views {
			var ops []sdk.AuditOp
			for _, r := range audit(t, v) {
				ops = append(ops, r.Op)
			}
			want := map[string][]sdk.AuditOp{"b": {sdk.AuditDelete}, "c": {sdk.AuditHold}}[name]
			if !slices.Equal(ops, want) {
				t.Fatalf("tenant %s: the audit log holds %q; want %q (its own operations only)", name, ops, want)
			}
		}
	}},
	{name: "watch-follows-the-views-own-session", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		s.needs(t, sdk.CapabilityWatch)
		b, c := view(t, p, "b"), view(t, p, "c")
		hb, _ := storedIn(t, b, "b", "s", 1)
		ctx, cancel := context.WithTimeout(t.Context(), watchWait)
		defer cancel()
		err := watcher(t, c).Watch(ctx, "s", 0, func(sdk.Offset) error { return nil })
		RequireCode(t, err, sdk.CodeSessionNotFound, "s")
		hc, _ := storedIn(t, c, "c", "s", 1)
		wt := watch(t, watcher(t, c), "s", 2)
		appendOK(t, b, hb, Batch(1, 4)) // tenant b's s reaches 5
		appendOK(t, c, hc, Batch(1, 1)) // tenant c's s reaches 2
		wt.reaches(t, 2, 0)
	}},
	{name: "copy-prefix-reads-and-writes-the-views-own-sessions", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		s.needs(t, sdk.CapabilityCopyPrefix)
		b, c := view(t, p, "b"), view(t, p, "c")
		h, evs := storedIn(t, b, "b", "src", 3)
		closeHandle(t, b, h)
		_, err := implementation[sdk.PrefixCopier](t, c).CopyPrefix(t.Context(), "src", 1, tenantHeader("child", "c"))
		RequireCode(t, err, sdk.CodeSessionNotFound, "src")
		_, err = implementation[sdk.PrefixCopier](t, b).CopyPrefix(t.Context(), "src", 1, tenantHeader("child", "c"))
		RequireCode(t, err, sdk.CodeUsage, "c", "b")
		o, err := implementation[sdk.PrefixCopier](t, b).CopyPrefix(t.Context(), "src", 1, tenantHeader("child", "b"))
		if err != nil {
			t.Fatalf("tenant b: CopyPrefix: %v", err)
		}
		closeHandle(t, b, o.Handle)
		requireTenantSession(t, b, "b", "child", evs[:2])
		requireAbsent(t, p, sdk.DefaultTenant, "child")
		requireAbsent(t, c, "c", "child")
	}},
	{name: "read-damaged-reads-the-views-own-session", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		s.needs(t, capSalvage)
		b, c := view(t, p, "b"), view(t, p, "c")
		h, evs := storedIn(t, b, "b", "s", 2)
		closeHandle(t, b, h)
		_, err := implementation[sdk.SalvageReader](t, c).ReadDamaged(t.Context(), "s", func([][]byte) error { return nil })
		RequireCode(t, err, sdk.CodeSessionNotFound, "s")
		var got [][]byte
		d, err := implementation[sdk.SalvageReader](t, b).ReadDamaged(t.Context(), "s", func(e [][]byte) error { got = append(got, e...); return nil })
		if err != nil {
			t.Fatalf("tenant b: ReadDamaged: %v", err)
		}
		requireEvents(t, "tenant b ReadDamaged", got, evs)
		if d.Header.Tenant != "b" || d.Corrupt {
			t.Fatalf("tenant b: ReadDamaged = %+v; want an intact log whose header names tenant b", d)
		}
	}},
	{name: "import-stores-in-the-views-tenant", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		s.needs(t, sdk.CapabilityImport)
		b := view(t, p, "b")
		o, err := implementation[sdk.Importer](t, b).Import(t.Context(), tenantHeader("imp", "b"), yielding(importBatches(), nil))
		if err != nil {
			t.Fatalf("tenant b: Import: %v", err)
		}
		closeHandle(t, b, o.Handle)
		var want [][]byte
		for _, batch := range importBatches() {
			want = append(want, batch...)
		}
		requireTenantSession(t, b, "b", "imp", want)
		requireAbsent(t, p, sdk.DefaultTenant, "imp")
		requireAbsent(t, view(t, p, "c"), "c", "imp")
	}},
	{name: "another-instance-keeps-the-tenants-apart", needs: []string{hookReopen}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		views := tenantViews(t, p)
		events := map[string][][]byte{}
		for i, name := range []string{sdk.DefaultTenant, "b", "c"} {
			h, evs := storedIn(t, views[name], name, "s", i+1)
			closeHandle(t, views[name], h)
			events[name] = evs
			h, _ = storedIn(t, views[name], name, "only-"+name, 1)
			closeHandle(t, views[name], h)
		}
		q := s.reopen(t, p)
		again := tenantViews(t, q)
		for name, v := range again {
			requireTenantSession(t, v, name, "s", events[name])
			for other := range again {
				if other != name {
					requireAbsent(t, v, name, "only-"+other)
				}
			}
		}
		if got := tenantsOf(t, q); !slices.Equal(got, tenantNames) {
			t.Fatalf("Tenants of another instance = %q; want %q", got, tenantNames)
		}
	}},
}
