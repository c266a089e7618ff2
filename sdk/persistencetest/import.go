package persistencetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// importer returns p's sdk.Importer: p itself, or what its accessor
// Importer() (sdk.Importer, bool) returns (a host's proxy of a plugin,
// whose capability is the one the plugin declared). The Import group runs
// only for a backend that declares and implements it.
func importer(t *testing.T, p sdk.Persistence) sdk.Importer {
	t.Helper()
	imp, ok := Capability[sdk.Importer](p)
	if a, isProxy := p.(interface{ Importer() (sdk.Importer, bool) }); isProxy {
		imp, ok = a.Importer()
	}
	if !ok {
		t.Fatalf("%T implements no sdk.Importer, though the backend declares its capability", p)
	}
	return imp
}

// importBatches are the batches the Import rules import: seqs 0–2, 3–6,
// 7–9.
func importBatches() [][][]byte { return [][][]byte{Batch(0, 3), Batch(3, 4), Batch(7, 3)} }

// yielding returns an events func of Import that yields batches in order;
// after each yield it calls after (when set) with the batch's index, and
// returns after's error when it fails.
func yielding(batches [][][]byte, after func(i int) error) func(yield func([][]byte) error) error {
	return func(yield func([][]byte) error) error {
		for i, b := range batches {
			if err := yield(b); err != nil {
				return err
			}
			if after != nil {
				if err := after(i); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// requireInvisible fails unless id is nowhere to be seen in p: Stat and
// Open(read) are SESSION_NOT_FOUND and List does not name it. With
// mayWait, a call that p holds back (an instance that serves nothing else
// while an import runs) passes once heldBack has passed: it saw nothing.
func requireInvisible(t *testing.T, p sdk.Persistence, id, when string, mayWait bool) {
	t.Helper()
	call := func() (context.Context, context.CancelFunc) {
		if mayWait {
			return context.WithTimeout(t.Context(), heldBack)
		}
		return t.Context(), func() {}
	}
	// A call that failed at its own deadline was held back, whatever error
	// reached us: over gRPC the deadline travels to the plugin, whose side
	// may fire first and answer, with its own mapping of it, a moment
	// before ours has passed. So "at the deadline" allows that moment.
	held := func(ctx context.Context, err error) bool {
		if !mayWait || err == nil {
			return false
		}
		deadline, _ := ctx.Deadline()
		return ctx.Err() != nil || time.Until(deadline) < deadlineSkew
	}
	ctx, cancel := call()
	_, err := p.Stat(ctx, id)
	if !errors.Is(err, sdk.CodeSessionNotFound) && !held(ctx, err) {
		cancel()
		t.Fatalf("%s: Stat(%q) = %v; want SESSION_NOT_FOUND", when, id, err)
	}
	cancel()
	ctx, cancel = call()
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if !errors.Is(err, sdk.CodeSessionNotFound) && !held(ctx, err) {
		cancel()
		if err == nil {
			_ = p.Close(t.Context(), o.Handle)
		}
		t.Fatalf("%s: Open(%q, read) = %v; want SESSION_NOT_FOUND", when, id, err)
	}
	cancel()
	ctx, cancel = call()
	defer cancel()
	err = p.List(ctx, func(e sdk.ListEntry) error {
		if e.ID == id {
			t.Fatalf("%s: List names %q", when, id)
		}
		return nil
	})
	if err != nil && !held(ctx, err) {
		t.Fatalf("%s: List: %v", when, err)
	}
}

// heldBack is how long a look at an import in progress waits for an
// instance that holds its calls back until the import ends.
const heldBack = 2 * time.Second

// deadlineSkew is how long before a look's own deadline an answer that
// the deadline ended it may arrive: the plugin's copy of the deadline can
// fire first, and its answer travel back before ours fires.
const deadlineSkew = 250 * time.Millisecond

// importOK imports batches as session id and returns the write handle,
// closed when the test ends, after checking it.
func importOK(t *testing.T, p sdk.Persistence, id string, batches [][][]byte) (sdk.Opened, [][]byte) {
	t.Helper()
	var events [][]byte
	for _, b := range batches {
		events = append(events, b...)
	}
	o, err := importer(t, p).Import(t.Context(), header(id), yielding(batches, nil))
	if err != nil {
		t.Fatalf("Import(%q): %v", id, err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background(), o.Handle) })
	if o.NextSeq != sdk.Offset(len(events)) {
		t.Fatalf("Import(%q) NextSeq = %d; want %d", id, o.NextSeq, len(events))
	}
	return o, events
}

var importRules = []rule{
	{name: "stores-every-batch-byte-equal-and-returns-a-write-handle", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o, events := importOK(t, p, "imp", importBatches())
		requireEvents(t, "a read through the import's handle", ReadAll(t, p, o.Handle), events)
		_, err := p.Open(t.Context(), "imp", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "imp")
		appendOK(t, p, o.Handle, Batch(10, 1))
		closeHandle(t, p, o.Handle)
		q := p
		if s.h.Reopen != nil {
			q = s.reopen(t, p)
		}
		r := openSession(t, q, "imp", sdk.AccessRead)
		requireHeader(t, "the imported header", r.Header, header("imp"))
		requireEvents(t, "a read of the imported session", ReadAll(t, q, r.Handle), append(events, Batch(10, 1)...))
		s.requireCount(t, stat(t, q, "imp"), len(events)+1)
		if _, ok := list(t, q)["imp"]; !ok {
			t.Fatal("List does not name the imported session")
		}
	}},
	{name: "an-import-of-no-events-stores-the-header", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o, _ := importOK(t, p, "imp", nil)
		closeHandle(t, p, o.Handle)
		r := openSession(t, p, "imp", sdk.AccessRead)
		requireHeader(t, "the imported header", r.Header, header("imp"))
		if r.NextSeq != 0 {
			t.Fatalf("an import of no events opens with NextSeq %d; want 0", r.NextSeq)
		}
	}},
	{name: "nothing-is-visible-while-it-runs", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		// The importing instance looks, and another one when there is
		// one; an instance may hold its other calls back until the import
		// ends.
		looks := []sdk.Persistence{p}
		if s.h.Reopen != nil {
			looks = append(looks, s.reopen(t, p))
		}
		checked := 0
		_, err := importer(t, p).Import(t.Context(), header("imp"), yielding(importBatches(), func(i int) error {
			if i == 1 {
				for _, q := range looks {
					requireInvisible(t, q, "imp", "between the batches of an import", true)
				}
				checked++
			}
			return nil
		}))
		if err != nil {
			t.Fatalf("Import: %v", err)
		}
		if checked != 1 {
			t.Fatalf("the events func ran its check %d times; want 1", checked)
		}
	}},
	{name: "a-failure-midway-leaves-nothing-and-a-retry-succeeds", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		broken := errors.New("the export could not be read further")
		_, err := importer(t, p).Import(t.Context(), header("imp"), yielding(importBatches(), func(i int) error {
			if i == 1 {
				return broken
			}
			return nil
		}))
		if !errors.Is(err, broken) {
			t.Fatalf("Import whose events func failed = %v; want that failure", err)
		}
		requireInvisible(t, p, "imp", "after a failed import", false)
		o, events := importOK(t, p, "imp", importBatches())
		closeHandle(t, p, o.Handle)
		requireEvents(t, "the retried import", ReadAll(t, p, openSession(t, p, "imp", sdk.AccessRead).Handle), events)
	}},
	{name: "a-refused-batch-midway-leaves-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		gap := [][][]byte{Batch(0, 3), Batch(3, 4), Batch(8, 2)}
		_, err := importer(t, p).Import(t.Context(), header("imp"), yielding(gap, nil))
		RequireCode(t, err, sdk.CodeSeqNotContiguous, 8, 7)
		requireInvisible(t, p, "imp", "after an import with a gap", false)
		bad := [][][]byte{Batch(0, 3), {[]byte("not an envelope")}}
		_, err = importer(t, p).Import(t.Context(), header("imp"), yielding(bad, nil))
		RequireCode(t, err, sdk.CodeEnvelopeInvalid)
		requireInvisible(t, p, "imp", "after an import with a bad envelope", false)
		closeHandle(t, p, create(t, p, "imp").Handle) // the id is free
	}},
	{name: "a-context-ended-midway-leaves-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		_, err := importer(t, p).Import(ctx, header("imp"), yielding(importBatches(), func(i int) error {
			if i == 0 {
				cancel()
			}
			return nil
		}))
		if err == nil {
			t.Fatal("an import whose context ended midway succeeded")
		}
		requireInvisible(t, p, "imp", "after an import whose context ended", false)
		importOK(t, p, "imp", importBatches())
	}},
	{name: "existing-session-is-SESSION_ALREADY_EXISTS-and-nothing-changes", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, stored1(t, p, "imp"))
		before := snap(t, p, "imp")
		_, err := importer(t, p).Import(t.Context(), header("imp"), yielding(importBatches(), nil))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "imp")
		requireUnchanged(t, p, "imp", before)
		// The same events as stored: still refused (the host decides what
		// a repeated import means).
		_, err = importer(t, p).Import(t.Context(), header("imp"), yielding([][][]byte{Batch(0, 1)}, nil))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "imp")
		requireUnchanged(t, p, "imp", before)
	}},
	{name: "claimed-id-is-SESSION_ALREADY_EXISTS-and-stays-claimed", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		c := create(t, p, "imp")
		_, err := importer(t, p).Import(t.Context(), header("imp"), yielding(importBatches(), nil))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "imp")
		appendOK(t, p, c.Handle, Batch(0, 2))
		closeHandle(t, p, c.Handle)
		requireEvents(t, "the create's session", ReadAll(t, p, openSession(t, p, "imp", sdk.AccessRead).Handle), Batch(0, 2))
	}},
}
