package persistencetest

import (
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// migrationRules check the format migrations of docs/format.md "Format
// versions" on a session the harness stores as an older format
// (SetFormatVersion "1" or "2" on a strict session without labels, which
// has no member those versions lack), and the header members that v2
// ("protocol") and v3 ("labels") added.
var migrationRules = []rule{
	{name: "an-older-session-reads-as-current-and-a-read-open-stores-nothing", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		for _, v := range olderVersions() {
			t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
				p := s.backend(t)
				events := storeOld(t, s, p, "s1", v)
				before := statOK(t, p, "s1")
				if before.FormatVersion != v || before.Header.FormatVersion != v {
					t.Fatalf("Stat of the stored v%d session: format version %d, header v%d; want %d (Stat reports what is stored)", v, before.FormatVersion, before.Header.FormatVersion, v)
				}
				for range 2 {
					o := open(t, p, "s1", sdk.AccessRead)
					requireHeader(t, "Open(read) of an older session", o.Header, header("s1"))
					requireEvents(t, "Open(read) of an older session", ReadAll(t, p, o.Handle), events)
					closeHandle(t, p, o.Handle)
				}
				after := statOK(t, p, "s1")
				if after.FormatVersion != v || after.Revision != before.Revision {
					t.Fatalf("after read opens: stored format v%d, revision %q; want v%d and %q unchanged (a read open writes nothing)", after.FormatVersion, after.Revision, v, before.Revision)
				}
			})
		}
	}},
	{name: "a-write-open-stores-the-current-version-with-the-same-events-and-resumes", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		for _, v := range olderVersions() {
			t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
				p := s.backend(t)
				events := storeOld(t, s, p, "s1", v)
				w := open(t, p, "s1", sdk.AccessWrite)
				requireHeader(t, "Open(write) of an older session", w.Header, header("s1"))
				if w.NextSeq != sdk.Offset(len(events)) {
					t.Fatalf("Open(write) of a v%d session: next seq %d; want %d", v, w.NextSeq, len(events))
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
				requireHeader(t, "the migrated session", r.Header, header("s1"))
				requireEvents(t, "the migrated session", ReadAll(t, p, r.Handle), append(events, more...))
				if e := list(t, p)["s1"]; e.Err != nil || e.Header.FormatVersion != sdk.FormatVersion {
					t.Fatalf("List entry after the migration: %+v", e)
				}
			})
		}
	}},
	{name: "a-lenient-session-keeps-its-protocol", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := header("s1")
		h.Protocol = sdk.ProtocolLenient
		storeWith(t, p, h)
		requireHeaderEverywhere(t, p, "a lenient session", h)
	}},
	{name: "a-labelled-session-keeps-its-labels", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := header("s1")
		h.Labels = map[string]string{"framework": "openai-agents", "key": "app/user \"é\" \u2028", "0.a_b/c-d": ""}
		storeWith(t, p, h)
		requireHeaderEverywhere(t, p, "a labelled session", h)
	}},
	{name: "a-v1-header-naming-a-protocol-is-CORRUPT_LOG", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := header("s1")
		h.Protocol = sdk.ProtocolLenient
		storeWith(t, p, h)
		s.h.SetFormatVersion(t, p, "s1", "1")
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err := p.Open(t.Context(), "s1", a)
			RequireCode(t, err, sdk.CodeCorruptLog, "s1", `"protocol"`)
		}
	}},
	{name: "a-v2-header-naming-labels-is-CORRUPT_LOG", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := header("s1")
		h.Labels = map[string]string{"a": "b"}
		storeWith(t, p, h)
		s.h.SetFormatVersion(t, p, "s1", "2")
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err := p.Open(t.Context(), "s1", a)
			RequireCode(t, err, sdk.CodeCorruptLog, "s1", `"labels"`)
		}
	}},
}

// olderVersions are the format versions before sdk.FormatVersion that
// this build migrates.
func olderVersions() []int {
	var vs []int
	for v := sdk.MinSupportedFormat; v < sdk.FormatVersion; v++ {
		vs = append(vs, v)
	}
	return vs
}

// storeWith creates a session with header h, appends one event and closes
// it.
func storeWith(t *testing.T, p sdk.Persistence, h sdk.Header) {
	t.Helper()
	c, err := p.Create(t.Context(), h)
	if err != nil {
		t.Fatalf("Create(%+v): %v", h, err)
	}
	requireHeader(t, "Create", c.Header, h)
	appendOK(t, p, c.Handle, Batch(0, 1))
	closeHandle(t, p, c.Handle)
}

// requireHeaderEverywhere checks that Open (read and write), Stat and
// List give session h.ID's header as h.
func requireHeaderEverywhere(t *testing.T, p sdk.Persistence, what string, h sdk.Header) {
	t.Helper()
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		o := open(t, p, h.ID, a)
		requireHeader(t, "Open("+accessName(a)+") of "+what, o.Header, h)
		closeHandle(t, p, o.Handle)
	}
	requireHeader(t, "Stat of "+what, statOK(t, p, h.ID).Header, h)
	requireHeader(t, "List entry of "+what, list(t, p)[h.ID].Header, h)
}

// storeOld stores session id with a few events and has the harness make
// it a format v session; it returns the events.
func storeOld(t *testing.T, s *suite, p sdk.Persistence, id string, v int) [][]byte {
	t.Helper()
	events := storeClosed(t, p, id, [][][]byte{Batch(0, 3), Batch(3, 2)})
	s.h.SetFormatVersion(t, p, id, strconv.Itoa(v))
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
