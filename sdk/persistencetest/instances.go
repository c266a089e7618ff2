package persistencetest

import (
	"fmt"
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
		_, err = b.Open(t.Context(), "s1", sdk.AccessRead)
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
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
		// Ownership: a second Open(write), also from another process.
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
	instanceRule("create-claims-the-id-in-every-instance-before-it-returns", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		// Nothing is stored yet, but the id is taken: another instance can
		// neither create it nor open it for writing, so the creator's
		// first append cannot be lost to a second creator.
		wa := create(t, a, "s1").Handle
		_, err := b.Create(t.Context(), header("s1"))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
		events := Batch(0, 3)
		appendOK(t, a, wa, events)
		r := open(t, b, "s1", sdk.AccessRead)
		requireEvents(t, "the other instance after the creator's append", ReadAll(t, b, r.Handle), events)
		_, err = b.Create(t.Context(), header("s1"))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
		RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
	}),
	instanceRule("abandoned-create-frees-the-id-for-another-instance", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		closeHandle(t, a, create(t, a, "s1").Handle)
		_, err := b.Stat(t.Context(), "s1")
		RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		wb := create(t, b, "s1").Handle
		_, err = a.Create(t.Context(), header("s1"))
		RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1")
		appendOK(t, b, wb, Batch(0, 1))
		r := open(t, a, "s1", sdk.AccessRead)
		requireEvents(t, "the first instance after the second stored it", ReadAll(t, a, r.Handle), Batch(0, 1))
	}),
	instanceRule("racing-creates-in-two-instances-grant-one", func(t *testing.T, s *suite, a, b sdk.Persistence) {
		for i := range 20 {
			id := fmt.Sprintf("s%d", i)
			inst := []sdk.Persistence{a, b, a, b}
			handles := make([]string, len(inst))
			errs := race(len(inst), func(g int) error {
				o, err := inst[g].Create(t.Context(), header(id))
				handles[g] = o.Handle
				return err
			})
			w := requireOneWinner(t, errs, sdk.CodeSessionAlreadyExists, id)
			events := Batch(0, 2)
			appendOK(t, inst[w], handles[w], events)
			for _, p := range []sdk.Persistence{a, b} {
				r := open(t, p, id, sdk.AccessRead)
				requireEvents(t, "the stored session after the race", ReadAll(t, p, r.Handle), events)
			}
		}
	}),
}
