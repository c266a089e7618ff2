package persistencetest

import (
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// migrationRules check the format migrations of docs/format.md "Format
// versions" on a session the harness stores as format v1 (SetFormatVersion
// "1" on a strict session, which has no v2-only member), and the header
// member that v2 added.
var migrationRules = []rule{
	{name: "a-v1-session-reads-as-v2-and-a-read-open-stores-nothing", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeV1(t, s, p, "s1")
		before := statOK(t, p, "s1")
		if before.FormatVersion != 1 || before.Header.FormatVersion != 1 {
			t.Fatalf("Stat of the stored v1 session: format version %d, header v%d; want 1 (Stat reports what is stored)", before.FormatVersion, before.Header.FormatVersion)
		}
		for range 2 {
			o := open(t, p, "s1", sdk.AccessRead)
			want := header("s1")
			requireHeader(t, "Open(read) of a v1 session", o.Header, want)
			requireEvents(t, "Open(read) of a v1 session", ReadAll(t, p, o.Handle), events)
			closeHandle(t, p, o.Handle)
		}
		after := statOK(t, p, "s1")
		if after.FormatVersion != 1 || after.Revision != before.Revision {
			t.Fatalf("after read opens: stored format v%d, revision %q; want v1 and %q unchanged (a read open writes nothing)", after.FormatVersion, after.Revision, before.Revision)
		}
	}},
	{name: "a-write-open-stores-v2-with-the-same-events-and-resumes", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeV1(t, s, p, "s1")
		w := open(t, p, "s1", sdk.AccessWrite)
		requireHeader(t, "Open(write) of a v1 session", w.Header, header("s1"))
		if w.NextSeq != sdk.Offset(len(events)) {
			t.Fatalf("Open(write) of a v1 session: next seq %d; want %d", w.NextSeq, len(events))
		}
		requireEvents(t, "the migrated session", ReadAll(t, p, w.Handle), events)
		more := Batch(len(events), 2)
		appendOK(t, p, w.Handle, more)
		closeHandle(t, p, w.Handle)
		st := statOK(t, p, "s1")
		if st.FormatVersion != sdk.FormatVersion || st.Header.FormatVersion != sdk.FormatVersion {
			t.Fatalf("Stat after a write open: format version %d, header v%d; want v%d stored", st.FormatVersion, st.Header.FormatVersion, sdk.FormatVersion)
		}
		r := open(t, p, "s1", sdk.AccessRead)
		requireHeader(t, "the stored v2 session", r.Header, header("s1"))
		requireEvents(t, "the stored v2 session", ReadAll(t, p, r.Handle), append(events, more...))
		if e := list(t, p)["s1"]; e.Err != nil || e.Header.FormatVersion != sdk.FormatVersion {
			t.Fatalf("List entry after the migration: %+v", e)
		}
	}},
	{name: "a-lenient-session-keeps-its-protocol", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := storeLenient(t, p, "s1")
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			o := open(t, p, "s1", a)
			requireHeader(t, "Open("+accessName(a)+") of a lenient session", o.Header, h)
			closeHandle(t, p, o.Handle)
		}
		requireHeader(t, "Stat of a lenient session", statOK(t, p, "s1").Header, h)
		requireHeader(t, "List entry of a lenient session", list(t, p)["s1"].Header, h)
	}},
	{name: "a-v1-header-naming-a-protocol-is-CORRUPT_LOG", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeLenient(t, p, "s1")
		s.h.SetFormatVersion(t, p, "s1", "1")
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err := p.Open(t.Context(), "s1", a)
			RequireCode(t, err, sdk.CodeCorruptLog, "s1", `"protocol"`)
		}
	}},
}

// storeLenient creates session id with protocol lenient, appends one
// event and closes it; it returns the header Create was given.
func storeLenient(t *testing.T, p sdk.Persistence, id string) sdk.Header {
	t.Helper()
	h := header(id)
	h.Protocol = sdk.ProtocolLenient
	c, err := p.Create(t.Context(), h)
	if err != nil {
		t.Fatalf("Create(lenient): %v", err)
	}
	requireHeader(t, "Create(lenient)", c.Header, h)
	appendOK(t, p, c.Handle, Batch(0, 1))
	closeHandle(t, p, c.Handle)
	return h
}

// storeV1 stores session id with a few events and has the harness make
// it a format v1 session; it returns the events.
func storeV1(t *testing.T, s *suite, p sdk.Persistence, id string) [][]byte {
	t.Helper()
	events := storeClosed(t, p, id, [][][]byte{Batch(0, 3), Batch(3, 2)})
	s.h.SetFormatVersion(t, p, id, "1")
	return events
}

// statOK is Stat that fails the test on an error.
func statOK(t *testing.T, p sdk.Persistence, id string) sdk.Stat {
	t.Helper()
	st, err := p.Stat(t.Context(), id)
	if err != nil {
		t.Fatalf("Stat(%q): %v", id, err)
	}
	return st
}

// currentVersion is the literal of sdk.FormatVersion, as SetFormatVersion
// takes it.
var currentVersion = strconv.Itoa(sdk.FormatVersion)
