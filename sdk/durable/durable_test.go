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

func TestIsTempNamesWriteFilesTemporaryFiles(t *testing.T) {
	for name, want := range map[string]bool{
		".x.bin.0123456789ab.tmp":           true,
		".events.v1.jsonl.a1b2c3d4e5f6.tmp": true,
		"x.bin.0123456789ab.tmp":            false, // no leading dot
		".x.bin.0123456789AB.tmp":           false, // upper-case hex
		".x.bin.0123456789a.tmp":            false, // 11 digits
		".x.bin0123456789ab.tmp":            false, // no dot before the nonce
		".x.bin.0123456789ab":               false,
		"x.bin":                             false,
	} {
		if got := durable.IsTemp(name); got != want {
			t.Errorf("IsTemp(%q) = %v; want %v", name, got, want)
		}
	}
}

// failingSync is the OS file system, but every file's Sync fails.
type failingSync struct{}

type syncFails struct{ *os.File }

func (syncFails) Sync() error { return errors.New("injected fsync failure") }

func (failingSync) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncFails{f}, nil
}
func (failingSync) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }
func (failingSync) Link(oldname, newname string) error        { return os.Link(oldname, newname) }
func (failingSync) Remove(name string) error                  { return os.Remove(name) }
func (failingSync) Rename(oldname, newname string) error      { return os.Rename(oldname, newname) }
func (failingSync) SyncDir(name string) error                 { return durable.SyncDir(name) }

func TestWriteFileOnAnFSThatFailsLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.bin")
	err := durable.On(failingSync{}).WriteFile(path, []byte("data"), 0o600)
	if err == nil || err.Error() != "injected fsync failure" {
		t.Fatalf("WriteFile = %v; want the fsync failure", err)
	}
	requireOnly(t, dir, "sub") // made by MkdirAll before the failure
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
		t.Fatalf("the failed write left %v", entries)
	}
}

func TestWriteFirstFreeTakesTheFirstFreeNameAndStops(t *testing.T) {
	dir := t.TempDir()
	name := func(i int) string { return filepath.Join(dir, "a"+string(rune('0'+i))) }
	if err := os.WriteFile(name(0), []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := durable.WriteFirstFree(name, 2, []byte("new"), 0o600)
	if err != nil || got != name(1) {
		t.Fatalf("WriteFirstFree = %q, %v; want %q", got, err, name(1))
	}
	if data, _ := os.ReadFile(name(1)); string(data) != "new" {
		t.Fatalf("%s holds %q", name(1), data)
	}
	got, err = durable.WriteFirstFree(name, 2, []byte("more"), 0o600)
	if !errors.Is(err, fs.ErrExist) || got != name(1) {
		t.Fatalf("WriteFirstFree with every name taken = %q, %v; want the last name and fs.ErrExist", got, err)
	}
	if data, _ := os.ReadFile(name(0)); string(data) != "old" {
		t.Fatalf("%s was replaced: %q", name(0), data)
	}
}

// ReplaceFile writes a new file, and replaces an existing one whole,
// leaving no temporary file behind.
func TestReplaceFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "ck.bin")
	for _, content := range []string{"first", "second, longer"} {
		if err := durable.ReplaceFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("after ReplaceFile(%q): %q, %v", content, got, err)
		}
	}
	if err := durable.WriteFile(path, []byte("third"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteFile over an existing file: %v, want fs.ErrExist", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("the directory holds %d entries, want only the file", len(ents))
	}
}

// An error of WriteFileFunc's fill is returned as it is, and nothing is
// left at the path or beside it.
func TestWriteFileFuncFailingFillStoresNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.bin")
	boom := errors.New("boom")
	err := durable.WriteFileFunc(path, 0o600, func(f durable.File) error {
		if _, err := f.WriteAt([]byte("partial"), 0); err != nil {
			return err
		}
		return boom
	})
	if err != boom {
		t.Fatalf("WriteFileFunc = %v, want the fill's error", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("a failed WriteFileFunc left %v", names)
	}
}
