package jsonl

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// importSource yields batches of 4 events up to n events, and calls
// midway (when set) once half of them are yielded.
func importSource(n int, midway func()) func(yield func([][]byte) error) error {
	return func(yield func([][]byte) error) error {
		for first := 0; first < n; first += 4 {
			if first == n/2 && midway != nil {
				midway()
			}
			if err := yield(persistencetest.Batch(first, min(4, n-first))); err != nil {
				return err
			}
		}
		return nil
	}
}

// requireNoImport fails unless session id is invisible in b and no temp
// file of it is left in dir.
func requireNoImport(t *testing.T, b *Backend, ffs *faultfs.FS, cfg Config, id, when string) {
	t.Helper()
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Open(t.Context(), id, a)
		if !errors.Is(err, sdk.CodeSessionNotFound) {
			t.Fatalf("%s: Open(%q) = %v; want SESSION_NOT_FOUND", when, id, err)
		}
	}
	_ = b.List(t.Context(), func(e sdk.ListEntry) error {
		if e.ID == id {
			t.Fatalf("%s: List names %q", when, id)
		}
		return nil
	})
	if _, err := ffs.Stat(sessionLog(cfg, id)); err == nil {
		t.Fatalf("%s: %s exists", when, sessionLog(cfg, id))
	}
}

// TestImportOutOfSpaceMidwayStoresNothing: an import whose disk fills up
// halfway (ENOSPC on a write, a short write, ENOSPC on the fdatasync)
// fails with IO_ERROR naming the cause, leaves no log and no temp file,
// the id is not found, and a retry once space is back stores the whole
// import.
func TestImportOutOfSpaceMidwayStoresNothing(t *testing.T) {
	faults := []struct {
		name  string
		fault faultfs.Fault
	}{
		{"ENOSPC on write", faultfs.Fault{Op: faultfs.OpWrite, Name: "*.tmp", Err: syscall.ENOSPC}},
		{"short write", faultfs.Fault{Op: faultfs.OpWrite, Name: "*.tmp", Err: syscall.ENOSPC, Keep: 7}},
		{"ENOSPC on fsync", faultfs.Fault{Op: faultfs.OpSync, Name: "*.tmp", Err: syscall.ENOSPC}},
	}
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		for _, f := range faults {
			t.Run(comp+"/"+f.name, func(t *testing.T) {
				b, ffs, cfg := faultBackend(t, comp)
				var remove func()
				_, err := b.Import(t.Context(), testHeader("s1"), importSource(40, func() { remove = ffs.Inject(f.fault) }))
				persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("Import = %v; want it to wrap ENOSPC", err)
				}
				remove()
				requireNoImport(t, b, ffs, cfg, "s1", "after the failed import")
				names, _ := ffs.ReadDir(filepath.Dir(sessionLog(cfg, "s1")))
				for _, n := range names {
					if strings.HasSuffix(n, ".tmp") {
						t.Fatalf("the failed import left %s", n)
					}
				}

				o, err := b.Import(t.Context(), testHeader("s1"), importSource(40, nil))
				if err != nil {
					t.Fatalf("the retry: %v", err)
				}
				if err := b.Close(t.Context(), o.Handle); err != nil {
					t.Fatal(err)
				}
				_, events := readEvents(t, b, "s1", sdk.AccessRead)
				requireEqualEvents(t, "the retried import", events, persistencetest.Batch(0, 40))
			})
		}
	}
}

// TestImportCrashMidwayStoresNothing: a machine crash in the middle of an
// import (inside a write of its temp file, or at its fdatasync) leaves,
// after the reboot, no session: it is not found and not listed, and a
// retry stores the whole import and removes the temp file the crash left.
func TestImportCrashMidwayStoresNothing(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		for _, c := range []struct {
			name  string
			fault faultfs.Fault
		}{
			{"inside a write", faultfs.Fault{Op: faultfs.OpWrite, Name: "*.tmp", Keep: 9, Crash: true, Times: 1}},
			{"at the fdatasync", faultfs.Fault{Op: faultfs.OpSync, Name: "*.tmp", Crash: true, Times: 1}},
		} {
			fault := c.fault
			t.Run(comp+"/"+c.name, func(t *testing.T) {
				b, ffs, cfg := faultBackend(t, comp)
				midway := func() { ffs.Inject(fault) }
				if fault.Op == faultfs.OpSync {
					midway = nil // the sync comes after the last batch
					ffs.Inject(fault)
				}
				_, err := b.Import(t.Context(), testHeader("s1"), importSource(40, midway))
				persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")

				after := newTestBackend(t, cfg, WithFS(ffs)) // the process after the reboot
				requireNoImport(t, after, ffs, cfg, "s1", "after the crash")
				o, err := after.Import(t.Context(), testHeader("s1"), importSource(40, nil))
				if err != nil {
					t.Fatalf("the retry: %v", err)
				}
				if err := after.Close(t.Context(), o.Handle); err != nil {
					t.Fatal(err)
				}
				_, events := readEvents(t, after, "s1", sdk.AccessRead)
				requireEqualEvents(t, "the retried import", events, persistencetest.Batch(0, 40))
				names, _ := ffs.ReadDir(filepath.Dir(sessionLog(cfg, "s1")))
				for _, n := range names {
					if strings.HasSuffix(n, ".tmp") {
						t.Fatalf("the retry left the crash's %s", n)
					}
				}
			})
		}
	}
}
