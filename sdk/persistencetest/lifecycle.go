package persistencetest

import (
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

var describeRules = []rule{
	{name: "reports-name-and-format-version", run: func(t *testing.T, s *suite) {
		d, err := s.backend(t).Describe(t.Context())
		if err != nil {
			t.Fatalf("Describe: %v", err)
		}
		if d.FormatVersion != sdk.FormatVersion {
			t.Errorf("Describe format version %d; want %d", d.FormatVersion, sdk.FormatVersion)
		}
		if d.Name == "" || (s.h.Name != "" && d.Name != s.h.Name) {
			t.Errorf("Describe name %q; want %q", d.Name, s.h.Name)
		}
	}},
}

// invalidIDs break docs/architecture.md in each way it names.
var invalidIDs = map[string]string{
	"empty":        "",
	"81 bytes":     strings.Repeat("a", 81),
	"NUL byte":     "a\x00b",
	"DEL byte":     "a\x7fb",
	"invalid UTF8": "a\xffb",
}

var createRules = []rule{
	{name: "returns-a-write-handle-at-seq-0", run: func(t *testing.T, s *suite) {
		o := create(t, s.backend(t), "s1")
		if o.Handle == "" {
			t.Fatal("Create returned an empty handle")
		}
		requireHeader(t, "Create", o.Header, header("s1"))
		if o.NextSeq != 0 || o.Torn != (sdk.Torn{}) {
			t.Fatalf("Create returned next seq %d, torn %+v; want 0 and none", o.NextSeq, o.Torn)
		}
	}},
	{name: "stores-the-header-as-given", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := stored1(t, p, "s1")
		closeHandle(t, p, h)
		want := header("s1")
		requireHeader(t, "Open(read)", open(t, p, "s1", sdk.AccessRead).Header, want)
		requireHeader(t, "Open(write)", open(t, p, "s1", sdk.AccessWrite).Header, want)
		st := stat(t, p, "s1")
		requireHeader(t, "Stat", st.Header, want)
		if st.FormatVersion != sdk.FormatVersion {
			t.Fatalf("Stat format version %d; want %d", st.FormatVersion, sdk.FormatVersion)
		}
		requireHeader(t, "List", list(t, p)["s1"].Header, want)
	}},
	{name: "invalid-id-is-INVALID_SESSION_ID", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		for what, id := range invalidIDs {
			_, err := p.Create(t.Context(), header(id))
			t.Logf("%s: %v", what, err)
			RequireCode(t, err, sdk.CodeInvalidSessionID)
		}
		if l := list(t, p); len(l) != 0 {
			t.Fatalf("List after rejected creates has %d entries; want none", len(l))
		}
	}},
	{name: "existing-id-is-SESSION_ALREADY_EXISTS", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		create(t, p, "pending")
		open1 := stored1(t, p, "stored-open")
		closeHandle(t, p, stored1(t, p, "stored-closed"))
		before := snap(t, p, "stored-closed")
		for _, id := range []string{"pending", "stored-open", "stored-closed"} {
			_, err := p.Create(t.Context(), header(id))
			RequireCode(t, err, sdk.CodeSessionAlreadyExists, id)
		}
		requireUnchanged(t, p, "stored-closed", before)
		// The create handle kept its claim and its session.
		appendOK(t, p, open1, Batch(1, 1))
	}},
	{name: "unmaterialized-session-is-listed-but-not-stored", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o := create(t, p, "s1")
		e, ok := list(t, p)["s1"]
		if !ok || e.Err != nil {
			t.Fatalf("List of the creating instance: entry %+v, present %t; want the created session", e, ok)
		}
		requireHeader(t, "List", e.Header, header("s1"))
		if e.Revision != o.Revision {
			t.Fatalf("List revision %q; want Create's %q (nothing changed)", e.Revision, o.Revision)
		}
		_, err := p.Stat(t.Context(), "s1")
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		_, err = p.Open(t.Context(), "s1", sdk.AccessRead)
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		// The create handle holds the write claim from the start.
		_, err = p.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
	}},
	{name: "first-append-materializes-header-and-batch", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o := create(t, p, "s1")
		events := Batch(0, 3)
		d := appendOK(t, p, o.Handle, events)
		if d.Revision == o.Revision {
			t.Fatalf("revision %q did not change when the session was stored", d.Revision)
		}
		st := stat(t, p, "s1")
		s.requireCount(t, st, 3)
		requireHeader(t, "Stat", st.Header, header("s1"))
		r := open(t, p, "s1", sdk.AccessRead)
		if r.NextSeq != 3 {
			t.Fatalf("Open(read) next seq %d; want 3", r.NextSeq)
		}
		requireEvents(t, "Read after the first append", ReadAll(t, p, r.Handle), events)
	}},
	{name: "flush-materializes-an-empty-session", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		o := create(t, p, "s1")
		d := flush(t, p, o.Handle)
		if d.NextSeq != 0 {
			t.Fatalf("Flush of an empty create returned next seq %d; want 0", d.NextSeq)
		}
		if d.Revision == o.Revision {
			t.Fatalf("revision %q did not change when Flush stored the session", d.Revision)
		}
		st := stat(t, p, "s1")
		s.requireCount(t, st, 0)
		if st.Revision != d.Revision {
			t.Fatalf("Stat revision %q; want Flush's %q", st.Revision, d.Revision)
		}
		r := open(t, p, "s1", sdk.AccessRead)
		if r.NextSeq != 0 {
			t.Fatalf("Open(read) next seq %d; want 0", r.NextSeq)
		}
		requireHeader(t, "Open(read)", r.Header, header("s1"))
		requireEvents(t, "Read of an empty session", ReadAll(t, p, r.Handle), nil)
		// The create handle keeps writing after its Flush.
		appendOK(t, p, o.Handle, Batch(0, 2))
	}},
	{name: "closing-an-unmaterialized-create-abandons-it", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, create(t, p, "s1").Handle)
		if _, ok := list(t, p)["s1"]; ok {
			t.Fatal("List still shows an abandoned create")
		}
		_, err := p.Stat(t.Context(), "s1")
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		o := create(t, p, "s1")
		appendOK(t, p, o.Handle, Batch(0, 1))
	}},
}

var openRules = []rule{
	{name: "missing-session-is-SESSION_NOT_FOUND", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err := p.Open(t.Context(), "absent", a)
			RequireCode(t, err, sdk.CodeSessionNotFound, "absent")
		}
		if l := list(t, p); len(l) != 0 {
			t.Fatalf("List after failed opens has %d entries; want none", len(l))
		}
	}},
	{name: "invalid-id-is-INVALID_SESSION_ID", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		for what, id := range invalidIDs {
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				_, err := p.Open(t.Context(), id, a)
				t.Logf("%s, %s: %v", what, accessName(a), err)
				RequireCode(t, err, sdk.CodeInvalidSessionID)
			}
		}
	}},
	{name: "reports-header-next-seq-and-revision", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		closeHandle(t, p, h)
		rev := stat(t, p, "s1").Revision
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			o := open(t, p, "s1", a)
			requireHeader(t, "Open("+accessName(a)+")", o.Header, header("s1"))
			if o.Handle == "" || o.NextSeq != 5 || o.Revision != rev || o.Torn != (sdk.Torn{}) {
				t.Fatalf("Open(%s) = handle %q, next seq %d, revision %q, torn %+v; want a handle, 5, %q, none",
					accessName(a), o.Handle, o.NextSeq, o.Revision, o.Torn, rev)
			}
			closeHandle(t, p, o.Handle)
		}
	}},
	{name: "handle-names-are-never-reused", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		first := stored1(t, p, "s1")
		closeHandle(t, p, first)
		seen := map[string]bool{first: true}
		for i := range 6 {
			a := []sdk.Access{sdk.AccessRead, sdk.AccessWrite}[i%2]
			o := open(t, p, "s1", a)
			if seen[o.Handle] {
				t.Fatalf("Open(%s) reused handle %q", accessName(a), o.Handle)
			}
			seen[o.Handle] = true
			closeHandle(t, p, o.Handle)
		}
		err := p.Read(t.Context(), first, 0, -1, func([][]byte) error { return nil })
		RequireCode(t, err, sdk.CodeHandleClosed, first)
	}},
}

// stored1 creates session id holding one event and returns its create
// handle, still open.
func stored1(t *testing.T, p sdk.Persistence, id string) string {
	t.Helper()
	h, _ := stored(t, p, id, Batch(0, 1))
	return h
}
