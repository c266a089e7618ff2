package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

const faultRoot = "/data/sessions"

// faultBackend returns a backend over a fresh faultfs.FS.
func faultBackend(t *testing.T, comp string) (*Backend, *faultfs.FS, Config) {
	t.Helper()
	ffs := faultfs.New()
	cfg := Config{Root: faultRoot, Compression: comp}
	return newTestBackend(t, cfg, WithFS(ffs)), ffs, cfg
}

func ffsRead(t *testing.T, ffs *faultfs.FS, path string) []byte {
	t.Helper()
	data, err := ffs.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAppendFaultsRollBack: ENOSPC and EIO on the write, a short write,
// and ENOSPC and EIO on the fdatasync each fail the Append with a
// retryable IO_ERROR, leave the file at its previous size with the stored
// events unchanged, and a retry of the same batch succeeds once the fault
// clears.
func TestAppendFaultsRollBack(t *testing.T) {
	faults := []struct {
		name  string
		fault faultfs.Fault
	}{
		{"ENOSPC on write", faultfs.Fault{Op: faultfs.OpWrite, Err: syscall.ENOSPC}},
		{"EIO on write", faultfs.Fault{Op: faultfs.OpWrite, Err: syscall.EIO}},
		{"short write", faultfs.Fault{Op: faultfs.OpWrite, Err: syscall.ENOSPC, Keep: 7}},
		{"ENOSPC on fsync", faultfs.Fault{Op: faultfs.OpSync, Err: syscall.ENOSPC, Times: 1}},
		{"EIO on fsync", faultfs.Fault{Op: faultfs.OpSync, Err: syscall.EIO, Times: 1}},
	}
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		for _, f := range faults {
			t.Run(comp+"/"+f.name, func(t *testing.T) {
				b, ffs, cfg := faultBackend(t, comp)
				o, err := b.Create(t.Context(), testHeader("s1"))
				if err != nil {
					t.Fatal(err)
				}
				first := persistencetest.Batch(0, 3)
				d0, err := b.Append(t.Context(), o.Handle, 0, first)
				if err != nil {
					t.Fatal(err)
				}
				path := sessionLog(cfg, "s1")
				before := ffsRead(t, ffs, path)

				fault := f.fault
				fault.Name = logName(sdk.FormatVersion, comp == CompressionZstd)
				remove := ffs.Inject(fault)
				batch := persistencetest.Batch(3, 4)
				_, err = b.Append(t.Context(), o.Handle, 3, batch)
				persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1", path)
				if !sdk.Retryable(err) || !errors.Is(err, fault.Err) {
					t.Fatalf("got %v; want a retryable IO_ERROR wrapping %v", err, fault.Err)
				}
				if got := ffsRead(t, ffs, path); !bytes.Equal(got, before) {
					t.Fatalf("after the failed append the file has %d bytes; want the previous %d", len(got), len(before))
				}
				requireEqualEvents(t, "the write handle after the failure", persistencetest.ReadAll(t, b, o.Handle), first)
				if d, err := b.Flush(t.Context(), o.Handle); err != nil || d.NextSeq != 3 {
					t.Fatalf("Flush after the failure = %+v, %v; want next seq 3", d, err)
				}
				remove()

				d, err := b.Append(t.Context(), o.Handle, 3, batch)
				if err != nil {
					t.Fatalf("retry after the fault cleared: %v", err)
				}
				if d.NextSeq != 7 || d.Revision == d0.Revision {
					t.Fatalf("retry = %+v; want next seq 7 and a new revision", d)
				}
				b.Close(t.Context(), o.Handle)
				_, events := readEvents(t, b, "s1", sdk.AccessRead)
				requireEqualEvents(t, "stored after the retry", events, append(first, batch...))
			})
		}
	}
}

// TestFailedRollbackBreaksTheHandle: when the write fails and cutting the
// file back fails too, the Append is HANDLE_BROKEN joining both errors, and
// so is every later call on the handle but Close; Close releases the
// claim, and a new write open cuts the unknown tail and goes on.
func TestFailedRollbackBreaksTheHandle(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			b, ffs, _ := faultBackend(t, comp)
			o, err := b.Create(t.Context(), testHeader("s1"))
			if err != nil {
				t.Fatal(err)
			}
			first := persistencetest.Batch(0, 2)
			if _, err := b.Append(t.Context(), o.Handle, 0, first); err != nil {
				t.Fatal(err)
			}
			name := logName(sdk.FormatVersion, comp == CompressionZstd)
			ffs.Inject(faultfs.Fault{Op: faultfs.OpWrite, Name: name, Err: syscall.EIO, Keep: 5, Times: 1})
			rmTrunc := ffs.Inject(faultfs.Fault{Op: faultfs.OpTruncate, Name: name, Err: syscall.EROFS})
			_, err = b.Append(t.Context(), o.Handle, 2, persistencetest.Batch(2, 2))
			persistencetest.RequireCode(t, err, sdk.CodeHandleBroken, "s1", o.Handle)
			if !errors.Is(err, syscall.EIO) || !errors.Is(err, syscall.EROFS) || sdk.Retryable(err) {
				t.Fatalf("got %v; want a final HANDLE_BROKEN joining EIO and EROFS", err)
			}
			rmTrunc()
			_, err = b.Append(t.Context(), o.Handle, 2, persistencetest.Batch(2, 2))
			persistencetest.RequireCode(t, err, sdk.CodeHandleBroken, o.Handle)
			err = b.Read(t.Context(), o.Handle, 0, -1, func([][]byte) error { return nil })
			persistencetest.RequireCode(t, err, sdk.CodeHandleBroken, o.Handle)
			_, err = b.Flush(t.Context(), o.Handle)
			persistencetest.RequireCode(t, err, sdk.CodeHandleBroken, o.Handle)
			if err := b.Close(t.Context(), o.Handle); err != nil {
				t.Fatal(err)
			}
			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			if err != nil {
				t.Fatalf("Open(write) after closing the broken handle: %v", err)
			}
			if w.NextSeq != 2 || w.Torn.Bytes != 5 || w.Torn.FromSeq != 2 {
				t.Fatalf("Open(write) = %+v; want next seq 2 and the 5 written bytes cut", w)
			}
			if _, err := b.Append(t.Context(), w.Handle, 2, persistencetest.Batch(2, 2)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCrashKeepsOnlyAcknowledgedBatches: a crash during an Append (after
// its write, before its fsync completes) loses that batch and nothing
// else: a backend started after the crash sees exactly the acknowledged
// batches, with no torn tail, and appends after them.
func TestCrashKeepsOnlyAcknowledgedBatches(t *testing.T) {
	crashes := []struct {
		name  string
		fault faultfs.Fault
	}{
		{"at the fsync", faultfs.Fault{Op: faultfs.OpSync, Crash: true, Times: 1}},
		{"inside the write", faultfs.Fault{Op: faultfs.OpWrite, Keep: 9, Crash: true, Times: 1}},
	}
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		for _, c := range crashes {
			t.Run(comp+"/"+c.name, func(t *testing.T) {
				b, ffs, cfg := faultBackend(t, comp)
				o, err := b.Create(t.Context(), testHeader("s1"))
				if err != nil {
					t.Fatal(err)
				}
				var acked [][]byte
				for first := 0; first < 9; first += 3 {
					batch := persistencetest.Batch(first, 3)
					if _, err := b.Append(t.Context(), o.Handle, sdk.Seq(first), batch); err != nil {
						t.Fatal(err)
					}
					acked = append(acked, batch...)
				}
				fault := c.fault
				fault.Name = logName(sdk.FormatVersion, comp == CompressionZstd)
				ffs.Inject(fault)
				if _, err := b.Append(t.Context(), o.Handle, 9, persistencetest.Batch(9, 3)); err == nil {
					t.Fatal("the append the crash interrupted succeeded")
				}

				after := newTestBackend(t, cfg, WithFS(ffs)) // the process after the reboot
				w, err := after.Open(t.Context(), "s1", sdk.AccessWrite)
				if err != nil {
					t.Fatal(err)
				}
				if w.NextSeq != 9 || w.Torn != (sdk.Torn{}) {
					t.Fatalf("Open(write) after the crash = next seq %d, torn %+v; want 9 and none", w.NextSeq, w.Torn)
				}
				requireEqualEvents(t, "after the crash", persistencetest.ReadAll(t, after, w.Handle), acked)
				if _, err := after.Append(t.Context(), w.Handle, 9, persistencetest.Batch(9, 3)); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// TestCrashDuringMaterialization: a session whose materialization crashed
// before its directory was synced does not exist afterwards (docs/plugins.md
// visibility) and can be created again; the temp file a crash leaves is
// removed by the next write open.
func TestCrashDuringMaterialization(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			b, ffs, cfg := faultBackend(t, comp)
			o, err := b.Create(t.Context(), testHeader("s1"))
			if err != nil {
				t.Fatal(err)
			}
			ffs.Inject(faultfs.Fault{Op: faultfs.OpSyncDir, Name: EncodeID("s1"), Crash: true, Times: 1})
			_, err = b.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 2))
			persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")

			after := newTestBackend(t, cfg, WithFS(ffs))
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				_, err := after.Open(t.Context(), "s1", a)
				persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
			}
			n := 0
			after.List(t.Context(), func(sdk.ListEntry) error { n++; return nil })
			if n != 0 {
				t.Fatalf("List after the crash has %d entries; want none", n)
			}
			storeEvents(t, after, "s1", persistencetest.Batch(0, 2))
			_, events := readEvents(t, after, "s1", sdk.AccessRead)
			requireEqualEvents(t, "created again", events, persistencetest.Batch(0, 2))

			// A temp file left behind goes at the next write open, not at a
			// read open.
			log := sessionLog(cfg, "s1")
			tmp := filepath.Join(filepath.Dir(log), "."+filepath.Base(log)+".0123456789ab.tmp") // as sdk/durable names it
			if err := ffs.WriteFile(tmp, []byte("partial"), 0o600); err != nil {
				t.Fatal(err)
			}
			readEvents(t, after, "s1", sdk.AccessRead)
			if _, err := ffs.Stat(tmp); err != nil {
				t.Fatal("a read open removed the temp file")
			}
			readEvents(t, after, "s1", sdk.AccessWrite)
			if _, err := ffs.Stat(tmp); err == nil {
				t.Fatal("the write open left the stale temp file")
			}
		})
	}
}

// TestMaterializationFaultsStoreNothing: a failure anywhere in
// materialization (ENOSPC on the temp file, a failed fsync, a failed
// link, a failed directory fsync) is IO_ERROR with nothing stored and no
// temp file left; the same handle materializes once the fault clears.
func TestMaterializationFaultsStoreNothing(t *testing.T) {
	for _, f := range []faultfs.Fault{
		{Op: faultfs.OpWrite, Name: "*.tmp", Err: syscall.ENOSPC},
		{Op: faultfs.OpSync, Name: "*.tmp", Err: syscall.EIO},
		{Op: faultfs.OpLink, Err: syscall.EIO},
		{Op: faultfs.OpSyncDir, Name: EncodeID("s1"), Err: syscall.EIO},
	} {
		t.Run(string(f.Op)+" "+f.Name, func(t *testing.T) {
			b, ffs, cfg := faultBackend(t, CompressionZstd)
			o, err := b.Create(t.Context(), testHeader("s1"))
			if err != nil {
				t.Fatal(err)
			}
			remove := ffs.Inject(f)
			_, err = b.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 1))
			persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")
			_, err = b.Stat(t.Context(), "s1")
			persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
			if names, _ := ffs.ReadDir(cfg.Root + "/" + EncodeID("s1")); len(names) > 1 {
				t.Fatalf("after the failure the session directory holds %v; want at most session.lock", names)
			}
			remove()
			if _, err := b.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 1)); err != nil {
				t.Fatalf("retry: %v", err)
			}
		})
	}
}

// TestCreateFaultsClaimNothing: Create makes the session directory and
// takes its lock before it returns; when either fails it is IO_ERROR, and
// neither this instance nor another is left believing the id is claimed.
func TestCreateFaultsClaimNothing(t *testing.T) {
	for _, f := range []faultfs.Fault{
		{Op: faultfs.OpMkdir, Err: syscall.ENOSPC},
		{Op: faultfs.OpSyncDir, Err: syscall.EIO},
		{Op: faultfs.OpOpen, Name: lockName, Err: syscall.ENOSPC},
		{Op: faultfs.OpLock, Err: syscall.EIO},
	} {
		t.Run(string(f.Op)+" "+f.Name, func(t *testing.T) {
			b, ffs, cfg := faultBackend(t, CompressionZstd)
			remove := ffs.Inject(f)
			_, err := b.Create(t.Context(), testHeader("s1"))
			persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")
			remove()
			other := newTestBackend(t, cfg, WithFS(ffs))
			o, err := other.Create(t.Context(), testHeader("s1"))
			if err != nil {
				t.Fatalf("Create in another instance after the failed one: %v", err)
			}
			if _, err := other.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 1)); err != nil {
				t.Fatal(err)
			}
			_, err = b.Create(t.Context(), testHeader("s1"))
			persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		})
	}
}

// TestCrashBeforeMaterializationLeavesNothing: a crash after Create (which
// made the directory and its lock) but before the first Append leaves no
// session: another backend does not see it, and can create it.
func TestCrashBeforeMaterializationLeavesNothing(t *testing.T) {
	b, ffs, cfg := faultBackend(t, CompressionNone)
	if _, err := b.Create(t.Context(), testHeader("s1")); err != nil {
		t.Fatal(err)
	}
	ffs.Crash()
	after := newTestBackend(t, cfg, WithFS(ffs))
	_, err := after.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := after.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	}
	storeEvents(t, after, "s1", persistencetest.Batch(0, 2))
	_, events := readEvents(t, after, "s1", sdk.AccessRead)
	requireEqualEvents(t, "created after the crash", events, persistencetest.Batch(0, 2))
}

// TestFailedRepairLeavesNoArtifact: a write open that cannot keep the torn
// tail (the disk is full while the artifact is written, or its fsync
// fails) is IO_ERROR and leaves no torn-*.bin behind, empty or partial:
// nothing was cut, so the log itself still holds those bytes.
func TestFailedRepairLeavesNoArtifact(t *testing.T) {
	for _, f := range []faultfs.Fault{
		{Op: faultfs.OpWrite, Name: ".torn-*.bin.*.tmp", Err: syscall.ENOSPC},
		{Op: faultfs.OpWrite, Name: ".torn-*.bin.*.tmp", Err: syscall.ENOSPC, Keep: 2},
		{Op: faultfs.OpSync, Name: ".torn-*.bin.*.tmp", Err: syscall.EIO},
		{Op: faultfs.OpSyncDir, Name: EncodeID("s1"), Err: syscall.EIO},
		{Op: faultfs.OpTruncate, Name: "events.*", Err: syscall.EIO},
	} {
		t.Run(fmt.Sprintf("%s %s keep %d", f.Op, f.Name, f.Keep), func(t *testing.T) {
			b, ffs, cfg := faultBackend(t, CompressionNone)
			storeEvents(t, b, "s1", persistencetest.Batch(0, 3))
			path := sessionLog(cfg, "s1")
			data := ffsRead(t, ffs, path)
			torn := data[:len(data)-4]
			if err := ffs.WriteFile(path, torn, 0o600); err != nil {
				t.Fatal(err)
			}
			remove := ffs.Inject(f)
			_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")
			dir := filepath.Join(cfg.Root, EncodeID("s1"))
			names, err := ffs.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if strings.Contains(n, "torn-") { // the artifact, or its temp file
					t.Fatalf("the failed repair left %s in %s", n, names)
				}
			}
			if got := ffsRead(t, ffs, path); !bytes.Equal(got, torn) {
				t.Fatal("the failed repair changed the log")
			}
			remove()
			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			if err != nil || w.NextSeq != 2 || w.Torn.Artifact == "" {
				t.Fatalf("Open(write) after the fault cleared = %+v, %v", w, err)
			}
			if got := ffsRead(t, ffs, w.Torn.Artifact); !bytes.Equal(got, torn[len(torn)-int(w.Torn.Bytes):]) {
				t.Fatalf("the artifact holds %q; want the torn bytes", got)
			}
		})
	}
}

// TestRepairFaultsChangeNothing: when keeping the torn tail fails, the
// write open is IO_ERROR, takes no claim and leaves the log as it was.
func TestRepairFaultsChangeNothing(t *testing.T) {
	b, ffs, cfg := faultBackend(t, CompressionNone)
	storeEvents(t, b, "s1", persistencetest.Batch(0, 3))
	path := sessionLog(cfg, "s1")
	data := ffsRead(t, ffs, path)
	if err := ffs.WriteFile(path, data[:len(data)-4], 0o600); err != nil {
		t.Fatal(err)
	}
	remove := ffs.Inject(faultfs.Fault{Op: faultfs.OpSync, Name: ".torn-*.bin.*.tmp", Err: syscall.EIO})
	_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeIOError, "s1")
	if got := ffsRead(t, ffs, path); len(got) != len(data)-4 {
		t.Fatal("the failed repair changed the log")
	}
	remove()
	w, err := b.Open(t.Context(), "s1", sdk.AccessWrite) // no claim was left behind
	if err != nil || w.NextSeq != 2 || w.Torn.Bytes == 0 {
		t.Fatalf("Open(write) after the fault cleared = %+v, %v", w, err)
	}
}
