package vfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
)

// KernelCopy copies a range between two files of the OS inside the kernel,
// at the offsets given, and copies nothing of a file that is not one
// (faultfs), leaving that to its caller.
func TestKernelCopy(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	if err := os.WriteFile(filepath.Join(dir, "src"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	fsys := vfs.OS()
	src, err := fsys.OpenFile(filepath.Join(dir, "src"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := fsys.OpenFile(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := dst.WriteAt([]byte("head"), 0); err != nil {
		t.Fatal(err)
	}
	n, err := vfs.KernelCopy(dst, 4, src, 100, int64(len(data)-200))
	if err != nil || n != int64(len(data)-200) {
		t.Fatalf("KernelCopy = %d, %v; want %d", n, err, len(data)-200)
	}
	got, err := os.ReadFile(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte("head"), data[100:len(data)-100]...); !bytes.Equal(got, want) {
		t.Fatalf("the copy holds %d bytes that differ from the %d of the source range", len(got), len(want))
	}
	if _, err := vfs.KernelCopy(dst, 0, src, 0, 10<<20); err == nil {
		t.Fatal("KernelCopy past the end of the source did not fail")
	}

	mem := faultfs.New()
	other, err := mem.OpenFile("/x", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := vfs.KernelCopy(other, 0, src, 0, 10); n != 0 || err != nil {
		t.Fatalf("KernelCopy into a faultfs file = %d, %v; want 0, nil", n, err)
	}
}
