package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestUnsafeFilesAreRefused checks the file-safety rules of docs/storage.md:
// each refusal is CONFIG_INVALID naming the file and how to fix it, and
// leaves the file as it was.
func TestUnsafeFilesAreRefused(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, dir string) (path string)
		values []any
	}{
		{"symlink", func(t *testing.T, dir string) string {
			real := newDatabase(t)
			path := filepath.Join(dir, "link.db")
			must(t, os.Symlink(real, path))
			return path
		}, []any{"symbolic link"}},
		{"group-writable parent", func(t *testing.T, dir string) string {
			must(t, os.Chmod(dir, 0o770))
			return filepath.Join(dir, "sessions.db")
		}, []any{"group- or world-writable", "mode 0770", "chmod go-w"}},
		{"world-writable parent", func(t *testing.T, dir string) string {
			must(t, os.Chmod(dir, 0o703))
			return filepath.Join(dir, "sessions.db")
		}, []any{"group- or world-writable", "mode 0703"}},
		{"mode 0644", func(t *testing.T, dir string) string {
			path := newDatabase(t)
			must(t, os.Chmod(path, 0o644))
			return path
		}, []any{"mode 0644", "chmod 600"}},
		{"mode 0640", func(t *testing.T, dir string) string {
			path := newDatabase(t)
			must(t, os.Chmod(path, 0o640))
			return path
		}, []any{"mode 0640"}},
		{"directory", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "sessions.db")
			must(t, os.Mkdir(path, 0o700))
			return path
		}, []any{"not a regular file"}},
		{"symlinked WAL file", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "sessions.db")
			must(t, os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), path+"-wal"))
			return path
		}, []any{"-wal", "symbolic link", "remove it"}},
		{"parent is a file", func(t *testing.T, dir string) string {
			must(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
			return filepath.Join(dir, "file", "sessions.db")
		}, []any{"file", "not a directory"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := c.setup(t, dir)
			before, _ := os.Lstat(path)
			_, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
			persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, c.values...)
			t.Log(err)
			after, _ := os.Lstat(path)
			if (before == nil) != (after == nil) || (before != nil && (before.Mode() != after.Mode() || before.Size() != after.Size())) {
				t.Fatalf("the refused path changed: %v → %v", before, after)
			}
		})
	}
}

// TestMissingDataDirectoryIsCreated: the directory of the database and
// its missing ancestors are created with mode 0700, as the JSONL backend
// creates its root, and the database then works.
func TestMissingDataDirectoryIsCreated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "data", "sqlite", "sessions.db")
	b := openBackend(t, sqlite.DefaultConfig(path))
	for _, d := range []string{filepath.Join(dir, "data"), filepath.Dir(path)} {
		fi, err := os.Lstat(d)
		must(t, err)
		if fi.Mode() != os.ModeDir|0o700 {
			t.Fatalf("%s has mode %v; want a directory with mode 0700", d, fi.Mode())
		}
	}
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 2))
	fi, err := os.Stat(path)
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("new database mode %04o; want 0600", fi.Mode().Perm())
	}
}

func TestDatabaseOfAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user")
	}
	path := newDatabase(t)
	must(t, os.Chown(path, 4242, -1))
	_, err := sqlite.Open(t.Context(), sqlite.DefaultConfig(path))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, "owned by uid 4242", "not by this user")
}

func TestNewDatabaseIsCreatedPrivate(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Chmod(dir, 0o755)) // readable by others is fine; writable is not
	path := filepath.Join(dir, "sessions.db")
	b := openBackend(t, sqlite.DefaultConfig(path))
	fi, err := os.Stat(path)
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("new database mode %04o; want 0600", fi.Mode().Perm())
	}
	// The lock directory and lock files are private too.
	o, err := b.Create(t.Context(), header("Sess/1"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 1))
	for p, want := range map[string]os.FileMode{path + ".locks": 0o700 | os.ModeDir, filepath.Join(path+".locks", "~53ess~2F1.lock"): 0o600} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v; want %v", p, fi.Mode(), want)
		}
	}
}

func TestInsecureLockDirectoryRefusesTheClaim(t *testing.T) {
	path := newDatabase(t)
	must(t, os.Mkdir(path+".locks", 0o755))
	b := openBackend(t, sqlite.DefaultConfig(path))
	_, err := b.Create(t.Context(), header("s1"))
	persistencetest.RequireCode(t, err, sdk.CodeConfigInvalid, path+".locks", "chmod 700")
	_, err = b.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
