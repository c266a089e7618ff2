package persistencetest

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

var ownershipRules = []rule{
	{name: "second-write-open-is-ALREADY_OWNED", run: func(t *testing.T, s *suite) {
		// Ownership, in one instance: the create handle holds the claim,
		// and so does a write open.
		p := s.backend(t)
		h := stored1(t, p, "s1")
		_, err := p.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		closeHandle(t, p, h)
		w := open(t, p, "s1", sdk.AccessWrite)
		before := snap(t, p, "s1")
		_, err = p.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		requireUnchanged(t, p, "s1", before)
		appendOK(t, p, w.Handle, Batch(1, 1)) // the owner is unaffected
	}},
	{name: "read-open-works-beside-a-writer", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		w, events := stored(t, p, "s1", Batch(0, 3))
		r := open(t, p, "s1", sdk.AccessRead)
		if r.NextSeq != 3 {
			t.Fatalf("Open(read) beside a writer: next seq %d; want 3", r.NextSeq)
		}
		requireEvents(t, "reader beside a writer", ReadAll(t, p, r.Handle), events)
		more := Batch(3, 2)
		appendOK(t, p, w, more)
		requireEvents(t, "reader after the writer appended", ReadAll(t, p, r.Handle), append(events, more...))
	}},
	{name: "write-handle-reads-its-own-appends", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		var events [][]byte
		for first := 0; first < 9; first += 3 {
			b := Batch(first, 3)
			appendOK(t, p, h, b)
			events = append(events, b...)
			requireEvents(t, "write handle after its append", ReadAll(t, p, h), events)
		}
	}},
	{name: "close-releases-the-write-claim", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, stored1(t, p, "s1"))
		w := open(t, p, "s1", sdk.AccessWrite)
		closeHandle(t, p, w.Handle)
		w = open(t, p, "s1", sdk.AccessWrite)
		appendOK(t, p, w.Handle, Batch(1, 1))
	}},
	{name: "failed-write-open-takes-no-claim", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := stored1(t, p, "s1")
		for range 3 {
			_, err := p.Open(t.Context(), "s1", sdk.AccessWrite)
			RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		}
		closeHandle(t, p, h)
		closeHandle(t, p, open(t, p, "s1", sdk.AccessWrite).Handle)
	}},
	{name: "close-is-idempotent", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		w := stored1(t, p, "s1")
		r := open(t, p, "s1", sdk.AccessRead).Handle
		for range 2 {
			closeHandle(t, p, w)
			closeHandle(t, p, r)
		}
		closeHandle(t, p, open(t, p, "s1", sdk.AccessWrite).Handle)
	}},
	{name: "closed-handle-is-HANDLE_CLOSED", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		w := stored1(t, p, "s1")
		r := open(t, p, "s1", sdk.AccessRead).Handle
		pending := create(t, p, "s2").Handle
		for _, h := range []string{w, r, pending} {
			closeHandle(t, p, h)
		}
		before := snap(t, p, "s1")
		for _, h := range []string{w, r, pending} {
			_, err := p.Append(t.Context(), h, 1, Batch(1, 1))
			RequireCode(t, err, sdk.CodeHandleClosed, h)
			err = p.Read(t.Context(), h, 0, -1, func([][]byte) error { return nil })
			RequireCode(t, err, sdk.CodeHandleClosed, h)
			_, err = p.Flush(t.Context(), h)
			RequireCode(t, err, sdk.CodeHandleClosed, h)
		}
		requireUnchanged(t, p, "s1", before)
		_, err := p.Stat(t.Context(), "s2") // Flush on the closed create handle stored nothing
		RequireCode(t, err, sdk.CodeSessionNotFound, "s2")
	}},
	{name: "read-handle-append-is-READ_ONLY_HANDLE", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, stored1(t, p, "s1"))
		r := open(t, p, "s1", sdk.AccessRead).Handle
		before := snap(t, p, "s1")
		_, err := p.Append(t.Context(), r, 1, Batch(1, 1))
		RequireCode(t, err, sdk.CodeReadOnlyHandle, r)
		requireUnchanged(t, p, "s1", before)
		// A read handle holds no claim.
		closeHandle(t, p, open(t, p, "s1", sdk.AccessWrite).Handle)
	}},
}
