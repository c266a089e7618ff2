package persistencetest

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// instanceRule is a rule over two instances a and b of one storage.
func instanceRule(name string, run func(t *testing.T, s *suite, a, b sdk.Persistence)) rule {
	return rule{name: name, needs: []string{hookReopen}, run: func(t *testing.T, s *suite) {
		a := s.backend(t)
		run(t, s, a, s.reopen(t, a))
	}}
}

var instanceRules = []rule{
	instanceRule("unmaterialized-create-is-invisible-to-another-instance", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		h := create(t, a, "s1").Handle
		_, err := b.Stat(t.Context(), "s1")
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		for _, acc := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err = b.Open(t.Context(), "s1", acc)
			RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		}
		if _, ok := list(t, b)["s1"]; ok {
			t.Fatal("another instance lists an unmaterialized create")
		}
		flush(t, a, h)
		requireHeader(t, "Stat in the other instance after Flush", stat(t, b, "s1").Header, header("s1"))
		if _, ok := list(t, b)["s1"]; !ok {
			t.Fatal("another instance does not list a materialized session")
		}
	}),
	instanceRule("stored-events-read-back-byte-equal-in-another-instance", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		events := variedEvents()
		w, _ := stored(t, a, "s1", events[:3])
		r := open(t, b, "s1", sdk.AccessRead)
		if r.NextSeq != 3 {
			t.Fatalf("Open(read) in the other instance: next seq %d; want 3", r.NextSeq)
		}
		requireEvents(t, "other instance", ReadAll(t, b, r.Handle), events[:3])
		appendOK(t, a, w, events[3:])
		requireEvents(t, "other instance's read handle after an append", ReadAll(t, b, r.Handle), events)
		st := stat(t, b, "s1")
		s.requireCount(t, st, len(events))
		r2 := open(t, b, "s1", sdk.AccessRead)
		if r2.NextSeq != sdk.Offset(len(events)) {
			t.Fatalf("Open(read) in the other instance after an append: next seq %d; want %d", r2.NextSeq, len(events))
		}
		if st.Revision == r.Revision {
			t.Fatalf("the other instance reports revision %q both before and after an append", st.Revision)
		}
	}),
	instanceRule("write-claim-is-exclusive-across-instances", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		// Scenario 31: a second Open(write), also from another process.
		w := stored1(t, a, "s1")
		before := snap(t, b, "s1")
		_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		r := open(t, b, "s1", sdk.AccessRead)
		requireEvents(t, "reader in the other instance", ReadAll(t, b, r.Handle), before.events)
		requireUnchanged(t, b, "s1", before)
		closeHandle(t, a, w)
		bw := open(t, b, "s1", sdk.AccessWrite)
		_, err = a.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		appendOK(t, b, bw.Handle, Batch(1, 1))
	}),
	instanceRule("create-of-an-id-stored-by-another-instance-is-SESSION_ALREADY_EXISTS", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		w := stored1(t, a, "open")
		closeHandle(t, a, stored1(t, a, "closed"))
		for _, id := range []string{"open", "closed"} {
			_, err := b.Create(t.Context(), header(id))
			RequireCode(t, err, sdk.CodeSessionAlreadyExists, id)
		}
		appendOK(t, a, w, Batch(1, 1))
	}),
	instanceRule("racing-creates-in-two-instances-store-one-session", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		wa := create(t, a, "s1").Handle
		ob, err := b.Create(t.Context(), header("s1"))
		if err != nil { // allowed: b may see a's reservation
			RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		}
		events := Batch(0, 3)
		appendOK(t, a, wa, events)
		if err == nil {
			other := [][]byte{Envelope(0, "todo/write", `{"todos":[{"content":"the loser","status":"pending"}]}`)}
			_, err := b.Append(t.Context(), ob.Handle, 0, other)
			RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
			closeHandle(t, a, wa)
			_, err = b.Flush(t.Context(), ob.Handle)
			RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		}
		for _, p := range []sdk.Persistence{a, b} {
			r := open(t, p, "s1", sdk.AccessRead)
			requireEvents(t, "the stored session after the race", ReadAll(t, p, r.Handle), events)
		}
	}),
}
