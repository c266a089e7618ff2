// Package sqlstoretest is the test of what the SQL backends promise of
// tenants beside the conformance suite: that every call of a tenant's
// view reads and writes that tenant's rows only. plugins/sqlite and
// plugins/postgres run it over their databases.
package sqlstoretest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// Backend is a configured SQL backend under test: its Persistence (the
// implicit tenant's view) with every capability the SQL backends have.
type Backend interface {
	sdk.Persistence
	sdk.Tenancy
	sdk.Deleter
	sdk.Watcher
	sdk.PrefixCopier
}

// Scoping runs the scoping tests over a new, empty database that b
// returns. setHeader rewrites the header column of the sessions row
// (tenant, id) of that database to header, byte for byte ("" tenant: the
// implicit one).
func Scoping(t *testing.T, b func(t *testing.T) Backend, setHeader func(t *testing.T, tenant, id string, header []byte)) {
	t.Run("one id in three tenants is three sessions", func(t *testing.T) {
		root := b(t)
		views := tenantViews(t, root)
		for i, p := range views {
			store(t, p.p, p.tenant, "s1", i+1)
		}
		for i, p := range views {
			st, err := p.p.Stat(t.Context(), "s1")
			if err != nil || st.EventCount != int64(i+1) || st.Header.Tenant != p.tenant {
				t.Fatalf("Stat(s1) of tenant %q = %+v, %v; want %d events and Header.Tenant %q", p.tenant, st, err, i+1, p.tenant)
			}
			var ids []string
			must(t, p.p.List(t.Context(), func(e sdk.ListEntry) error {
				ids = append(ids, e.ID)
				if e.Header.Tenant != p.tenant {
					t.Errorf("List of tenant %q yields %s of tenant %q", p.tenant, e.ID, e.Header.Tenant)
				}
				return nil
			}))
			if !slices.Equal(ids, []string{"s1"}) {
				t.Fatalf("List of tenant %q = %v; want [s1]", p.tenant, ids)
			}
			o, err := p.p.Open(t.Context(), "s1", sdk.AccessWrite) // the write claims are per tenant
			must(t, err)
			if got := persistencetest.ReadAll(t, p.p, o.Handle); len(got) != i+1 {
				t.Fatalf("tenant %q reads %d events of s1; want %d", p.tenant, len(got), i+1)
			}
			defer p.p.Close(context.WithoutCancel(t.Context()), o.Handle)
		}
		var names []string
		must(t, root.Tenants(t.Context(), func(n string) error { names = append(names, n); return nil }))
		if !slices.Equal(names, []string{"a", "b"}) {
			t.Fatalf("Tenants = %v; want [a b]", names)
		}
	})

	t.Run("a view is one per name and refuses the implicit and invalid names", func(t *testing.T) {
		root := b(t)
		a1, err := root.Tenant("a")
		must(t, err)
		a2, err := root.Tenant("a")
		must(t, err)
		if a1 != a2 {
			t.Fatal("Tenant(a) twice returned two views")
		}
		if a3, err := a1.(sdk.Tenancy).Tenant("a"); err != nil || a3 != a1 {
			t.Fatalf("Tenant(a) on the view of a = %v, %v; want the same view", a3, err)
		}
		for _, name := range []string{sdk.DefaultTenant, "", "A", "-a", "a.b"} {
			_, err := root.Tenant(name)
			persistencetest.RequireCode(t, err, sdk.CodeTenantInvalid)
		}
	})

	t.Run("a header of another tenant is USAGE and stores nothing", func(t *testing.T) {
		root := b(t)
		a, err := root.Tenant("a")
		must(t, err)
		h := sdk.Header{ID: "s1", CreatedAt: 1}
		_, err = a.Create(t.Context(), h)
		persistencetest.RequireCode(t, err, sdk.CodeUsage, `"default"`, `"a"`)
		h.Tenant = "b"
		_, err = a.(sdk.Importer).Import(t.Context(), h, func(func([][]byte) error) error { return nil })
		persistencetest.RequireCode(t, err, sdk.CodeUsage, `"b"`, `"a"`)
		h.Tenant = "a"
		_, err = root.Create(t.Context(), h)
		persistencetest.RequireCode(t, err, sdk.CodeUsage, `"a"`, `"default"`)
		for _, p := range []sdk.Persistence{root, a} {
			_, err := p.Stat(t.Context(), "s1")
			persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
		}
	})

	t.Run("a stored header naming another tenant is CORRUPT_LOG", func(t *testing.T) {
		root := b(t)
		a, err := root.Tenant("a")
		must(t, err)
		store(t, a, "a", "s1", 1)
		store(t, root, "", "s1", 1)
		setHeader(t, "", "s1", headerjson.Encode(sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s1", Tenant: "a", CreatedAt: 1}))
		_, err = root.Stat(t.Context(), "s1")
		persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, `"a"`, `"default"`)
		_, err = root.Open(t.Context(), "s1", sdk.AccessRead)
		persistencetest.RequireCode(t, err, sdk.CodeCorruptLog)
		if _, err := a.Stat(t.Context(), "s1"); err != nil {
			t.Fatalf("Stat(s1) of tenant a after the implicit tenant's row was damaged: %v", err)
		}
	})

	t.Run("a handle is its view's only", func(t *testing.T) {
		root := b(t)
		a, err := root.Tenant("a")
		must(t, err)
		store(t, a, "a", "s1", 1)
		store(t, root, "", "s1", 1)
		o, err := a.Open(t.Context(), "s1", sdk.AccessRead)
		must(t, err)
		err = root.Read(t.Context(), o.Handle, 0, -1, func([][]byte) error { return nil })
		persistencetest.RequireCode(t, err, sdk.CodeHandleClosed)
		must(t, root.Close(t.Context(), o.Handle))
		if got := persistencetest.ReadAll(t, a, o.Handle); len(got) != 1 {
			t.Fatalf("the handle of tenant a reads %d events after the implicit tenant closed its name; want 1", len(got))
		}
	})

	t.Run("holds, deletes and the audit log are the tenant's", func(t *testing.T) {
		root := b(t)
		views := tenantViews(t, root)
		for _, p := range views {
			store(t, p.p, p.tenant, "s1", 1)
		}
		a, bv := views[1].p.(Backend), views[2].p.(Backend)
		_, _, err := a.SetHold(t.Context(), "s1", true, sdk.AuditRequest{By: sdk.ByCLI, Reason: "legal"})
		must(t, err)
		if held, err := bv.Held(t.Context(), "s1"); err != nil || held {
			t.Fatalf("Held(s1) of tenant b after tenant a held its s1 = %t, %v; want false", held, err)
		}
		if _, err := bv.Delete(t.Context(), "s1", sdk.AuditRequest{By: sdk.ByCLI, Reason: "gone"}); err != nil {
			t.Fatalf("Delete(s1) of tenant b while tenant a holds its s1: %v", err)
		}
		_, err = a.Delete(t.Context(), "s1", sdk.AuditRequest{By: sdk.ByCLI})
		persistencetest.RequireCode(t, err, sdk.CodeSessionHeld)
		for _, p := range []sdk.Persistence{root, a} {
			if _, err := p.Stat(t.Context(), "s1"); err != nil {
				t.Fatalf("Stat(s1) after tenant b deleted its s1: %v", err)
			}
		}
		for _, c := range []struct {
			d    sdk.Deleter
			want []sdk.AuditOp
		}{{root, nil}, {a, []sdk.AuditOp{sdk.AuditHold}}, {bv, []sdk.AuditOp{sdk.AuditDelete}}} {
			var ops []sdk.AuditOp
			must(t, c.d.Audit(t.Context(), func(r sdk.AuditRecord) error { ops = append(ops, r.Op); return nil }))
			if !slices.Equal(ops, c.want) {
				t.Fatalf("audit log = %v; want %v", ops, c.want)
			}
		}
		var names []string
		must(t, root.Tenants(t.Context(), func(n string) error { names = append(names, n); return nil }))
		if !slices.Equal(names, []string{"a"}) {
			t.Fatalf("Tenants after tenant b deleted its only session = %v; want [a]", names)
		}
	})

	t.Run("CopyPrefix copies within the tenant", func(t *testing.T) {
		root := b(t)
		store(t, root, "", "s1", 3)
		av, err := root.Tenant("a")
		must(t, err)
		a := av.(Backend)
		store(t, a, "a", "s1", 1)
		_, err = a.CopyPrefix(t.Context(), "s1", 2, sdk.Header{ID: "c1", Tenant: "a", CreatedAt: 1})
		persistencetest.RequireCode(t, err, sdk.CodeInvalidBoundary)
		o, err := a.CopyPrefix(t.Context(), "s1", 0, sdk.Header{ID: "c1", Tenant: "a", CreatedAt: 1})
		must(t, err)
		must(t, a.Close(t.Context(), o.Handle))
		if st, err := a.Stat(t.Context(), "c1"); err != nil || st.EventCount != 1 {
			t.Fatalf("Stat(c1) of tenant a = %+v, %v; want 1 event", st, err)
		}
		_, err = root.Stat(t.Context(), "c1")
		persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
	})

	t.Run("a watch wakes for its tenant's session only", func(t *testing.T) {
		root := b(t)
		av, err := root.Tenant("a")
		must(t, err)
		a := av.(Backend)
		store(t, root, "", "s1", 1)
		store(t, a, "a", "s1", 1)
		wr, wa := writer(t, root, "s1"), writer(t, a, "s1")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		got := make(chan sdk.Offset, 4)
		done := make(chan error, 1)
		go func() {
			done <- a.Watch(ctx, "s1", 2, func(n sdk.Offset) error { got <- n; return nil })
		}()
		appendAt(t, root, wr, 1, 3) // the implicit tenant's s1 grows to 4
		select {
		case n := <-got:
			t.Fatalf("the watch of a/s1 reported %d after the implicit tenant's s1 grew", n)
		case <-time.After(500 * time.Millisecond):
		}
		appendAt(t, a, wa, 1, 1)
		select {
		case n := <-got:
			if n != 2 {
				t.Fatalf("the watch of a/s1 reported %d; want 2", n)
			}
		case err := <-done:
			t.Fatalf("the watch ended: %v", err)
		case <-ctx.Done():
			t.Fatal("the watch of a/s1 never reported its append")
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("the watch ended with %v; want context.Canceled", err)
		}
	})
}

// view is one tenant's Persistence.
type view struct {
	tenant string // Header.Tenant
	p      sdk.Persistence
}

// tenantViews are the implicit tenant's and tenants a's and b's views.
func tenantViews(t *testing.T, root Backend) []view {
	t.Helper()
	a, err := root.Tenant("a")
	must(t, err)
	b, err := root.Tenant("b")
	must(t, err)
	return []view{{"", root}, {"a", a}, {"b", b}}
}

// store stores session id in p (Header.Tenant tenant) with n events.
func store(t *testing.T, p sdk.Persistence, tenant, id string, n int) {
	t.Helper()
	o, err := p.Create(t.Context(), sdk.Header{ID: id, Tenant: tenant, CreatedAt: 1})
	must(t, err)
	appendAt(t, p, o.Handle, 0, n)
	must(t, p.Close(t.Context(), o.Handle))
}

// writer opens session id of p for writing, closed when the test ends.
func writer(t *testing.T, p sdk.Persistence, id string) string {
	t.Helper()
	o, err := p.Open(t.Context(), id, sdk.AccessWrite)
	must(t, err)
	t.Cleanup(func() { p.Close(context.Background(), o.Handle) })
	return o.Handle
}

// appendAt appends n events from seq first through the write handle.
func appendAt(t *testing.T, p sdk.Persistence, handle string, first, n int) {
	t.Helper()
	if _, err := p.Append(t.Context(), handle, sdk.Seq(first), persistencetest.Batch(first, n)); err != nil {
		t.Fatalf("Append(%d events at %d): %v", n, first, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
