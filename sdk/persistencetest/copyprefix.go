package persistencetest

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// copier returns p as an sdk.PrefixCopier; the CopyPrefix group runs only
// for a backend that declares and implements it.
func copier(t *testing.T, p sdk.Persistence) sdk.PrefixCopier {
	t.Helper()
	return implementation[sdk.PrefixCopier](t, p)
}

// copyPrefixSource stores session "src" as three batches (seqs 0–2, 3–6,
// 7–9) and returns its events; the write handle stays open when keepOpen,
// as a live source's writer's does, and is closed otherwise.
func copyPrefixSource(t *testing.T, p sdk.Persistence, keepOpen bool) [][]byte {
	t.Helper()
	h, events := stored(t, p, "src", Batch(0, 3), Batch(3, 4), Batch(7, 3))
	if !keepOpen {
		closeHandle(t, p, h)
	}
	return events
}

var copyPrefixRules = []rule{
	{name: "child-holds-exactly-the-prefix-byte-equal-at-every-boundary", run: func(t *testing.T, s *suite) {
		for _, open := range []bool{false, true} {
			p := s.backend(t)
			c := copier(t, p)
			events := copyPrefixSource(t, p, open)
			for b := range len(events) {
				id := "child-" + string(rune('a'+b))
				h := header(id)
				o, err := c.CopyPrefix(t.Context(), "src", sdk.Seq(b), h)
				if err != nil {
					t.Fatalf("CopyPrefix(src, %d) (source writer open: %t): %v", b, open, err)
				}
				if o.NextSeq != sdk.Offset(b+1) {
					t.Fatalf("CopyPrefix(src, %d) NextSeq = %d; want %d", b, o.NextSeq, b+1)
				}
				requireEvents(t, "the child's write handle", ReadAll(t, p, o.Handle), events[:b+1])
				closeHandle(t, p, o.Handle)
				r := openSession(t, p, id, sdk.AccessRead)
				requireHeader(t, "the child's stored header", r.Header, h)
				requireEvents(t, "a read of the child", ReadAll(t, p, r.Handle), events[:b+1])
				s.requireCount(t, stat(t, p, id), b+1)
				closeHandle(t, p, r.Handle)
			}
		}
	}},
	{name: "child-is-durable-and-takes-appends-through-its-handle", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := copyPrefixSource(t, p, false)
		o, err := copier(t, p).CopyPrefix(t.Context(), "src", 4, header("child"))
		if err != nil {
			t.Fatalf("CopyPrefix: %v", err)
		}
		more := [][]byte{Envelope(5, "session/end-seed", `{"inherited":true}`), Envelope(6, "turn/end", `{"turn":1,"reason":{"kind":"forked"}}`)}
		appendOK(t, p, o.Handle, more)
		if _, err := p.Append(t.Context(), o.Handle, 3, Batch(3, 1)); err == nil {
			t.Fatal("an append at seq 3 of a child holding 0–6 succeeded; want SEQ_CONFLICT")
		} else {
			RequireCode(t, err, sdk.CodeSeqConflict, 3, 7)
		}
		closeHandle(t, p, o.Handle)
		q := p
		if s.h.Reopen != nil {
			q = s.reopen(t, p)
		}
		r := openSession(t, q, "child", sdk.AccessRead)
		requireEvents(t, "the child after its appends", ReadAll(t, q, r.Handle), append(append([][]byte{}, events[:5]...), more...))
		requireEvents(t, "the source, unchanged", ReadAll(t, q, openSession(t, q, "src", sdk.AccessRead).Handle), events)
	}},
	{name: "child-holds-the-write-claim", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		copyPrefixSource(t, p, false)
		o, err := copier(t, p).CopyPrefix(t.Context(), "src", 1, header("child"))
		if err != nil {
			t.Fatalf("CopyPrefix: %v", err)
		}
		_, err = p.Open(t.Context(), "child", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "child")
		closeHandle(t, p, o.Handle)
		closeHandle(t, p, openSession(t, p, "child", sdk.AccessWrite).Handle)
	}},
	{name: "existing-child-is-SESSION_ALREADY_EXISTS-and-nothing-changes", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		copyPrefixSource(t, p, false)
		stored1(t, p, "child")
		before := snap(t, p, "child")
		_, err := copier(t, p).CopyPrefix(t.Context(), "src", 2, header("child"))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "child")
		requireUnchanged(t, p, "child", before)
		// Checked first: also with a source that does not exist.
		_, err = copier(t, p).CopyPrefix(t.Context(), "nope", 2, header("child"))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "child")
	}},
	{name: "missing-source-is-SESSION_NOT_FOUND-and-no-child-exists", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		_, err := copier(t, p).CopyPrefix(t.Context(), "nope", 0, header("child"))
		RequireCode(t, err, sdk.CodeSessionNotFound, "nope")
		requireNoSession(t, p, "child")
	}},
	{name: "boundary-outside-the-source-is-INVALID_BOUNDARY-and-no-child-exists", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		copyPrefixSource(t, p, false)
		for _, b := range []sdk.Seq{10, 11, -1} {
			_, err := copier(t, p).CopyPrefix(t.Context(), "src", b, header("child"))
			RequireCode(t, err, sdk.CodeInvalidBoundary, int64(b))
			requireNoSession(t, p, "child")
		}
		// The id stays free.
		closeHandle(t, p, create(t, p, "child").Handle)
	}},
}

// requireNoSession fails unless session id is not stored.
func requireNoSession(t *testing.T, p sdk.Persistence, id string) {
	t.Helper()
	_, err := p.Stat(t.Context(), id)
	RequireCode(t, err, sdk.CodeSessionNotFound, id)
}

// openSession opens id and closes the handle when the test ends.
func openSession(t *testing.T, p sdk.Persistence, id string, access sdk.Access) sdk.Opened {
	t.Helper()
	o := open(t, p, id, access)
	t.Cleanup(func() { _ = p.Close(t.Context(), o.Handle) })
	return o
}
