package persistencetest

import (
	"errors"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The logs the damage rules store. Each is stored in batches such that the
// damaged event is a batch (a line, frame or row group) of its own.
func turnStart(seq, turn int) []byte {
	return Envelope(seq, "turn/start", `{"turn":`+strconv.Itoa(turn)+`}`)
}

func turnEnd(seq, turn int) []byte {
	return Envelope(seq, "turn/end", `{"turn":`+strconv.Itoa(turn)+`,"reason":{"kind":"completed"}}`)
}

// tornLog is 10 events, the last one a batch of its own: batches [0, 5),
// [5, 9), [9].
func tornLog() [][][]byte {
	b := Batch(1, 9)
	return [][][]byte{append([][]byte{turnStart(0, 1)}, b[:4]...), b[4:8], b[8:]}
}

// openTurnLog is turn 1 left open: turn/start, then todo events; batches
// [0, 4), [4], [5, 10).
func openTurnLog() [][][]byte {
	b := Batch(1, 9)
	return [][][]byte{append([][]byte{turnStart(0, 1)}, b[:3]...), b[3:4], b[4:]}
}

// closedTurnLog has a turn/end after event 4; batches [0, 4), [4], [5, 10).
func closedTurnLog() [][][]byte {
	b := Batch(1, 9)
	return [][][]byte{
		append([][]byte{turnStart(0, 1)}, b[:3]...),
		b[3:4],
		{b[4], turnEnd(6, 1), turnStart(7, 2), b[7], b[8]},
	}
}

// storeClosed stores batches as session id and closes the handle.
func storeClosed(t *testing.T, p sdk.Persistence, id string, batches [][][]byte) [][]byte {
	t.Helper()
	h, events := stored(t, p, id, batches...)
	closeHandle(t, p, h)
	return events
}

var formatGateRules = []rule{
	{name: "newer-version-is-FORMAT_TOO_NEW", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		s.gate(t, strconv.Itoa(sdk.FormatVersion+1), sdk.CodeFormatTooNew, sdk.FormatVersion+1)
	}},
	{name: "older-version-is-FORMAT_UNSUPPORTED", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		s.gate(t, "0", sdk.CodeFormatUnsupported, 0)
	}},
	{name: "non-integer-version-is-CORRUPT_LOG", needs: []string{hookSetFormatVersion}, run: func(t *testing.T, s *suite) {
		s.gate(t, "1.5", sdk.CodeCorruptLog, "1.5")
	}},
	{name: "gate-runs-before-any-event-is-decoded", needs: []string{hookSetFormatVersion, hookCorrupt}, run: func(t *testing.T, s *suite) {
		// Format refusal: FORMAT_TOO_NEW even when the events are garbage.
		p := s.backend(t)
		storeClosed(t, p, "s1", closedTurnLog())
		s.h.Corrupt(t, p, "s1", 4)
		s.h.SetFormatVersion(t, p, "s1", strconv.Itoa(sdk.FormatVersion+1))
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
			_, err := p.Open(t.Context(), "s1", a)
			RequireCode(t, err, sdk.CodeFormatTooNew, "s1", sdk.FormatVersion+1)
		}
	}},
}

// gate stores two sessions, rewrites the format version of one to literal
// and requires code (naming the session and want) from Open, Stat and List
// for it alone; restoring the current version then opens it for writing,
// unchanged.
func (s *suite) gate(t *testing.T, literal string, code sdk.Code, want any) {
	p := s.backend(t)
	events := storeClosed(t, p, "s1", [][][]byte{Batch(0, 4)})
	storeClosed(t, p, "fine", [][][]byte{Batch(0, 2)})
	s.h.SetFormatVersion(t, p, "s1", literal)
	check := func(what string, err error) {
		t.Helper()
		RequireCode(t, err, code, "s1", want)
		if code != sdk.CodeCorruptLog && errors.Is(err, sdk.CodeCorruptLog) {
			t.Fatalf("%s: a format version is reported as corruption: %v", what, err)
		}
		if errors.Is(err, sdk.CodeSessionNotFound) {
			t.Fatalf("%s: a format error is reported as absence: %v", what, err)
		}
	}
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := p.Open(t.Context(), "s1", a)
		check("Open("+accessName(a)+")", err)
	}
	_, err := p.Stat(t.Context(), "s1")
	check("Stat", err)
	l := list(t, p)
	check("List entry", l["s1"].Err)
	if e := l["fine"]; e.Err != nil {
		t.Fatalf("List entry of an intact session beside it: %v", e.Err)
	}
	s.h.SetFormatVersion(t, p, "s1", currentVersion)
	w := open(t, p, "s1", sdk.AccessWrite) // the failed write open left no claim
	requireEvents(t, "after the version was restored", ReadAll(t, p, w.Handle), events)
}

var tornTailRules = []rule{
	{name: "read-open-reports-the-torn-tail-and-changes-nothing", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "s1", tornLog())
		s.h.Tear(t, p, "s1", 1)
		// Stat may report the torn session as damaged (CORRUPT_LOG: a row
		// backend whose rows do not match its counter); when it answers,
		// the read opens left its revision alone.
		before, errBefore := p.Stat(t.Context(), "s1")
		first := s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events)
		again := s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events)
		if again.Torn != first.Torn || again.Revision != first.Revision {
			t.Fatalf("a second read open reports torn %+v, revision %q; the first reported %+v, %q", again.Torn, again.Revision, first.Torn, first.Revision)
		}
		after, errAfter := p.Stat(t.Context(), "s1")
		switch {
		case errBefore != nil || errAfter != nil:
			RequireCode(t, errBefore, sdk.CodeCorruptLog)
			RequireCode(t, errAfter, sdk.CodeCorruptLog)
		case after.Revision != before.Revision:
			t.Fatalf("read opens changed the revision from %q to %q", before.Revision, after.Revision)
		}
	}},
	{name: "write-open-cuts-the-torn-tail-keeps-it-and-goes-on", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		events := storeClosed(t, p, "s1", tornLog())
		s.h.Tear(t, p, "s1", 1)
		r := s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events)
		w := s.requireTorn(t, p, "s1", sdk.AccessWrite, 9, events)
		if w.Torn.Bytes != r.Torn.Bytes {
			t.Fatalf("the write open cut %d bytes; the read open reported %d", w.Torn.Bytes, r.Torn.Bytes)
		}
		if w.Revision == r.Revision {
			t.Fatalf("revision %q did not change when the write open cut the tail", w.Revision)
		}
		next := Envelope(9, "todo/write", `{"todos":[{"content":"after the cut","status":"pending"}]}`)
		appendOK(t, p, w.Handle, [][]byte{next})
		closeHandle(t, p, w.Handle)
		o := open(t, p, "s1", sdk.AccessRead)
		if o.Torn != (sdk.Torn{}) || o.NextSeq != 10 {
			t.Fatalf("after the cut and an append: torn %+v, next seq %d; want none, 10", o.Torn, o.NextSeq)
		}
		requireEvents(t, "after the cut and an append", ReadAll(t, p, o.Handle), append(events[:9:9], next))
	}},
	{name: "shrunk-log-under-a-read-handle-is-LOG_SHRANK", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		storeClosed(t, p, "s1", tornLog())
		r := open(t, p, "s1", sdk.AccessRead)
		ReadAll(t, p, r.Handle)
		s.h.Tear(t, p, "s1", 1)
		err := p.Read(t.Context(), r.Handle, 0, -1, func([][]byte) error { return nil })
		RequireCode(t, err, sdk.CodeLogShrank, 10, 9)
	}},
}

var corruptionRules = []rule{
	{name: "damage-before-a-later-turn-end-is-CORRUPT_LOG", needs: []string{hookCorrupt}, run: func(t *testing.T, s *suite) {
		// Torn versus corrupt: an unparsable event followed later by a valid
		// turn/end is committed damage, never absence or an empty log.
		p := s.backend(t)
		storeClosed(t, p, "s1", closedTurnLog())
		where := s.h.Corrupt(t, p, "s1", 4)
		for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite, sdk.AccessRead} {
			_, err := p.Open(t.Context(), "s1", a)
			RequireCode(t, err, sdk.CodeCorruptLog, where)
			if errors.Is(err, sdk.CodeSessionNotFound) {
				t.Fatalf("Open(%s): corruption reported as absence: %v", accessName(a), err)
			}
		}
	}},
	{name: "damage-without-a-later-turn-end", needs: []string{hookCorrupt}, run: func(t *testing.T, s *suite) {
		// Torn versus corrupt: the same damage with no later turn/end but intact
		// events after it. A backend whose units prove it committed
		// refuses as above; otherwise events 0–3 are returned and a
		// write open cuts the rest.
		p := s.backend(t)
		events := storeClosed(t, p, "s1", openTurnLog())
		where := s.h.Corrupt(t, p, "s1", 4)
		if s.h.Capabilities.IntactUnitsProveDamage {
			for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
				_, err := p.Open(t.Context(), "s1", a)
				RequireCode(t, err, sdk.CodeCorruptLog, where)
			}
			return
		}
		r := s.requireTorn(t, p, "s1", sdk.AccessRead, 4, events)
		w := s.requireTorn(t, p, "s1", sdk.AccessWrite, 4, events)
		if w.Torn.Bytes != r.Torn.Bytes {
			t.Fatalf("the write open cut %d bytes; the read open reported %d", w.Torn.Bytes, r.Torn.Bytes)
		}
		appendOK(t, p, w.Handle, Batch(4, 2))
		closeHandle(t, p, w.Handle)
		o := open(t, p, "s1", sdk.AccessRead)
		if o.Torn != (sdk.Torn{}) {
			t.Fatalf("after the cut: torn %+v; want none", o.Torn)
		}
		requireEvents(t, "after the cut and an append", ReadAll(t, p, o.Handle), append(events[:4:4], Batch(4, 2)...))
	}},
}

// requireTorn opens id with access and requires a torn tail from seq from:
// some bytes cut, an artifact exactly for a write open, next seq from, and
// the events before it byte-equal. A read handle is closed again; a write
// handle is left open.
func (s *suite) requireTorn(t *testing.T, p sdk.Persistence, id string, access sdk.Access, from int, events [][]byte) sdk.Opened {
	t.Helper()
	o := open(t, p, id, access)
	write := access == sdk.AccessWrite
	if o.Torn.Bytes <= 0 || o.Torn.FromSeq != sdk.Seq(from) || (o.Torn.Artifact != "") != write || o.NextSeq != sdk.Offset(from) {
		t.Fatalf("Open(%s) = torn %+v, next seq %d; want bytes > 0, from seq %d, an artifact only when writing, next seq %d",
			accessName(access), o.Torn, o.NextSeq, from, from)
	}
	requireEvents(t, "Read after Open("+accessName(access)+") of a torn log", ReadAll(t, p, o.Handle), events[:from])
	if !write {
		closeHandle(t, p, o.Handle)
	}
	return o
}
