package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

var byTest = sdk.AuditRequest{Reason: "test", By: sdk.ByAPI}

// storedSession creates id in st with one user message and releases it.
func storedSession(t *testing.T, st *Store, id string) {
	t.Helper()
	s, err := st.Create(ctx, CreateOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("hi"))
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
}

// Delete removes the session from the primary and every mirror, each
// auditing it, and the store's audit is the primary's log.
func TestDeleteRemovesTheSessionFromEveryBackend(t *testing.T) {
	primary, mirror := memory.New(), memory.New()
	st := newTestStore(t, nil, Backend{Name: "a", Persistence: primary}, Backend{Name: "b", Persistence: mirror})
	storedSession(t, st, "s1")
	rec, err := st.Delete(ctx, "s1", byTest)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if rec.Op != sdk.AuditDelete || rec.Session != "s1" || rec.Events != 1 || rec.By != sdk.ByAPI || rec.Reason != "test" {
		t.Fatalf("record %+v", rec)
	}
	for _, p := range []sdk.Persistence{primary, mirror} {
		_, err := p.Stat(ctx, "s1")
		persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	}
	var audited []sdk.AuditRecord
	if err := st.Audit(ctx, func(r sdk.AuditRecord) error { audited = append(audited, r); return nil }); err != nil || len(audited) != 1 || audited[0] != rec {
		t.Fatalf("Audit = %+v, %v; want the one record %+v", audited, err, rec)
	}
	_, err = st.Delete(ctx, "s1", byTest)
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	// The id is free again.
	storedSession(t, st, "s1")
}

// A session live in this store is ALREADY_OWNED, and nothing changes.
func TestDeleteOfALiveSessionIsALREADY_OWNED(t *testing.T) {
	p := memory.New()
	st := newTestStore(t, nil, Backend{Name: "a", Persistence: p})
	s, err := st.Create(ctx, CreateOptions{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("hi"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	_, err = st.Delete(ctx, "s1", byTest)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1", "release it first")
	if n := len(stored(t, p, "s1")); n != 1 {
		t.Fatalf("the stored log has %d events after the refused delete; want 1", n)
	}
	requireNoAudit(t, st)
}

// A held session is SESSION_HELD until the hold is released; both are
// audited in every backend.
func TestHeldSessionIsNotDeletedUntilReleased(t *testing.T) {
	primary, mirror := memory.New(), memory.New()
	st := newTestStore(t, nil, Backend{Name: "a", Persistence: primary}, Backend{Name: "b", Persistence: mirror})
	storedSession(t, st, "s1")
	if _, changed, err := st.Hold(ctx, "s1", byTest); err != nil || !changed {
		t.Fatalf("Hold = %t, %v", changed, err)
	}
	for _, p := range []*memory.Backend{primary, mirror} {
		if held, err := p.Held(ctx, "s1"); err != nil || !held {
			t.Fatalf("Held = %t, %v; want held in every backend", held, err)
		}
	}
	_, err := st.Delete(ctx, "s1", byTest)
	persistencetest.RequireCode(t, err, sdk.CodeSessionHeld, "s1", "release-hold")
	if n := len(stored(t, mirror, "s1")); n != 1 {
		t.Fatalf("the mirror holds %d events after the refused delete; want 1", n)
	}
	if _, changed, err := st.ReleaseHold(ctx, "s1", byTest); err != nil || !changed {
		t.Fatalf("ReleaseHold = %t, %v", changed, err)
	}
	if _, err := st.Delete(ctx, "s1", byTest); err != nil {
		t.Fatal(err)
	}
	var ops []sdk.AuditOp
	if err := mirror.Audit(ctx, func(r sdk.AuditRecord) error { ops = append(ops, r.Op); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0] != sdk.AuditHold || ops[1] != sdk.AuditReleaseHold || ops[2] != sdk.AuditDelete {
		t.Fatalf("the mirror's audit log is %v; want hold, release-hold, delete", ops)
	}
}

// A mirror that does not hold the session is skipped, and deleting again
// after the primary's deletion finishes on the mirror.
func TestDeleteFinishesOnTheMirrorsWhenRepeated(t *testing.T) {
	primary, mirror := memory.New(), memory.New()
	one := newTestStore(t, nil, Backend{Name: "a", Persistence: primary})
	storedSession(t, one, "s1")
	both := newTestStore(t, nil, Backend{Name: "b", Persistence: mirror})
	storedSession(t, both, "s1")
	st := newTestStore(t, nil, Backend{Name: "a", Persistence: primary}, Backend{Name: "b", Persistence: mirror})
	if _, err := primary.Delete(ctx, "s1", byTest); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Delete(ctx, "s1", byTest)
	if err != nil || rec.Session != "s1" {
		t.Fatalf("Delete after the primary's = %+v, %v; want the mirror's record", rec, err)
	}
	if _, err := mirror.Stat(ctx, "s1"); !errors.Is(err, sdk.CodeSessionNotFound) {
		t.Fatalf("the mirror still holds s1: %v", err)
	}
}

// Delete removes the salvage artifacts of the session (a salvaged child).
func TestDeleteRemovesTheSalvageArtifacts(t *testing.T) {
	p := memory.New()
	crashedLog(t, p, "src")
	if err := memory.HooksOf(p).Damage("src", 4, "frame checksum mismatch"); err != nil {
		t.Fatal(err)
	}
	st, dir := salvageStore(t, p)
	child, rep, err := st.Salvage(ctx, SalvageRequest{SourceID: "src", ChildID: "child"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, child); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "child2-1.salvaged.bin")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Delete(ctx, "child", byTest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(rep.Artifact); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the salvage artifact %s is still there: %v", rep.Artifact, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another session's artifact went too: %v", err)
	}
	// The damaged source can be deleted as well.
	if _, err := st.Delete(ctx, "src", byTest); err != nil {
		t.Fatalf("Delete of the damaged source: %v", err)
	}
}

func requireNoAudit(t *testing.T, st *Store) {
	t.Helper()
	n := 0
	if err := st.Audit(ctx, func(sdk.AuditRecord) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("the audit log holds %d records (%v); want none", n, err)
	}
}
