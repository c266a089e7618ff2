package durable_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk/durable"
)

func TestWriteFileCreatesTheFileAndItsDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "x.bin")
	if err := durable.WriteFile(path, []byte("data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "data\n" {
		t.Fatalf("file = %q, %v", got, err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(filepath.Dir(path))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes = %v, %v; want 0600 file, 0700 directory", fi.Mode().Perm(), di.Mode().Perm())
	}
	requireOnly(t, filepath.Dir(path), "x.bin")
}

func TestWriteFileNeverReplacesAFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := durable.WriteFile(path, []byte("new"), 0o600)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteFile over an existing file = %v; want fs.ErrExist", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Fatalf("the existing file now holds %q", got)
	}
	requireOnly(t, dir, "x.bin")
}

// requireOnly fails unless dir holds exactly the named entry: no temporary
// file is left behind.
func requireOnly(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != name {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %v; want only %s", dir, names, name)
	}
}
