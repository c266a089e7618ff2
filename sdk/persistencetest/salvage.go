package persistencetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// salvager returns p as an sdk.SalvageReader; the SalvageReader group runs
// only for a backend that implements it.
func salvager(t *testing.T, p sdk.Persistence) sdk.SalvageReader {
	t.Helper()
	return implementation[sdk.SalvageReader](t, p)
}

// readDamaged calls ReadDamaged on id and returns its reply and every
// event it passed to fn.
func readDamaged(t *testing.T, p sdk.Persistence, id string) (sdk.Damaged, [][]byte) {
	t.Helper()
	var got [][]byte
	d, err := salvager(t, p).ReadDamaged(t.Context(), id, func(events [][]byte) error {
		got = append(got, events...)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadDamaged(%q): %v", id, err)
	}
	return d, got
}

// requireLoads fails unless d reports a log that loads: not corrupt, no
// damage, valid events the ones passed, byte-equal to want.
func requireLoads(t *testing.T, what string, d sdk.Damaged, got, want [][]byte) {
	t.Helper()
	if d.Corrupt || d.ValidEvents != int64(len(want)) || !noDamage(d.Damage) {
		t.Fatalf("ReadDamaged of %s = corrupt %t, %d valid events, damage %+v; want not corrupt, %d, no damage",
			what, d.Corrupt, d.ValidEvents, d.Damage, len(want))
	}
	requireEvents(t, "the events ReadDamaged passed of "+what, got, want)
}

func noDamage(d sdk.Damage) bool {
	return d.Offset == 0 && d.Bytes == 0 && d.IntactEventsExcluded == 0 && d.Reason == "" && len(d.Tail) == 0
}

// requireDamaged fails unless d reports committed damage after the valid
// prefix want, with intact events after it, located and kept.
func requireDamaged(t *testing.T, d sdk.Damaged, got, want [][]byte, intact int) {
	t.Helper()
	dm := d.Damage
	if !d.Corrupt || d.ValidEvents != int64(len(want)) || dm.IntactEventsExcluded != int64(intact) ||
		dm.Offset <= 0 || dm.Bytes <= 0 || dm.Reason == "" || len(dm.Tail) == 0 {
		t.Fatalf("ReadDamaged of a damaged log = corrupt %t, %d valid events, damage {Offset %d Bytes %d IntactEventsExcluded %d Reason %q, %d tail bytes}; "+
			"want corrupt, %d valid events, an offset, bytes, %d intact events excluded, a reason and the tail",
			d.Corrupt, d.ValidEvents, dm.Offset, dm.Bytes, dm.IntactEventsExcluded, dm.Reason, len(dm.Tail), len(want), intact)
	}
	requireEvents(t, "the events ReadDamaged passed of a damaged log", got, want)
}

// requireSameDamage fails unless two ReadDamaged replies are equal.
func requireSameDamage(t *testing.T, again, first sdk.Damaged) {
	t.Helper()
	a, f := again.Damage, first.Damage
	if !again.Header.Equal(first.Header) || again.ValidEvents != first.ValidEvents || again.Corrupt != first.Corrupt ||
		a.Offset != f.Offset || a.Bytes != f.Bytes || a.IntactEventsExcluded != f.IntactEventsExcluded || a.Reason != f.Reason || !bytes.Equal(a.Tail, f.Tail) {
		t.Fatalf("a second ReadDamaged = %+v; the first returned %+v: the first changed the log", again, first)
	}
}

var salvageRules = []rule{
	{name: "intact-log-is-every-event-and-no-damage-and-nothing-changed", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "s1", closedTurnLog())
		before := snap(t, p, "s1")
		d, got := readDamaged(t, p, "s1")
		requireHeader(t, "ReadDamaged", d.Header, header("s1"))
		requireLoads(t, "an intact log", d, got, events)
		requireUnchanged(t, p, "s1", before)
		// It took no claim: a writer opens after it, and it reads beside one.
		w := open(t, p, "s1", sdk.AccessWrite)
		d, got = readDamaged(t, p, "s1")
		requireLoads(t, "an intact log beside its writer", d, got, events)
		closeHandle(t, p, w.Handle)
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "torn-tail-is-no-damage-but-the-committed-events-and-nothing-changed", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "s1", tornLog())
		s.h.Tear(t, p, "s1", 1)
		first := s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events)
		d, got := readDamaged(t, p, "s1")
		requireLoads(t, "a log with a torn tail", d, got, events[:9])
		again := s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events) // nothing was cut
		if again.Torn != first.Torn || again.Revision != first.Revision {
			t.Fatalf("after ReadDamaged a read open reports torn %+v, revision %q; before it %+v, %q", again.Torn, again.Revision, first.Torn, first.Revision)
		}
	}},
	{name: "damaged-middle-is-the-prefix-before-it-and-where-the-damage-is-and-nothing-changed", needs: []string{hookCorrupt}, run: func(t *testing.T, s *suite) {
		// A damaged event with a later turn/end is committed damage for
		// every backend: the valid prefix is the 4 events before it, and
		// the 5 intact events after it are excluded.
		p := s.backend(t)
		events := storeClosed(t, p, "s1", closedTurnLog())
		where := s.h.Corrupt(t, p, "s1", 4)
		d, got := readDamaged(t, p, "s1")
		requireHeader(t, "ReadDamaged", d.Header, header("s1"))
		requireDamaged(t, d, got, events[:4], 5)
		again, got := readDamaged(t, p, "s1")
		requireSameDamage(t, again, d)
		requireEvents(t, "a second ReadDamaged", got, events[:4])
		_, err := p.Open(t.Context(), "s1", sdk.AccessRead)
		RequireCode(t, err, sdk.CodeCorruptLog, where)
	}},
	{name: "damage-without-a-later-turn-end", needs: []string{hookCorrupt}, run: func(t *testing.T, s *suite) {
		// As the Corruption group: committed damage when intact units prove
		// it, else a torn tail, which ReadDamaged reports as no damage.
		p := s.backend(t)
		events := storeClosed(t, p, "s1", openTurnLog())
		s.h.Corrupt(t, p, "s1", 4)
		d, got := readDamaged(t, p, "s1")
		if s.h.Capabilities.IntactUnitsProveDamage {
			requireDamaged(t, d, got, events[:4], 5)
			return
		}
		requireLoads(t, "a log whose damage no later turn/end proves", d, got, events[:4])
		s.requireTorn(t, p, "s1", sdk.AccessRead, 4, events) // nothing was cut
	}},
	{name: "missing-session-is-SESSION_NOT_FOUND-and-bad-id-INVALID_SESSION_ID", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "pending").Handle // not stored until its first append
		noop := func([][]byte) error { return nil }
		for _, id := range []string{"absent", "pending"} {
			_, err := salvager(t, p).ReadDamaged(t.Context(), id, noop)
			RequireCode(t, err, sdk.CodeSessionNotFound, id)
		}
		_, err := salvager(t, p).ReadDamaged(t.Context(), "", noop)
		RequireCode(t, err, sdk.CodeInvalidSessionID)
		appendOK(t, p, h, Batch(0, 1)) // the create's claim is intact
	}},
	{name: "fn-error-ends-it-and-comes-back-unchanged", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", closedTurnLog())
		before := snap(t, p, "s1")
		stop := errors.New("stop here")
		_, err := salvager(t, p).ReadDamaged(t.Context(), "s1", func([][]byte) error { return stop })
		if !errors.Is(err, stop) {
			t.Fatalf("ReadDamaged whose fn failed = %v; want fn's error", err)
		}
		requireUnchanged(t, p, "s1", before)
	}},
}
