package chaos

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// shutdown is the table's row for the check after the last fault: serve
// stopped with SIGTERM, every session read again and listed.
const shutdown = "shutdown"

// stopAt is -chaos.stop-at (zero: none).
var stopAt time.Time

// TestChaos injects -chaos.faults faults per backend into a real serve
// with concurrent writers and verifies every session after each (see the
// package doc).
func TestChaos(t *testing.T) {
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos seed %d (rerun with -chaos.seed=%d), %d faults per backend, %d clients", seed, seed, *flagFaults, *flagClients)
	if *flagStopAt != "" {
		var err error
		if stopAt, err = time.Parse(time.RFC3339, *flagStopAt); err != nil {
			t.Fatalf("-chaos.stop-at: %v", err)
		}
	}
	tb := newTable()
	var names []string
	for _, b := range backends {
		if slices.Contains(strings.Split(*flagBackends, ","), b.name) {
			names = append(names, b.name)
		}
	}
	// The backends run side by side, each subtest started from a
	// goroutine of its own (not t.Parallel, which -parallel, GOMAXPROCS
	// by default, would bound: they mostly wait for their processes).
	var wg sync.WaitGroup
	for i, b := range backends {
		if !slices.Contains(names, b.name) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(b.name, func(t *testing.T) { runBackend(t, b, i, seed+uint64(i)<<32, tb) })
		}()
	}
	wg.Wait()
	var kinds []string
	for _, f := range faults {
		kinds = append(kinds, f.name)
	}
	t.Logf("chaos summary (seed %d, %d faults per backend):\n%s", seed, *flagFaults, tb.render(append(kinds, shutdown), names))
	if lost, dup, half := tb.totals(); lost > 0 || dup > 0 || half > 0 {
		t.Errorf("%d acknowledged events lost, %d events duplicated, %d half-made sessions", lost, dup, half)
	}
}

// runBackend runs the writers and the faults on backend b, the nth of
// backends, and adds the results to tb.
func runBackend(t *testing.T, b backend, nth int, seed uint64, tb *table) {
	h := newHarness(t, b, seed)
	h.start()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var wg sync.WaitGroup
	for i := range *flagClients {
		w := newWriter(h, fmt.Sprintf("w%d", i), seed+uint64(i)+1)
		h.writers = append(h.writers, w)
	}
	for _, w := range h.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(ctx)
		}()
	}
	h.setupOps()
	var kinds []fault
	for _, f := range faults {
		if *flagKinds != "" && !slices.Contains(strings.Split(*flagKinds, ","), f.name) {
			continue
		}
		if why := f.applies(b); why != "" {
			tb.notApplicable(f.name, b.name, why)
			continue
		}
		if why := f.unavailable(h); why != "" {
			if os.Getenv("CI") == "true" {
				t.Errorf("fault kind %s cannot run on %s: %s (under CI=true every kind must run)", f.name, b.name, why)
			} else {
				t.Logf("LOUD: fault kind %s SKIPPED on %s: %s (under CI=true this fails)", f.name, b.name, why)
			}
			tb.skip(f.name, b.name, why)
			continue
		}
		kinds = append(kinds, f)
	}
	if err := h.awaitRecovery(make([]int64, len(h.writers))); err != nil {
		t.Fatal(err)
	}
	c := checker{h: h, tb: tb, seenLost: map[string]bool{}, seenDup: map[string]bool{}, seenProblem: map[string]bool{}, seenHalf: map[string]bool{}}
	n := *flagFaults
	if b.everyKind {
		n = max(n, len(kinds))
	}
	for i := range n {
		if !stopAt.IsZero() && time.Now().After(stopAt) {
			t.Logf("LOUD: -chaos.stop-at %s passed: %s stops after %d of %d faults", *flagStopAt, b.name, i, n)
			break
		}
		f := nextKind(kinds, tb, b.name, nth, h)
		start := time.Now()
		f.run(h)
		before := h.successes()
		if err := h.awaitRecovery(before); err != nil {
			t.Fatalf("fault %d (%s): %v", i+1, f.name, err)
		}
		if err := h.pause(); err != nil {
			t.Fatalf("fault %d (%s): %v", i+1, f.name, err)
		}
		found := h.verify(ctx, false)
		found.add(h.takeOps())
		c.check(f.name, found)
		h.resume()
		t.Logf("fault %d/%d %s: done in %s", i+1, n, f.name, time.Since(start).Round(time.Millisecond))
	}

	// Stop the writers between batches, then serve with SIGTERM: a
	// graceful stop flushes and releases; every session is read again.
	if err := h.pause(); err != nil {
		t.Fatal(err)
	}
	cancel()
	h.resume()
	wg.Wait()
	var final findings
	if b.store == memoryStore { // the sessions end with serve
		final = h.verify(context.Background(), true)
		final.problems = append(final.problems, h.verifyListing(context.Background())...)
	}
	srv := h.server()
	if err := srv.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(exitTimeout); err != nil {
		c.problem(fmt.Sprintf("serve after SIGTERM: %v\n%s", err, tail(srv.Log(), 4000)))
	}
	if b.store != memoryStore {
		final = h.verify(context.Background(), true)
		final.problems = append(final.problems, h.verifyListing(context.Background())...)
	}
	c.check(shutdown, final)
	t.Logf("%s: writers' error codes: %s", b.name, h.codeSummary())
	var resent int64
	for _, w := range h.writers {
		resent += w.resent.Load()
	}
	t.Logf("%s: %d acknowledged operations sent again, each answered as a replay of its envelopes (else BROKEN above)", b.name, resent)
	h.mu.Lock()
	problems := h.problems
	h.mu.Unlock()
	for _, p := range problems {
		c.problem(p)
	}
	if c.failed {
		t.Errorf("%s: broken rules above; serve's last log:\n%s", b.name, tail(srv.Log(), 4000))
	}
	_ = os.Stdout.Sync()
}

// nextKind picks the next fault on backend, the nth of backends: one of the
// kinds it ran least often, at random, preferring those of its share. The
// shares cut the list of every kind into consecutive windows of
// -chaos.faults kinds, the nth backend's starting where the one before it
// ended, so that a short run, fewer faults than kinds, spreads the kinds
// over the backends; a long run gives each kind its share on every
// backend. The choice depends on this backend's runs alone, so a seed
// repeats it while the backends run side by side.
func nextKind(kinds []fault, tb *table, backend string, nth int, h *harness) fault {
	var best, shared []fault
	bestHere := 0
	for _, f := range kinds {
		here := tb.runs(f.name, backend)
		switch {
		case best == nil || here < bestHere:
			best, bestHere = []fault{f}, here
		case here == bestHere:
			best = append(best, f)
		}
	}
	for _, f := range best {
		if inShare(f.name, nth) {
			shared = append(shared, f)
		}
	}
	if len(shared) > 0 {
		best = shared
	}
	return best[h.rng.IntN(len(best))]
}

// inShare reports whether kind is in the nth backend's share (see
// nextKind).
func inShare(kind string, nth int) bool {
	i := slices.IndexFunc(faults, func(f fault) bool { return f.name == kind })
	n := len(faults)
	start := nth * *flagFaults % n
	return (i-start+n)%n < min(*flagFaults, n)
}

// checker attributes what each verification newly found to the fault that
// preceded it.
type checker struct {
	h                              *harness
	tb                             *table
	acked                          int // acknowledged events counted so far
	replayed                       int // replays after a failed attempt counted so far
	seenLost, seenDup, seenProblem map[string]bool
	seenHalf                       map[string]bool
	failed                         bool
}

// check counts a verification after a fault of kind.
func (c *checker) check(kind string, f findings) {
	acked, replayed := 0, 0
	for _, r := range c.h.records() {
		acked += r.ackedCount()
	}
	for _, w := range c.h.writers {
		replayed += int(w.replays.Load())
	}
	lost, dup, half := 0, 0, 0
	for _, id := range f.half {
		if !c.seenHalf[id] {
			c.seenHalf[id] = true
			half++
		}
	}
	for _, pid := range f.lost {
		if !c.seenLost[pid] {
			c.seenLost[pid] = true
			lost++
		}
	}
	copies := map[string]int{}
	for _, pid := range f.dup {
		copies[pid]++
	}
	for pid, n := range copies {
		if !c.seenDup[pid] {
			c.seenDup[pid] = true
			dup += n
		}
	}
	c.tb.add(kind, c.h.b.name, acked-c.acked, replayed-c.replayed, lost, dup, half)
	c.acked, c.replayed = acked, replayed
	for _, p := range f.problems {
		c.problem(fmt.Sprintf("after %s: %s", kind, p))
	}
}

// problem reports a broken rule once.
func (c *checker) problem(p string) {
	if c.seenProblem[p] {
		return
	}
	c.seenProblem[p] = true
	c.failed = true
	c.h.t.Log("BROKEN: " + p)
}
