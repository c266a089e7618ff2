package host_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// memoryEngine starts an engine over the memory backend.
func memoryEngine(ctx context.Context) (*engine.Engine, error) {
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "memory.hcl")
	if err != nil {
		return nil, err
	}
	return engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
}

// memoryHost starts an engine over the memory backend and a host on it
// that has stored (and released) the session "s".
func memoryHost(tb testing.TB) (*host.Host, *engine.Engine) {
	tb.Helper()
	ctx := context.Background()
	e, err := memoryEngine(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close(ctx) })
	h := host.New(e, hclog.NewNullLogger())
	if _, err := h.Create(ctx, store.CreateOptions{ID: "s"}); err != nil {
		tb.Fatal(err)
	}
	if err := h.Release(ctx, "s"); err != nil {
		tb.Fatal(err)
	}
	return h, e
}

// A request that borrowed a stored session and failed leaves it stored,
// not live; one that succeeded leaves it live and held.
func ExampleHost_Borrow() {
	ctx := context.Background()
	e, err := memoryEngine(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)
	h := host.New(e, hclog.NewNullLogger())
	if _, err := h.Create(ctx, store.CreateOptions{ID: "s1"}); err != nil {
		fmt.Println(err)
		return
	}
	_ = h.Release(ctx, "s1")

	o, done, err := h.Borrow(ctx, "s1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("resumed:", !o.AlreadyLive)
	done(false) // the request failed
	_, live := e.Store.Get("s1")
	fmt.Println("live after a failure:", live)

	_, done, _ = h.Borrow(ctx, "s1")
	done(true) // the request succeeded
	_, live = e.Store.Get("s1")
	fmt.Println("live after a success:", live)
	// Output:
	// resumed: true
	// live after a failure: false
	// live after a success: true
}

// A borrowed session is released only when the last request that
// borrowed it has failed and no request kept it: a borrower still at work,
// a borrower that succeeded and an Acquire (an Open call) all keep it.
func TestBorrowReleasesOnlyWhenEveryBorrowerFailed(t *testing.T) {
	ctx := context.Background()
	h, e := memoryHost(t)
	live := func() bool { _, ok := e.Store.Get("s"); return ok }
	borrow := func() func(bool) {
		t.Helper()
		_, done, err := h.Borrow(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	first, second := borrow(), borrow()
	first(false)
	if !live() {
		t.Fatal("the first borrower's failure released the session under the second")
	}
	second(false)
	if live() {
		t.Fatal("both borrowers failed and the session is still live")
	}

	first, second = borrow(), borrow()
	first(true)
	second(false)
	if !live() {
		t.Fatal("a borrower succeeded, yet the session was released")
	}
	if err := h.Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}

	first = borrow()
	if _, err := h.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	first(false)
	if !live() {
		t.Fatal("an Acquire claimed the session, yet a failed borrower released it")
	}
	if err := h.Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}

	// A session live before any borrower stays live whatever they do.
	if _, err := h.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	borrow()(false)
	if !live() {
		t.Fatal("a failed borrower released a session that was live before it")
	}
}

// Concurrent borrowers of one stored session, some failing and some
// succeeding: each sees a live session while it works, and at the end the
// session is live exactly when one succeeded.
func TestBorrowConcurrent(t *testing.T) {
	ctx := context.Background()
	h, e := memoryHost(t)
	for round, succeed := range []int{-1, 3, -1, 0} {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				o, done, err := h.Borrow(ctx, "s")
				if err != nil {
					t.Error(err)
					return
				}
				if cur, ok := e.Store.Get("s"); !ok || cur != o.Session {
					t.Errorf("round %d: borrower %d got a session that is not the live one", round, i)
				}
				done(i == succeed)
			})
		}
		wg.Wait()
		_, live := e.Store.Get("s")
		if live != (succeed >= 0) {
			t.Fatalf("round %d: live %v after borrowers of which #%d succeeded", round, live, succeed)
		}
		if live {
			if err := h.Release(ctx, "s"); err != nil {
				t.Fatal(err)
			}
		}
	}
}
