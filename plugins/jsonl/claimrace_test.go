package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
)

// claimFS are the file systems the claim tests run over: two backends over
// one of them compete like two processes.
var claimFS = []struct {
	name string
	fs   func(t *testing.T) (vfs.FS, string)
}{
	{"os", func(t *testing.T) (vfs.FS, string) { return vfs.OS(), t.TempDir() }},
	{"faultfs", func(t *testing.T) (vfs.FS, string) {
		fsys := faultfs.New()
		if err := fsys.Mkdir("/data", 0o700); err != nil {
			t.Fatal(err)
		}
		return fsys, "/data"
	}},
}

// Two open files of one path lock like flock(2) on both file systems: an
// exclusive lock excludes every other, shared locks exclude only exclusive
// ones, and an open file converts its own lock either way.
func TestLockSharedFollowsFlock(t *testing.T) {
	for _, c := range claimFS {
		t.Run(c.name, func(t *testing.T) {
			fsys, root := c.fs(t)
			path := filepath.Join(root, lockName)
			a, b := openLockFile(t, fsys, path), openLockFile(t, fsys, path)
			blocked := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, syscall.EWOULDBLOCK) {
					t.Fatalf("%s: %v, want EWOULDBLOCK", what, err)
				}
			}
			must := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			must("a exclusive", a.Lock())
			blocked("b shared while a holds it exclusive", b.LockShared())
			blocked("b exclusive while a holds it exclusive", b.Lock())
			must("a converts to shared", a.LockShared())
			must("b shared beside a's shared", b.LockShared())
			blocked("a exclusive while b holds it shared", a.Lock())
			must("b unlock", b.Unlock())
			must("a exclusive once alone", a.Lock())
			must("a closes", a.Close())
			must("b exclusive after a closed", b.Lock())
		})
	}
}

func openLockFile(t *testing.T, fsys vfs.FS, path string) vfs.File {
	t.Helper()
	f, err := fsys.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A write open of an id that is not stored asks whether a create elsewhere
// holds it; asking must not look like a claim: a Create of that free id in
// another instance meanwhile succeeds every time.
func TestCreateOfAFreeIDIsNotRefusedByAConcurrentWriteOpen(t *testing.T) {
	for _, c := range claimFS {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			fsys, root := c.fs(t)
			cfg := Config{Root: root, Compression: CompressionZstd}
			opener, creator := newTestBackend(t, cfg, WithFS(fsys)), newTestBackend(t, cfg, WithFS(fsys))
			stop := whileRunning(func() {
				if o, err := opener.Open(ctx, "x", sdk.AccessWrite); err == nil {
					_ = opener.Close(ctx, o.Handle) // x is never stored
				}
			})
			refused, total := 0, 3000
			var first error
			for range total {
				o, err := creator.Create(ctx, testHeader("x"))
				if err != nil {
					if refused++; first == nil {
						first = err
					}
					continue
				}
				if err := creator.Close(ctx, o.Handle); err != nil { // abandoned: x stays free
					t.Fatal(err)
				}
			}
			stop()
			if refused > 0 {
				t.Fatalf("%d of %d creates of a free id refused while another instance opened it for writing; first: %v", refused, total, first)
			}
		})
	}
}

// A Create of a stored id is refused; it must not make a write open of
// that session in another instance meanwhile fail with ALREADY_OWNED, as
// nobody writes it.
func TestWriteOpenIsNotRefusedByAConcurrentCreateOfTheStoredID(t *testing.T) {
	for _, c := range claimFS {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			fsys, root := c.fs(t)
			cfg := Config{Root: root, Compression: CompressionZstd}
			opener, creator := newTestBackend(t, cfg, WithFS(fsys)), newTestBackend(t, cfg, WithFS(fsys))
			storeEvents(t, opener, "x")
			stop := whileRunning(func() {
				if o, err := creator.Create(ctx, testHeader("x")); err == nil {
					_ = creator.Close(ctx, o.Handle) // x is stored: cannot happen
				}
			})
			refused, total := 0, 3000
			var first error
			for range total {
				o, err := opener.Open(ctx, "x", sdk.AccessWrite)
				if err != nil {
					if refused++; first == nil {
						first = err
					}
					continue
				}
				if err := opener.Close(ctx, o.Handle); err != nil {
					t.Fatal(err)
				}
			}
			stop()
			if refused > 0 {
				t.Fatalf("%d of %d write opens of a stored session nobody writes refused while another instance tried to create it; first: %v", refused, total, first)
			}
		})
	}
}

// whileRunning calls fn in a loop on another goroutine until the returned
// stop is called; stop returns once the loop has ended.
func whileRunning(fn func()) (stop func()) {
	var done atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for !done.Load() {
			fn()
		}
	}()
	return func() {
		done.Store(true)
		<-ended
	}
}
