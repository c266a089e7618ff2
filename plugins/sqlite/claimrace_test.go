package sqlite_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// A write open of an id that is not stored asks whether a create in
// another process holds it; asking must not look like a claim: a Create of
// that free id in another process meanwhile succeeds every time.
func TestCreateOfAFreeIDIsNotRefusedByAWriteOpenElsewhere(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	p := subprocess(t, path)
	stop := whileRunning(func() {
		if o, err := b.Open(ctx, "x", sdk.AccessWrite); err == nil {
			_ = b.Close(ctx, o.Handle) // x is never stored
		}
	})
	refused, total := 0, 1000
	var first error
	for range total {
		o, err := p.Create(ctx, header("x"))
		if err != nil {
			if refused++; first == nil {
				first = err
			}
			continue
		}
		must(t, p.Close(ctx, o.Handle)) // abandoned: x stays free
	}
	stop()
	if refused > 0 {
		t.Fatalf("%d of %d creates of a free id refused while another process opened it for writing; first: %v", refused, total, first)
	}
}

// A Create of a stored id is refused; it must not make a write open of
// that session in another process meanwhile fail with ALREADY_OWNED, as
// nobody writes it.
func TestWriteOpenIsNotRefusedByACreateOfTheStoredIDElsewhere(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(ctx, header("x"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 2))
	must(t, b.Close(ctx, o.Handle))
	p := subprocess(t, path)
	stop := whileRunning(func() {
		if o, err := b.Create(ctx, header("x")); err == nil {
			_ = b.Close(ctx, o.Handle) // x is stored: cannot happen
		}
	})
	refused, total := 0, 1000
	var first error
	for range total {
		o, err := p.Open(ctx, "x", sdk.AccessWrite)
		if err != nil {
			if refused++; first == nil {
				first = err
			}
			continue
		}
		must(t, p.Close(ctx, o.Handle))
	}
	stop()
	if refused > 0 {
		t.Fatalf("%d of %d write opens of a stored session nobody writes refused while another process tried to create it; first: %v", refused, total, first)
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
