package jsonl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// view returns b's view of tenant name as the *Backend it is.
func view(t testing.TB, b *Backend, name string) *Backend {
	t.Helper()
	p, err := b.Tenant(name)
	if err != nil {
		t.Fatalf("Tenant(%q): %v", name, err)
	}
	v, ok := p.(*Backend)
	if !ok {
		t.Fatalf("Tenant(%q) = %T; want *Backend", name, p)
	}
	return v
}

// tenantHeader is testHeader of id in the tenant named name.
func tenantHeader(id, name string) sdk.Header {
	h := testHeader(id)
	h.Tenant = sdk.HeaderTenant(name)
	return h
}

// storeIn creates id in the view v (of the tenant named name) with the
// given batches and closes it.
func storeIn(t testing.TB, v *Backend, name, id string, batches ...[][]byte) {
	t.Helper()
	o, err := v.Create(t.Context(), tenantHeader(id, name))
	if err != nil {
		t.Fatalf("Create(%q) in tenant %q: %v", id, name, err)
	}
	next := sdk.Seq(0)
	for _, batch := range batches {
		if _, err := v.Append(t.Context(), o.Handle, next, batch); err != nil {
			t.Fatal(err)
		}
		next += sdk.Seq(len(batch))
	}
	if _, err := v.Flush(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
}

// listed returns the entries of v's List.
func listed(t testing.TB, v *Backend) []sdk.ListEntry {
	t.Helper()
	var out []sdk.ListEntry
	if err := v.List(t.Context(), func(e sdk.ListEntry) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// tenantsOf returns what b's Tenants lists.
func tenantsOf(t testing.TB, b *Backend) []string {
	t.Helper()
	var out []string
	if err := b.Tenants(t.Context(), func(n string) error { out = append(out, n); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTenantLayout: the implicit tenant's sessions stay in the root, a
// named tenant's live in <root>/.tenants/<name>/ with its header naming the
// tenant right after "id"; the same id in two tenants is two sessions; List
// of each tenant shows its own sessions only (the root's List neither shows
// .tenants as a session nor as a damaged entry); Tenants lists the named
// tenants holding sessions, ascending.
func TestTenantLayout(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			storeIn(t, b, sdk.DefaultTenant, "s1", persistencetest.Batch(0, 3))
			storeIn(t, view(t, b, "b"), "b", "s1", persistencetest.Batch(0, 1))
			storeIn(t, view(t, b, "a"), "a", "s1", persistencetest.Batch(0, 2))
			storeIn(t, view(t, b, "a"), "a", "s2")

			if _, err := os.Stat(sessionLog(cfg, "s1")); err != nil {
				t.Fatalf("the implicit tenant's session is not where it was before tenants: %v", err)
			}
			aLog := sessionLog(Config{Root: filepath.Join(cfg.Root, ".tenants", "a"), Compression: comp}, "s1")
			_, zst, us := logUnits(t, aLog)
			data := mustRead(t, aLog)
			hdr := data[:us[0][1]]
			if zst {
				hdr = decodeUnits(t, data)[0]
			}
			if !bytes.Contains(hdr, []byte(`"id":"s1","tenant":"a","createdAt"`)) {
				t.Fatalf("tenant a's header = %s; want \"tenant\":\"a\" right after \"id\"", hdr)
			}
			for _, c := range []struct {
				name string
				v    *Backend
				ids  []string
				n    int
			}{{sdk.DefaultTenant, b, []string{"s1"}, 3}, {"a", view(t, b, "a"), []string{"s1", "s2"}, 2}, {"b", view(t, b, "b"), []string{"s1"}, 1}} {
				var ids []string
				for _, e := range listed(t, c.v) {
					if e.Err != nil {
						t.Fatalf("tenant %s lists %q with %v", c.name, e.ID, e.Err)
					}
					if e.Header.Tenant != sdk.HeaderTenant(c.name) {
						t.Fatalf("tenant %s lists %q with Header.Tenant %q", c.name, e.ID, e.Header.Tenant)
					}
					ids = append(ids, e.ID)
				}
				if !slices.Equal(ids, c.ids) {
					t.Fatalf("tenant %s lists %v; want %v", c.name, ids, c.ids)
				}
				o, events := readEvents(t, c.v, "s1", sdk.AccessRead)
				if len(events) != c.n || o.Header.Tenant != sdk.HeaderTenant(c.name) {
					t.Fatalf("tenant %s's s1: %d events, Header.Tenant %q; want %d, %q", c.name, len(events), o.Header.Tenant, c.n, sdk.HeaderTenant(c.name))
				}
				st, err := c.v.Stat(t.Context(), "s1")
				if err != nil || st.Header.Tenant != sdk.HeaderTenant(c.name) {
					t.Fatalf("tenant %s: Stat(s1) = %+v, %v", c.name, st, err)
				}
			}
			if got := tenantsOf(t, b); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("Tenants = %v; want [a b]", got)
			}
		})
	}
}

// TestTenantsListsOnlyTenantsHoldingSessions: a tenant directory with no
// stored session (a create never stored, or all its sessions deleted), a
// file or a directory that is no tenant name under .tenants are not
// listed.
func TestTenantsListsOnlyTenantsHoldingSessions(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	if got := tenantsOf(t, b); len(got) != 0 {
		t.Fatalf("Tenants of an empty root = %v", got)
	}
	o, err := view(t, b, "pending").Create(t.Context(), tenantHeader("s1", "pending"))
	if err != nil {
		t.Fatal(err)
	}
	storeIn(t, view(t, b, "gone"), "gone", "s1", persistencetest.Batch(0, 1))
	if _, err := view(t, b, "gone").Delete(t.Context(), "s1", sdk.AuditRequest{Reason: "test", By: "test"}); err != nil {
		t.Fatal(err)
	}
	storeIn(t, view(t, b, "z9"), "z9", "s1")
	for _, stray := range []string{"Upper", "default", "-x"} {
		if err := os.MkdirAll(filepath.Join(cfg.Root, ".tenants", stray, "s1"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg.Root, ".tenants", stray, "s1", logName(sdk.FormatVersion, false)), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cfg.Root, ".tenants", "file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := tenantsOf(t, b); !slices.Equal(got, []string{"z9"}) {
		t.Fatalf("Tenants = %v; want [z9]", got)
	}
	if err := view(t, b, "pending").Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := b.Tenants(t.Context(), func(string) error { return stop }); err != stop {
		t.Fatalf("Tenants returned %v; want fn's error as it is", err)
	}
	if got := listed(t, b); len(got) != 0 {
		t.Fatalf("the implicit tenant lists %+v; want nothing (.tenants is no session)", got)
	}
}

// TestTenantNames: Tenant refuses an invalid name and the implicit
// tenant's (TENANT_INVALID), and returns one view per name from every view.
func TestTenantNames(t *testing.T) {
	b := newTestBackend(t, Config{Root: t.TempDir()})
	for _, name := range []string{"", "A", "-a", "a_b", "default", string(make([]byte, 64))} {
		_, err := b.Tenant(name)
		persistencetest.RequireCode(t, err, sdk.CodeTenantInvalid)
	}
	a := view(t, b, "a")
	if view(t, b, "a") != a || view(t, view(t, b, "b"), "a") != a || view(t, a, "a") != a {
		t.Fatal("Tenant(\"a\") returned different views")
	}
	if a == b {
		t.Fatal("tenant a's view is the implicit tenant's")
	}
}

// TestTenantHeaderOfAnotherTenantIsUsage: a view's Create, CopyPrefix and
// Import refuse a header naming another tenant (the implicit one too) with
// USAGE and create nothing.
func TestTenantHeaderOfAnotherTenantIsUsage(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	a := view(t, b, "a")
	storeIn(t, a, "a", "src", persistencetest.Batch(0, 2))
	storeIn(t, b, sdk.DefaultTenant, "src", persistencetest.Batch(0, 2))
	before := treeOf(t, cfg.Root)
	noEvents := func(func([][]byte) error) error { return nil }
	for _, c := range []struct {
		view   *Backend
		tenant string // the header's
	}{{a, ""}, {a, "b"}, {b, "a"}} {
		_, err := c.view.Create(t.Context(), tenantHeader("s1", sdk.TenantName(c.tenant)))
		persistencetest.RequireCode(t, err, sdk.CodeUsage, `tenant "`+sdk.TenantName(c.tenant)+`"`, `tenant "`+sdk.TenantName(c.view.tenant)+`"`)
		_, err = c.view.CopyPrefix(t.Context(), "src", 0, tenantHeader("s1", sdk.TenantName(c.tenant)))
		persistencetest.RequireCode(t, err, sdk.CodeUsage)
		_, err = c.view.Import(t.Context(), tenantHeader("s1", sdk.TenantName(c.tenant)), noEvents)
		persistencetest.RequireCode(t, err, sdk.CodeUsage)
	}
	if after := treeOf(t, cfg.Root); !slices.Equal(after, before) {
		t.Fatalf("refused creates changed the root:\n%v\nwas\n%v", after, before)
	}
}

// treeOf lists every path under root.
func treeOf(t testing.TB, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ os.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStoredHeaderOfAnotherTenantIsCorrupt: a session directory copied
// into another tenant's directory (or between a tenant and the root) is
// CORRUPT_LOG naming the file and both tenants, at Open, Stat, List and
// ReadDamaged; Create of its id there is SESSION_ALREADY_EXISTS.
func TestStoredHeaderOfAnotherTenantIsCorrupt(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			storeIn(t, view(t, b, "a"), "a", "s1", persistencetest.Batch(0, 2))
			storeIn(t, b, sdk.DefaultTenant, "s2", persistencetest.Batch(0, 2))
			for _, c := range []struct {
				id, from, to string
			}{{"s1", "a", "b"}, {"s1", "a", sdk.DefaultTenant}, {"s2", sdk.DefaultTenant, "b"}} {
				fromDir := filepath.Join(tenantRoot(cfg.Root, sdk.HeaderTenant(c.from)), EncodeID(c.id))
				toDir := filepath.Join(tenantRoot(cfg.Root, sdk.HeaderTenant(c.to)), EncodeID(c.id))
				copyDir(t, fromDir, toDir)
				v := b
				if c.to != sdk.DefaultTenant {
					v = view(t, b, c.to)
				}
				path := filepath.Join(toDir, logName(sdk.FormatVersion, comp == CompressionZstd))
				want := []any{path, `tenant "` + c.from + `"`, `tenant "` + c.to + `"`}
				for _, access := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
					_, err := v.Open(t.Context(), c.id, access)
					persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
				}
				_, err := v.Stat(t.Context(), c.id)
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
				_, err = v.ReadDamaged(t.Context(), c.id, func([][]byte) error { return nil })
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, want...)
				var entry *sdk.ListEntry
				for _, e := range listed(t, v) {
					if e.ID == c.id {
						entry = &e
					}
				}
				if entry == nil {
					t.Fatalf("tenant %s does not list the copied %s", c.to, c.id)
				}
				persistencetest.RequireCode(t, entry.Err, sdk.CodeCorruptLog, want...)
				_, err = v.Create(t.Context(), tenantHeader(c.id, c.to))
				persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists)
				if err := os.RemoveAll(toDir); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// copyDir copies the files of the directory from into to, made 0700.
func copyDir(t testing.TB, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.WriteFile(filepath.Join(to, e.Name()), mustRead(t, filepath.Join(from, e.Name())), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTenantHandlesAreScoped: a handle works only through the view that
// opened it; through another it is HANDLE_CLOSED and Close is a no-op.
func TestTenantHandlesAreScoped(t *testing.T) {
	b := newTestBackend(t, Config{Root: t.TempDir()})
	a := view(t, b, "a")
	o, err := a.Create(t.Context(), tenantHeader("s1", "a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []*Backend{b, view(t, b, "b")} {
		_, err := other.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 1))
		persistencetest.RequireCode(t, err, sdk.CodeHandleClosed)
		_, err = other.Flush(t.Context(), o.Handle)
		persistencetest.RequireCode(t, err, sdk.CodeHandleClosed)
		if err := other.Close(t.Context(), o.Handle); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 1)); err != nil {
		t.Fatalf("the handle no longer works in its own view: %v", err)
	}
	err = b.Configure(t.Context(), []byte(`{"root":"`+t.TempDir()+`"}`))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "1 open handles")
	if err := a.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
}

// TestTenantClaimsAcrossProcesses: two backends over one root (the flock
// of session.lock stands between them as between processes) refuse each
// other's claim on an id in the same tenant, and not in another tenant.
func TestTenantClaimsAcrossProcesses(t *testing.T) {
	cfg := Config{Root: t.TempDir()}
	p1, p2 := newTestBackend(t, cfg), newTestBackend(t, cfg)
	o, err := view(t, p1, "a").Create(t.Context(), tenantHeader("s1", "a"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = view(t, p2, "a").Create(t.Context(), tenantHeader("s1", "a"))
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists)
	_, err = view(t, p2, "a").Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned)
	storeIn(t, view(t, p2, "b"), "b", "s1", persistencetest.Batch(0, 1))
	storeIn(t, p2, sdk.DefaultTenant, "s1", persistencetest.Batch(0, 1))
	if _, err := view(t, p1, "a").Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 2)); err != nil {
		t.Fatal(err)
	}
	w, err := view(t, p2, "b").Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatalf("tenant b's s1 is claimed by tenant a's: %v", err)
	}
	if err := view(t, p2, "b").Close(t.Context(), w.Handle); err != nil {
		t.Fatal(err)
	}
	if err := view(t, p1, "a").Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	if _, events := readEvents(t, view(t, p2, "a"), "s1", sdk.AccessRead); len(events) != 2 {
		t.Fatalf("tenant a's s1 holds %d events; want 2", len(events))
	}
}

// TestTenantDeleteHoldAudit: holds, deletes and the audit log are each
// tenant's own: a hold in tenant a does not hold the implicit tenant's s1,
// which its Delete removes; each tenant's Audit lists its own records, in
// its own .audit.jsonl.
func TestTenantDeleteHoldAudit(t *testing.T) {
	cfg := Config{Root: t.TempDir()}
	b := newTestBackend(t, cfg)
	a := view(t, b, "a")
	storeIn(t, a, "a", "s1", persistencetest.Batch(0, 1))
	storeIn(t, b, sdk.DefaultTenant, "s1", persistencetest.Batch(0, 1))
	r := sdk.AuditRequest{Reason: "test", By: "test"}
	if _, changed, err := a.SetHold(t.Context(), "s1", true, r); err != nil || !changed {
		t.Fatalf("SetHold in tenant a = %v, %v", changed, err)
	}
	if held, err := b.Held(t.Context(), "s1"); err != nil || held {
		t.Fatalf("the implicit tenant's s1: Held = %v, %v; want false", held, err)
	}
	if _, err := b.Delete(t.Context(), "s1", r); err != nil {
		t.Fatalf("Delete of the implicit tenant's s1: %v", err)
	}
	_, err := a.Delete(t.Context(), "s1", r)
	persistencetest.RequireCode(t, err, sdk.CodeSessionHeld)
	_, err = a.Delete(t.Context(), "s9", r)
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
	if _, err := a.Stat(t.Context(), "s1"); err != nil {
		t.Fatalf("tenant a's s1 after the implicit tenant's delete: %v", err)
	}
	audit := func(v *Backend) []sdk.AuditOp {
		var ops []sdk.AuditOp
		if err := v.Audit(t.Context(), func(rec sdk.AuditRecord) error { ops = append(ops, rec.Op); return nil }); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	if got := audit(a); !slices.Equal(got, []sdk.AuditOp{sdk.AuditHold}) {
		t.Fatalf("tenant a's audit = %v; want [hold]", got)
	}
	if got := audit(b); !slices.Equal(got, []sdk.AuditOp{sdk.AuditDelete}) {
		t.Fatalf("the implicit tenant's audit = %v; want [delete]", got)
	}
	if got := audit(view(t, b, "b")); len(got) != 0 {
		t.Fatalf("tenant b's audit = %v; want nothing", got)
	}
	for _, p := range []string{filepath.Join(cfg.Root, ".audit.jsonl"), filepath.Join(cfg.Root, ".tenants", "a", ".audit.jsonl"), filepath.Join(cfg.Root, ".tenants", "a", "s1", holdName)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTenantWatch: a Watch in tenant a reports the lengths of tenant a's
// session, never those of the same id in the implicit tenant.
func TestTenantWatch(t *testing.T) {
	b := newTestBackend(t, Config{Root: t.TempDir()})
	a := view(t, b, "a")
	storeIn(t, a, "a", "s1", persistencetest.Batch(0, 1))
	storeIn(t, b, sdk.DefaultTenant, "s1", persistencetest.Batch(0, 1))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	lengths := make(chan sdk.Offset, 16)
	done := make(chan error, 1)
	go func() {
		done <- a.Watch(ctx, "s1", 1, func(n sdk.Offset) error {
			lengths <- n
			if n == 2 {
				return errStopWatch
			}
			return nil
		})
	}()
	if n := <-lengths; n != 1 {
		t.Fatalf("the watch reported %d first; want 1", n)
	}
	w, err := b.Open(ctx, "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, w.Handle, 1, persistencetest.Batch(1, 5)); err != nil {
		t.Fatal(err)
	}
	b.Close(ctx, w.Handle)
	wa, err := a.Open(ctx, "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, wa.Handle, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatal(err)
	}
	a.Close(ctx, wa.Handle)
	if err := <-done; err != errStopWatch {
		t.Fatalf("Watch = %v", err)
	}
	close(lengths)
	var rest []sdk.Offset
	for n := range lengths {
		rest = append(rest, n)
	}
	if !slices.Equal(rest, []sdk.Offset{2}) {
		t.Fatalf("the watch reported %v after 1; want [2]: tenant a's length only", rest)
	}
}

var errStopWatch = errors.New("stop watching")

// TestTenantCopyPrefix: CopyPrefix copies within the view's tenant: the
// source is the tenant's own session, a source only another tenant holds
// is SESSION_NOT_FOUND.
func TestTenantCopyPrefix(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	a := view(t, b, "a")
	storeIn(t, a, "a", "src", persistencetest.Batch(0, 2), persistencetest.Batch(2, 2))
	o, err := a.CopyPrefix(t.Context(), "src", 2, tenantHeader("child", "a"))
	if err != nil || o.NextSeq != 3 {
		t.Fatalf("CopyPrefix in tenant a = %+v, %v", o, err)
	}
	a.Close(t.Context(), o.Handle)
	if _, events := readEvents(t, a, "child", sdk.AccessRead); len(events) != 3 {
		t.Fatalf("the child holds %d events; want 3", len(events))
	}
	_, err = b.CopyPrefix(t.Context(), "src", 0, tenantHeader("child", sdk.DefaultTenant))
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
	if _, err := b.Stat(t.Context(), "child"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("a failed CopyPrefix left the child in the implicit tenant: %v", err)
	}
}

// TestTenantDirectoryIsDurable: the tenant directory (and .tenants) is
// made durably before the first session in it is acknowledged: after a
// crash right after the acknowledgement the session is there. A crash at
// the fsync of the directory that gains .tenants or the tenant's
// directory fails the Create and leaves no session; after it the create
// succeeds, and survives the next crash.
func TestTenantDirectoryIsDurable(t *testing.T) {
	b, ffs, cfg := faultBackend(t, CompressionZstd)
	storeIn(t, view(t, b, "a"), "a", "s1", persistencetest.Batch(0, 2))
	ffs.Crash()
	after := newTestBackend(t, cfg, WithFS(ffs))
	if _, events := readEvents(t, view(t, after, "a"), "s1", sdk.AccessRead); len(events) != 2 {
		t.Fatalf("after the crash tenant a's s1 holds %d events; want 2", len(events))
	}
	if got := tenantsOf(t, after); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("Tenants after the crash = %v", got)
	}

	for _, c := range []struct{ name, synced string }{
		{"the root's fsync for .tenants", filepath.Base(cfg.Root)},
		{"the fsync of .tenants for the tenant's directory", ".tenants"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, ffs, cfg := faultBackend(t, CompressionNone)
			ffs.Inject(faultfs.Fault{Op: faultfs.OpSyncDir, Name: c.synced, Crash: true, Times: 1})
			_, err := view(t, b, "a").Create(t.Context(), tenantHeader("s1", "a"))
			persistencetest.RequireCode(t, err, sdk.CodeIOError)
			ffs.ClearFaults()
			after := newTestBackend(t, cfg, WithFS(ffs))
			if got := tenantsOf(t, after); len(got) != 0 {
				t.Fatalf("Tenants after the crash = %v; want none", got)
			}
			_, err = view(t, after, "a").Stat(t.Context(), "s1")
			persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound)
			storeIn(t, view(t, after, "a"), "a", "s1", persistencetest.Batch(0, 1))
			ffs.Crash()
			again := newTestBackend(t, cfg, WithFS(ffs))
			if _, events := readEvents(t, view(t, again, "a"), "s1", sdk.AccessRead); len(events) != 1 {
				t.Fatalf("after the second crash tenant a's s1 holds %d events; want 1", len(events))
			}
		})
	}
}

// TestTenantDirectoryMadeElsewhereIsSynced: a tenant directory another
// process made a moment ago and has not synced yet is synced by the first
// Create in it here, so the session acknowledged in it survives a crash.
func TestTenantDirectoryMadeElsewhereIsSynced(t *testing.T) {
	b, ffs, cfg := faultBackend(t, CompressionNone)
	storeIn(t, b, sdk.DefaultTenant, "s0") // the root, durably
	for _, dir := range []string{filepath.Join(cfg.Root, ".tenants"), filepath.Join(cfg.Root, ".tenants", "a")} {
		if err := ffs.Mkdir(dir, 0o700); err != nil { // the other process, before its fsync
			t.Fatal(err)
		}
	}
	storeIn(t, view(t, b, "a"), "a", "s1", persistencetest.Batch(0, 2))
	ffs.Crash()
	after := newTestBackend(t, cfg, WithFS(ffs))
	if _, events := readEvents(t, view(t, after, "a"), "s1", sdk.AccessRead); len(events) != 2 {
		t.Fatalf("after the crash tenant a's s1 holds %d events; want 2", len(events))
	}
}
