package jsonl

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestCompressionMismatch: a session stored with the other compression is
// COMPRESSION_MISMATCH (path, found mode, configured mode) from Open, Stat
// and List, never converted; Create of it is SESSION_ALREADY_EXISTS.
func TestCompressionMismatch(t *testing.T) {
	root := t.TempDir()
	zb := newTestBackend(t, Config{Root: root, Compression: CompressionZstd})
	storeEvents(t, zb, "s1", persistencetest.Batch(0, 2))
	path := sessionLog(Config{Root: root, Compression: CompressionZstd}, "s1")
	before := mustRead(t, path)

	nb := newTestBackend(t, Config{Root: root, Compression: CompressionNone})
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := nb.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeCompressionMismatch, path, `"zstd"`, `"none"`)
	}
	_, err := nb.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeCompressionMismatch, path)
	var entries []sdk.ListEntry
	nb.List(t.Context(), func(e sdk.ListEntry) error { entries = append(entries, e); return nil })
	if len(entries) != 1 {
		t.Fatalf("List has %d entries; want 1", len(entries))
	}
	persistencetest.RequireCode(t, entries[0].Err, sdk.CodeCompressionMismatch, path)
	_, err = nb.Create(t.Context(), testHeader("s1"))
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
	if got := mustRead(t, path); string(got) != string(before) {
		t.Fatal("the log changed")
	}
}

// TestBothSuffixesAreCorrupt: events.v1.jsonl beside events.v1.jsonl.zst
// is CORRUPT_LOG naming both.
func TestBothSuffixesAreCorrupt(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", persistencetest.Batch(0, 1))
	plain := sessionLog(cfg, "s1")
	zst := plain + ".zst"
	if err := os.WriteFile(zst, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Open(t.Context(), "s1", a)
		persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, plain, zst)
	}
	_, err := b.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, zst)
}

// TestIdentityMismatch: a session directory whose header names another id
// (copied by hand) is IDENTITY_MISMATCH, not the other session.
func TestIdentityMismatch(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "s1", persistencetest.Batch(0, 1))
	if err := os.Rename(filepath.Join(cfg.Root, "s1"), filepath.Join(cfg.Root, "s2")); err != nil {
		t.Fatal(err)
	}
	_, err := b.Open(t.Context(), "s2", sdk.AccessRead)
	persistencetest.RequireCode(t, err, sdk.CodeIdentityMismatch, "s1", "s2")
}

// TestRevisionIsTheFileIdentityAndTimes: dev:ino:size:mtimeNs:ctimeNs of
// the log, identical in Append, Flush, Stat, List and Open.
func TestRevisionIsTheFileIdentityAndTimes(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	o, err := b.Create(t.Context(), testHeader("s1"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 2))
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(sessionLog(cfg, "s1"), &st); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d:%d:%d:%d:%d", st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano())
	f, _ := b.Flush(t.Context(), o.Handle)
	s, _ := b.Stat(t.Context(), "s1")
	r, _ := b.Open(t.Context(), "s1", sdk.AccessRead)
	for what, got := range map[string]string{"Append": d.Revision, "Flush": f.Revision, "Stat": s.Revision, "Open": r.Revision} {
		if got != want {
			t.Errorf("%s revision %q; want %q", what, got, want)
		}
	}
	if s.EventCount != -1 || s.SizeBytes != st.Size {
		t.Errorf("Stat counts %d events, %d bytes; want -1 and %d", s.EventCount, s.SizeBytes, st.Size)
	}
}

// TestListSkipsForeignDirectoriesAndReportsBrokenSessions: directories that
// are no enc(id), or hold no log (a materialization that never finished),
// are not sessions; a session whose header does not read is an entry with
// an error, never a failed listing.
func TestListSkipsForeignDirectoriesAndReportsBrokenSessions(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionNone}
	b := newTestBackend(t, cfg)
	storeEvents(t, b, "good", persistencetest.Batch(0, 1))
	storeEvents(t, b, "bad", persistencetest.Batch(0, 1))
	if err := os.WriteFile(sessionLog(cfg, "bad"), []byte("not a header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"Foreign", "lock-only"} {
		if err := os.MkdirAll(filepath.Join(cfg.Root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(cfg.Root, "lock-only", lockName), nil, 0o600)
	got := map[string]error{}
	if err := b.List(t.Context(), func(e sdk.ListEntry) error { got[e.ID] = e.Err; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["good"] != nil {
		t.Fatalf("List = %v; want good and bad", got)
	}
	persistencetest.RequireCode(t, got["bad"], sdk.CodeCorruptLog, sessionLog(cfg, "bad"))
}

// TestSymlinkedSessionDirectoryIsRefused: a session directory that is a
// symbolic link (here to a complete session outside the root, and to a
// directory that does not exist) is CORRUPT_LOG naming it from Open, Stat,
// List and Create, and nothing is read or written through it.
func TestSymlinkedSessionDirectoryIsRefused(t *testing.T) {
	for _, comp := range []string{CompressionZstd, CompressionNone} {
		t.Run(comp, func(t *testing.T) {
			outside := Config{Root: t.TempDir(), Compression: comp}
			storeEvents(t, newTestBackend(t, outside), "s1", persistencetest.Batch(0, 2))
			target := filepath.Join(outside.Root, EncodeID("s1"))
			before := mustRead(t, sessionLog(outside, "s1"))
			names := func(dir string) []string {
				es, _ := os.ReadDir(dir)
				var out []string
				for _, e := range es {
					out = append(out, e.Name())
				}
				return out
			}
			entries := names(target)

			cfg := Config{Root: t.TempDir(), Compression: comp}
			b := newTestBackend(t, cfg)
			link := filepath.Join(cfg.Root, EncodeID("s1"))
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			dangling := filepath.Join(cfg.Root, EncodeID("s2"))
			missing := filepath.Join(t.TempDir(), "missing")
			if err := os.Symlink(missing, dangling); err != nil {
				t.Fatal(err)
			}
			for id, path := range map[string]string{"s1": link, "s2": dangling} {
				for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
					_, err := b.Open(t.Context(), id, a)
					persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, path, "symbolic link")
				}
				_, err := b.Stat(t.Context(), id)
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, path, "symbolic link")
				_, err = b.Create(t.Context(), testHeader(id))
				persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, path, "symbolic link")
			}
			got := map[string]error{}
			if err := b.List(t.Context(), func(e sdk.ListEntry) error { got[e.ID] = e.Err; return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 {
				t.Fatalf("List = %v; want an entry with an error for s1 and s2", got)
			}
			persistencetest.RequireCode(t, got["s1"], sdk.CodeCorruptLog, link)
			persistencetest.RequireCode(t, got["s2"], sdk.CodeCorruptLog, dangling)

			if after := mustRead(t, sessionLog(outside, "s1")); string(after) != string(before) {
				t.Fatal("the log behind the link changed")
			}
			if after := names(target); fmt.Sprint(after) != fmt.Sprint(entries) {
				t.Fatalf("the directory behind the link holds %v; it held %v", after, entries)
			}
			if _, err := os.Lstat(missing); err == nil {
				t.Fatal("Create made the missing target of a dangling link")
			}
		})
	}
}
