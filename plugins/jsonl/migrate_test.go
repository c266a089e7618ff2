package jsonl

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// storeV1 stores session s1 with events in b over ffs and turns it into the
// log a v1 build wrote (storeAt).
func storeV1(t *testing.T, b *Backend, ffs *faultfs.FS, cfg Config, batches ...[][]byte) (string, []byte) {
	t.Helper()
	return storeAt(t, b, ffs, cfg, 1, batches...)
}

// storeAt stores session s1 with events in b over ffs and turns it into the
// log a build of format version from wrote: events.v<from> with a header
// of that version, no file of the current generation (durably: a crash does
// not bring it back). It returns the old log's path and bytes.
func storeAt(t *testing.T, b *Backend, ffs *faultfs.FS, cfg Config, from int, batches ...[][]byte) (string, []byte) {
	t.Helper()
	storeEvents(t, b, "s1", batches...)
	cur := sessionLog(cfg, "s1")
	zst := cfg.Compression == CompressionZstd
	old := filepath.Join(filepath.Dir(cur), logName(from, zst))
	data := withFormatVersion(t, ffsRead(t, ffs, cur), zst, strconv.Itoa(from))
	if err := ffs.WriteFile(old, data, filePerm); err != nil {
		t.Fatal(err)
	}
	if err := ffs.Remove(cur); err != nil {
		t.Fatal(err)
	}
	// The removal is durable, so that a crash does not bring the current
	// generation back.
	if err := ffs.SyncDir(filepath.Dir(cur)); err != nil {
		t.Fatal(err)
	}
	return old, data
}

// dirNames lists the session directory of s1.
func dirNames(t *testing.T, ffs *faultfs.FS, cfg Config) []string {
	t.Helper()
	names, err := ffs.ReadDir(filepath.Dir(sessionLog(cfg, "s1")))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

// TestMigrationWritesANewGeneration: a read open of a log of an older
// format version (v1, and the one before the current, whose edge is the
// last) serves the current header and writes nothing; a write open links
// events.v<sdk.FormatVersion> holding the current header and the same event
// bytes, leaves the old log byte-identical, and appends go to the new one.
// A torn tail of the old log is kept in an artifact and left there; the
// new generation starts without it.
func TestMigrationWritesANewGeneration(t *testing.T) {
	for _, from := range []int{1, sdk.FormatVersion - 1} {
		for _, comp := range []string{CompressionZstd, CompressionNone} {
			t.Run("v"+strconv.Itoa(from)+"/"+comp, func(t *testing.T) {
				b, ffs, cfg := faultBackend(t, comp)
				events := persistencetest.Batch(0, 5)
				v1, before := storeAt(t, b, ffs, cfg, from, events[:3], events[3:])
				torn := append(bytes.Clone(before), "{\"seq\":5,"...)
				if err := ffs.WriteFile(v1, torn, filePerm); err != nil {
					t.Fatal(err)
				}
				names := dirNames(t, ffs, cfg)

				r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
				if err != nil || r.Header.FormatVersion != sdk.FormatVersion || r.Torn.Bytes == 0 {
					t.Fatalf("Open(read) of the old log = %+v, %v; want the v%d header and the torn tail reported", r, err, sdk.FormatVersion)
				}
				requireEqualEvents(t, "read open of the old log", persistencetest.ReadAll(t, b, r.Handle), events)
				if err := b.Close(t.Context(), r.Handle); err != nil {
					t.Fatal(err)
				}
				if got := dirNames(t, ffs, cfg); !slices.Equal(got, names) || !bytes.Equal(ffsRead(t, ffs, v1), torn) {
					t.Fatalf("a read open changed the session directory: %v, was %v", got, names)
				}

				w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
				if err != nil || w.Header.FormatVersion != sdk.FormatVersion || w.NextSeq != 5 || w.Torn.Artifact == "" {
					t.Fatalf("Open(write) of the old log = %+v, %v; want v%d, next seq 5 and the torn tail kept", w, err, sdk.FormatVersion)
				}
				if !bytes.Equal(ffsRead(t, ffs, v1), torn) {
					t.Fatal("the write open changed the old log")
				}
				more := persistencetest.Batch(5, 2)
				if _, err := b.Append(t.Context(), w.Handle, 5, more); err != nil {
					t.Fatal(err)
				}
				requireEqualEvents(t, "the migrated log", persistencetest.ReadAll(t, b, w.Handle), append(slices.Clone(events), more...))
				if err := b.Close(t.Context(), w.Handle); err != nil {
					t.Fatal(err)
				}
				v2 := ffsRead(t, ffs, sessionLog(cfg, "s1"))
				us, oldUnits := units(t, v2, comp == CompressionZstd), units(t, before, comp == CompressionZstd)
				if !bytes.Equal(v2[us[1][0]:us[len(oldUnits)-1][1]], before[oldUnits[1][0]:]) {
					t.Fatal("the new generation does not hold the old log's event bytes as they were")
				}
				if !bytes.Equal(ffsRead(t, ffs, v1), torn) {
					t.Fatal("an append after the migration changed the old log")
				}
				st, err := b.Stat(t.Context(), "s1")
				if err != nil || st.FormatVersion != sdk.FormatVersion {
					t.Fatalf("Stat after the migration = %+v, %v", st, err)
				}
			})
		}
	}
}

// TestMigrationCrashLeavesV1Readable: a crash at any step of storing the
// migration (the temp file's fsync, the link, the directory's fsync) leaves
// events.v1 byte-identical and readable; a backend started after the crash
// reads the session and its next write open finishes the migration. With
// a torn tail in events.v1, the crashed migration leaves no torn-tail
// artifact and the finished one exactly one.
func TestMigrationCrashLeavesV1Readable(t *testing.T) {
	crashes := []struct {
		name  string
		fault faultfs.Fault
	}{
		{"at the temp file's fsync", faultfs.Fault{Op: faultfs.OpSync, Name: ".events.*.tmp", Crash: true, Times: 1}},
		{"inside the temp file's write", faultfs.Fault{Op: faultfs.OpWrite, Name: ".events.*.tmp", Keep: 20, Crash: true, Times: 1}},
		{"at the link", faultfs.Fault{Op: faultfs.OpLink, Name: "events.*", Crash: true, Times: 1}},
		{"at the directory's fsync", faultfs.Fault{Op: faultfs.OpSyncDir, Crash: true, Times: 1}},
	}
	tornArtifacts := func(t *testing.T, ffs *faultfs.FS, cfg Config) []string {
		var names []string
		for _, n := range dirNames(t, ffs, cfg) {
			if strings.HasPrefix(n, "torn-") {
				names = append(names, n)
			}
		}
		return names
	}
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		for _, c := range crashes {
			for _, tail := range []string{"", "{\"seq\":4,"} {
				name := comp + "/" + c.name
				if tail != "" {
					name += "/torn tail"
				}
				t.Run(name, func(t *testing.T) {
					b, ffs, cfg := faultBackend(t, comp)
					events := persistencetest.Batch(0, 4)
					v1, before := storeV1(t, b, ffs, cfg, events)
					if tail != "" {
						before = append(before, tail...)
						if err := ffs.WriteFile(v1, before, filePerm); err != nil {
							t.Fatal(err)
						}
					}
					ffs.Inject(c.fault)
					if _, err := b.Open(t.Context(), "s1", sdk.AccessWrite); err == nil {
						t.Fatal("the write open survived the crash")
					}
					ffs.ClearFaults()
					if n := tornArtifacts(t, ffs, cfg); len(n) != 0 {
						t.Fatalf("the crashed migration left torn-tail artifacts %v", n)
					}

					after := newTestBackend(t, cfg, WithFS(ffs))
					if !bytes.Equal(ffsRead(t, ffs, v1), before) {
						t.Fatal("the crash changed events.v1")
					}
					r, err := after.Open(t.Context(), "s1", sdk.AccessRead)
					if err != nil || r.Header.FormatVersion != sdk.FormatVersion {
						t.Fatalf("Open(read) after the crash = %+v, %v", r, err)
					}
					requireEqualEvents(t, "after the crash", persistencetest.ReadAll(t, after, r.Handle), events)
					w, err := after.Open(t.Context(), "s1", sdk.AccessWrite)
					if err != nil || w.NextSeq != 4 || w.Torn.Bytes != int64(len(tail)) {
						t.Fatalf("Open(write) after the crash = %+v, %v; want the migration finished, %d torn bytes", w, err, len(tail))
					}
					if n := tornArtifacts(t, ffs, cfg); len(n) != min(len(tail), 1) || (tail != "" && w.Torn.Artifact != filepath.Join(filepath.Dir(v1), n[0])) {
						t.Fatalf("torn-tail artifacts after the finished migration: %v (Opened names %q); want one for a torn tail, none without", n, w.Torn.Artifact)
					}
					requireEqualEvents(t, "the migration finished after the crash", persistencetest.ReadAll(t, after, w.Handle), events)
					if err := after.Close(t.Context(), w.Handle); err != nil {
						t.Fatal(err)
					}
					st, err := after.Stat(t.Context(), "s1")
					if err != nil || st.FormatVersion != sdk.FormatVersion || !bytes.Equal(ffsRead(t, ffs, v1), before) {
						t.Fatalf("Stat after the finished migration = %+v, %v; want v%d with events.v1 unchanged", st, err, sdk.FormatVersion)
					}
					for _, n := range dirNames(t, ffs, cfg) {
						if filepath.Ext(n) == ".tmp" {
							t.Fatalf("a temp file survived the finished migration: %s", n)
						}
					}
				})
			}
		}
	}
}
