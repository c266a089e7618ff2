package persistencetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

var freshnessRules = []rule{
	{name: "read-stat-list-show-every-acknowledged-prefix", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		early := "" // a read handle opened before the later appends
		var events [][]byte
		for first := 0; first < 20; first += 4 {
			b := Batch(first, 4)
			d := appendOK(t, p, h, b)
			events = append(events, b...)
			if early == "" {
				early = open(t, p, "s1", sdk.AccessRead).Handle
			}
			requireEvents(t, "read handle opened earlier", ReadAll(t, p, early), events)
			r := open(t, p, "s1", sdk.AccessRead)
			if r.NextSeq != sdk.Offset(len(events)) || r.Revision != d.Revision {
				t.Fatalf("Open(read) after Append: next seq %d, revision %q; want %d, %q", r.NextSeq, r.Revision, len(events), d.Revision)
			}
			requireEvents(t, "new read handle", ReadAll(t, p, r.Handle), events)
			closeHandle(t, p, r.Handle)
			st := stat(t, p, "s1")
			s.requireCount(t, st, len(events))
			if st.Revision != d.Revision {
				t.Fatalf("Stat revision %q after Append; want the Append reply's %q", st.Revision, d.Revision)
			}
			if e := list(t, p)["s1"]; e.Err != nil || e.Revision != d.Revision {
				t.Fatalf("List entry after Append: revision %q, error %v; want %q", e.Revision, e.Err, d.Revision)
			}
		}
	}},
	{name: "flush-reports-the-acknowledged-next-seq", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		appendOK(t, p, h, Batch(0, 3))
		d := appendOK(t, p, h, Batch(3, 4))
		f := flush(t, p, h)
		if f != d {
			t.Fatalf("Flush = %+v; want the last Append reply %+v", f, d)
		}
	}},
}

var revisionRules = []rule{
	{name: "every-append-makes-a-new-revision", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o := create(t, p, "s1")
		seen := map[string]int{o.Revision: -1}
		d := flush(t, p, o.Handle)
		if _, dup := seen[d.Revision]; dup {
			t.Fatalf("revision %q after materialization equals the create's", d.Revision)
		}
		seen[d.Revision] = 0
		for i := 1; i <= 10; i++ {
			d := appendOK(t, p, o.Handle, Batch(i-1, 1))
			if at, dup := seen[d.Revision]; dup {
				t.Fatalf("append %d made revision %q, already seen after change %d", i, d.Revision, at)
			}
			seen[d.Revision] = i
		}
	}},
	{name: "reads-rejections-and-ownership-leave-it-unchanged", run: func(t *testing.T, s *suite) {
		// Inspect is read-only, the storage part: reading (Inspect) changes neither
		// bytes nor revision; neither do ownership changes.
		p := s.backend(t)
		w, _ := stored(t, p, "s1", Batch(0, 5))
		want := flush(t, p, w).Revision
		check := func(what, got string) {
			t.Helper()
			if got != want {
				t.Fatalf("%s: revision %q; want %q (nothing changed)", what, got, want)
			}
		}
		check("Stat", stat(t, p, "s1").Revision)
		check("List", list(t, p)["s1"].Revision)
		r := open(t, p, "s1", sdk.AccessRead)
		check("Open(read) beside the writer", r.Revision)
		ReadAll(t, p, r.Handle)
		closeHandle(t, p, r.Handle)
		_, err := p.Append(t.Context(), w, 2, Batch(2, 1))
		RequireCode(t, err, sdk.CodeSeqConflict, 2, 5)
		check("Stat after a rejected append", stat(t, p, "s1").Revision)
		check("Flush with nothing new", flush(t, p, w).Revision)
		closeHandle(t, p, w)
		check("Stat after the writer closed", stat(t, p, "s1").Revision)
		w2 := open(t, p, "s1", sdk.AccessWrite)
		check("Open(write)", w2.Revision)
		_, err = p.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		closeHandle(t, p, w2.Handle)
		check("Stat after claim and release", stat(t, p, "s1").Revision)
	}},
}

var readRules = []rule{
	{name: "offset-and-length-select-a-window", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, events := stored(t, p, "s1", Batch(0, 10))
		cases := []struct {
			offset     sdk.Offset
			length     int64
			start, end int
		}{
			{0, -1, 0, 10}, {0, 3, 0, 3}, {4, 3, 4, 7}, {7, -1, 7, 10}, {8, 5, 8, 10},
			{0, 0, 0, 0}, {3, 0, 3, 3}, {9, 1, 9, 10}, {10, -1, 10, 10}, {10, 3, 10, 10},
			{25, -1, 10, 10}, {25, 4, 10, 10}, // past the end: nothing, no error
		}
		for _, c := range cases {
			got := readRange(t, p, h, c.offset, c.length)
			requireEvents(t, fmt.Sprintf("Read(offset %d, length %d)", c.offset, c.length), got, events[c.start:c.end])
		}
	}},
	{name: "offset-below-0-or-length-below-minus-1-is-INVALID_SEQ", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := stored1(t, p, "s1")
		called := false
		fn := func([][]byte) error { called = true; return nil }
		err := p.Read(t.Context(), h, -1, -1, fn)
		RequireCode(t, err, sdk.CodeInvalidSeq, -1)
		err = p.Read(t.Context(), h, 0, -2, fn)
		RequireCode(t, err, sdk.CodeInvalidSeq, -2)
		if called {
			t.Fatal("Read called fn for a rejected window")
		}
	}},
	{name: "fn-error-ends-the-read-and-comes-back", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		for first := 0; first < 4_000; first += 1_000 {
			appendOK(t, p, h, Batch(first, 1_000))
		}
		stop := errors.New("stop here")
		calls := 0
		err := p.Read(t.Context(), h, 0, -1, func([][]byte) error { calls++; return stop })
		if !errors.Is(err, stop) {
			t.Fatalf("Read returned %v; want fn's error %q", err, stop)
		}
		if calls != 1 {
			t.Fatalf("fn was called %d times after returning an error; want 1", calls)
		}
		requireEvents(t, "a later read on the same handle", ReadAll(t, p, h), append(Batch(0, 1_000), append(Batch(1_000, 1_000), append(Batch(2_000, 1_000), Batch(3_000, 1_000)...)...)...))
	}},
}

var statRules = []rule{
	{name: "missing-session-is-SESSION_NOT_FOUND", run: func(t *testing.T, s *suite) {
		_, err := s.backend(t).Stat(t.Context(), "absent")
		RequireCode(t, err, sdk.CodeSessionNotFound, "absent")
	}},
	{name: "invalid-id-is-INVALID_SESSION_ID", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		for what, id := range invalidIDs {
			_, err := p.Stat(t.Context(), id)
			t.Logf("%s: %v", what, err)
			RequireCode(t, err, sdk.CodeInvalidSessionID)
		}
	}},
	{name: "reports-header-format-revision-and-counts", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		d := flush(t, p, h)
		st := stat(t, p, "s1")
		requireHeader(t, "Stat", st.Header, header("s1"))
		if st.FormatVersion != sdk.FormatVersion || st.Revision != d.Revision {
			t.Fatalf("Stat format version %d, revision %q; want %d, %q", st.FormatVersion, st.Revision, sdk.FormatVersion, d.Revision)
		}
		s.requireCount(t, st, 0)
		size := st.SizeBytes
		s.requireSize(t, size, -1)
		for first := 0; first < 12; first += 4 {
			appendOK(t, p, h, Batch(first, 4))
			st := stat(t, p, "s1")
			s.requireCount(t, st, first+4)
			s.requireSize(t, st.SizeBytes, size)
			size = st.SizeBytes
		}
	}},
}

// requireSize checks a Stat size: -1 (unknown) or ≥ 0, and with StatCounts
// > 0 and above the previous size (prev -1: no previous).
func (s *suite) requireSize(t *testing.T, size, prev int64) {
	t.Helper()
	switch {
	case s.h.Capabilities.StatCounts && (size <= 0 || size <= prev):
		t.Fatalf("Stat size %d bytes; want > 0 and > the previous %d (StatCounts)", size, prev)
	case size < -1:
		t.Fatalf("Stat size %d bytes; want -1 or ≥ 0", size)
	}
}

var listRules = []rule{
	{name: "empty-backend-lists-nothing", run: func(t *testing.T, s *suite) {
		if l := list(t, s.backend(t)); len(l) != 0 {
			t.Fatalf("List of a new backend has %d entries; want none", len(l))
		}
	}},
	{name: "lists-stored-and-created-sessions-once", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, stored1(t, p, "closed"))
		stored1(t, p, "open")
		flush(t, p, create(t, p, "flushed").Handle)
		create(t, p, "pending")
		l := list(t, p)
		if len(l) != 4 {
			t.Fatalf("List has %d entries; want 4 (closed, open, flushed, pending)", len(l))
		}
		for id, e := range l {
			if e.ID != id || e.Err != nil {
				t.Fatalf("List entry %+v; want session %q without error", e, id)
			}
			requireHeader(t, "List", e.Header, header(id))
			if id == "pending" {
				continue
			}
			if rev := stat(t, p, id).Revision; e.Revision != rev {
				t.Fatalf("List revision of %q is %q; Stat says %q", id, e.Revision, rev)
			}
		}
	}},
	{name: "last-activity-is-not-before-creation-and-never-goes-back", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		created := header("s").CreatedAt
		h, _ := stored(t, p, "s", Batch(0, 2))
		create(t, p, "pending")
		before := stat(t, p, "s")
		if before.LastActivity != 0 && before.LastActivity < created {
			t.Fatalf("Stat LastActivity %d is before the session's createdAt %d; want 0 (unknown) or ≥ it", before.LastActivity, created)
		}
		appendOK(t, p, h, Batch(2, 3))
		after := stat(t, p, "s")
		if after.LastActivity < before.LastActivity {
			t.Fatalf("Stat LastActivity went back from %d to %d after an append", before.LastActivity, after.LastActivity)
		}
		l := list(t, p)
		if e := l["s"]; e.LastActivity != after.LastActivity || (e.EventCount != -1 && e.EventCount != 5) {
			t.Fatalf("List entry of s: LastActivity %d, EventCount %d; want Stat's LastActivity %d and EventCount 5 or -1 (unknown)",
				e.LastActivity, e.EventCount, after.LastActivity)
		}
		if e := l["pending"]; e.EventCount > 0 || e.EventCount < -1 || (e.LastActivity != 0 && e.LastActivity < created) {
			t.Fatalf("List entry of an unmaterialized create: EventCount %d, LastActivity %d; want 0 or -1 events, activity 0 or ≥ createdAt",
				e.EventCount, e.LastActivity)
		}
	}},
	{name: "fn-error-ends-the-listing-and-comes-back", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		for _, id := range []string{"a", "b", "c"} {
			stored1(t, p, id)
		}
		stop := errors.New("stop here")
		calls := 0
		err := p.List(t.Context(), func(sdk.ListEntry) error { calls++; return stop })
		if !errors.Is(err, stop) || calls != 1 {
			t.Fatalf("List returned %v after %d calls; want fn's error %q after 1", err, calls, stop)
		}
	}},
}
