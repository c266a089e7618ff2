package persistencetest

import (
	"bytes"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A checkpoint lets the host take the events it covers as validated without
// checking them again, so a checkpoint returned for bytes it was not
// written for makes the host trust events nobody checked. The rules below
// change the log under a checkpoint every way the suite can and require
// it to be found only while the covered events are exactly the ones it
// was written for; each also requires the checkpoint calls themselves to
// leave the log alone.

// checkpointer returns p as an sdk.Checkpointer; the Checkpoint group runs
// only for a backend that declares and implements it.
func checkpointer(t *testing.T, p sdk.Persistence) sdk.Checkpointer {
	t.Helper()
	return implementation[sdk.Checkpointer](t, p)
}

// fold is checkpoint data as a host writes it: opaque bytes, distinct per
// name.
func fold(name string) []byte { return []byte("fold state " + name + "\x00\xff") }

func writeCheckpoint(t *testing.T, p sdk.Persistence, handle string, events int, data []byte) {
	t.Helper()
	if err := checkpointer(t, p).WriteCheckpoint(t.Context(), handle, sdk.Offset(events), data); err != nil {
		t.Fatalf("WriteCheckpoint(%s, %d events): %v", handle, events, err)
	}
}

// requireCheckpoint fails unless the checkpoint read through handle is
// found, covers exactly events and holds data.
func requireCheckpoint(t *testing.T, p sdk.Persistence, handle string, events int, data []byte) {
	t.Helper()
	got, d, found, err := checkpointer(t, p).ReadCheckpoint(t.Context(), handle)
	switch {
	case err != nil:
		t.Fatalf("ReadCheckpoint(%s): %v", handle, err)
	case !found:
		t.Fatalf("ReadCheckpoint(%s) found none; want the checkpoint of %d events", handle, events)
	case got != sdk.Offset(events) || !bytes.Equal(d, data):
		t.Fatalf("ReadCheckpoint(%s) = %d events, %q; want %d, %q", handle, got, d, events, data)
	}
}

// requireNoCheckpoint fails unless no checkpoint is found through handle
// (and none is an error: a checkpoint never fails a read).
func requireNoCheckpoint(t *testing.T, p sdk.Persistence, handle, why string) {
	t.Helper()
	got, d, found, err := checkpointer(t, p).ReadCheckpoint(t.Context(), handle)
	if err != nil || found {
		t.Fatalf("ReadCheckpoint(%s) %s = found %t (%d events, %q), %v; want none and no error", handle, why, found, got, d, err)
	}
}

// requireCheckpointEverywhere reads the checkpoint of id through a new
// read handle and a new write handle, which it closes again.
func requireCheckpointEverywhere(t *testing.T, p sdk.Persistence, id string, events int, data []byte) {
	t.Helper()
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		o := open(t, p, id, a)
		requireCheckpoint(t, p, o.Handle, events, data)
		closeHandle(t, p, o.Handle)
	}
}

// requireNoCheckpointEverywhere is requireNoCheckpoint through a new read
// handle and a new write handle, which it closes again.
func requireNoCheckpointEverywhere(t *testing.T, p sdk.Persistence, id, why string) {
	t.Helper()
	for _, a := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		o := open(t, p, id, a)
		requireNoCheckpoint(t, p, o.Handle, why+" (Open "+accessName(a)+")")
		closeHandle(t, p, o.Handle)
	}
}

// rewritten is an envelope of the same seq and byte length as Batch's
// event seq, with other bytes.
func rewritten(seq int) []byte {
	ev := Batch(seq, 1)[0]
	return bytes.Replace(ev, []byte(`"event `), []byte(`"EVENT `), 1)
}

// tornUnderCheckpoint stores tornLog as session "s1" with a checkpoint of
// all 10 events, then tears its last event.
func (s *suite) tornUnderCheckpoint(t *testing.T) (sdk.Persistence, [][]byte) {
	t.Helper()
	p := s.backend(t)
	h, events := stored(t, p, "s1", tornLog()...)
	writeCheckpoint(t, p, h, 10, fold("a"))
	closeHandle(t, p, h)
	s.h.Tear(t, p, "s1", 1)
	return p, events
}

var checkpointRules = []rule{
	{name: "none-until-written-then-exactly-it-and-nothing-changed", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 4), Batch(4, 3))
		requireNoCheckpoint(t, p, h, "before any was written")
		before := snap(t, p, "s1")
		data := fold("a")
		writeCheckpoint(t, p, h, 7, data)
		data[0] = 'X' // the backend keeps its own copy
		requireUnchanged(t, p, "s1", before)
		requireCheckpoint(t, p, h, 7, fold("a"))
		closeHandle(t, p, h)
		requireCheckpointEverywhere(t, p, "s1", 7, fold("a"))
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "stale-checkpoint-covers-only-its-own-prefix", run: func(t *testing.T, s *suite) {
		// A checkpoint older than the log is returned for the events it
		// covers, never as the whole log, and a newer one replaces it.
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 4))
		writeCheckpoint(t, p, h, 4, fold("at 4"))
		appendOK(t, p, h, Batch(4, 3))
		requireCheckpoint(t, p, h, 4, fold("at 4"))
		before := snap(t, p, "s1")
		r := open(t, p, "s1", sdk.AccessRead)
		requireCheckpoint(t, p, r.Handle, 4, fold("at 4"))
		closeHandle(t, p, r.Handle)
		writeCheckpoint(t, p, h, 7, fold("at 7"))
		requireCheckpoint(t, p, h, 7, fold("at 7"))
		closeHandle(t, p, h)
		requireCheckpointEverywhere(t, p, "s1", 7, fold("at 7"))
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "checkpoint-past-the-durable-log-is-INVALID_BOUNDARY-and-changes-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		writeCheckpoint(t, p, h, 5, fold("a"))
		before := snap(t, p, "s1")
		err := checkpointer(t, p).WriteCheckpoint(t.Context(), h, 6, fold("ahead"))
		RequireCode(t, err, sdk.CodeInvalidBoundary)
		requireCheckpoint(t, p, h, 5, fold("a"))
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "read-handle-writes-no-checkpoint-and-changes-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, _ := stored(t, p, "s1", Batch(0, 5))
		writeCheckpoint(t, p, h, 5, fold("a"))
		closeHandle(t, p, h)
		before := snap(t, p, "s1")
		r := open(t, p, "s1", sdk.AccessRead)
		if err := checkpointer(t, p).WriteCheckpoint(t.Context(), r.Handle, 5, fold("through a reader")); err == nil {
			t.Fatal("WriteCheckpoint through a read handle succeeded; a checkpoint is written only through a write handle")
		}
		requireCheckpoint(t, p, r.Handle, 5, fold("a"))
		closeHandle(t, p, r.Handle)
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "checkpoint-of-another-session-is-never-returned", run: func(t *testing.T, s *suite) {
		// Two sessions whose events are byte-equal: each has only its own
		// checkpoint.
		p := s.backend(t)
		ha, _ := stored(t, p, "a", Batch(0, 6))
		hb, _ := stored(t, p, "b", Batch(0, 6))
		writeCheckpoint(t, p, ha, 6, fold("a"))
		requireNoCheckpoint(t, p, hb, "of a session without one, beside one with the same events")
		closeHandle(t, p, hb)
		requireNoCheckpointEverywhere(t, p, "b", "of a session without one, beside one with the same events")
		hb = open(t, p, "b", sdk.AccessWrite).Handle
		writeCheckpoint(t, p, hb, 6, fold("b"))
		requireCheckpoint(t, p, ha, 6, fold("a"))
		requireCheckpoint(t, p, hb, 6, fold("b"))
		closeHandle(t, p, ha)
		closeHandle(t, p, hb)
		if s.declares(sdk.CapabilityCopyPrefix) {
			o, err := copier(t, p).CopyPrefix(t.Context(), "a", 5, header("child"))
			if err != nil {
				t.Fatalf("CopyPrefix: %v", err)
			}
			requireNoCheckpoint(t, p, o.Handle, "of a CopyPrefix child of a session with one")
			closeHandle(t, p, o.Handle)
		}
		requireCheckpointEverywhere(t, p, "a", 6, fold("a"))
		requireCheckpointEverywhere(t, p, "b", 6, fold("b"))
	}},
	{name: "log-deleted-and-created-again-invalidates-it", run: func(t *testing.T, s *suite) {
		if !s.declares(sdk.CapabilityDelete) {
			t.Skipf("the backend does not declare the capability %q this rule deletes with", sdk.CapabilityDelete)
		}
		p := s.backend(t)
		h, events := stored(t, p, "s1", Batch(0, 3))
		writeCheckpoint(t, p, h, 3, fold("a"))
		closeHandle(t, p, h)
		deleteOK(t, p, "s1", 3)
		h, _ = stored(t, p, "s1", events) // the very same bytes: another session all the same
		requireNoCheckpoint(t, p, h, "of a session deleted and created again")
		before := snap(t, p, "s1")
		closeHandle(t, p, h)
		requireNoCheckpointEverywhere(t, p, "s1", "of a session deleted and created again")
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "log-rewritten-with-the-same-length-invalidates-it", needs: []string{hookRewrite}, run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h, events := stored(t, p, "s1", Batch(0, 4), Batch(4, 1), Batch(5, 5))
		writeCheckpoint(t, p, h, 10, fold("a"))
		closeHandle(t, p, h)
		ev := rewritten(4)
		s.h.Rewrite(t, p, "s1", 4, ev)
		events[4] = ev
		before := snap(t, p, "s1")
		requireEvents(t, "the rewritten log", before.events, events)
		requireNoCheckpointEverywhere(t, p, "s1", "after the log was rewritten under it")
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "log-shorter-than-the-checkpoint-invalidates-it", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		// A torn tail cut into the covered events: the read open that
		// reports it, and the write open that cuts it, find no checkpoint.
		p, events := s.tornUnderCheckpoint(t)
		r := open(t, p, "s1", sdk.AccessRead)
		requireNoCheckpoint(t, p, r.Handle, "of a read open of a log torn inside it")
		closeHandle(t, p, r.Handle)
		s.requireTorn(t, p, "s1", sdk.AccessRead, 9, events) // the read open changed nothing
		w := s.requireTorn(t, p, "s1", sdk.AccessWrite, 9, events)
		requireNoCheckpoint(t, p, w.Handle, "after the write open cut the log inside it")
		closeHandle(t, p, w.Handle)
		before := snap(t, p, "s1")
		requireNoCheckpointEverywhere(t, p, "s1", "of a log cut shorter than it")
		requireUnchanged(t, p, "s1", before)
	}},
	{name: "log-cut-and-written-again-to-the-same-length-invalidates-it", needs: []string{hookTear}, run: func(t *testing.T, s *suite) {
		// The events after the cut are written again with other bytes: the
		// log has the checkpoint's length again, not its bytes.
		p, _ := s.tornUnderCheckpoint(t)
		w := open(t, p, "s1", sdk.AccessWrite)
		appendOK(t, p, w.Handle, [][]byte{rewritten(9)})
		requireNoCheckpoint(t, p, w.Handle, "after the cut events were written again")
		closeHandle(t, p, w.Handle)
		before := snap(t, p, "s1")
		requireNoCheckpointEverywhere(t, p, "s1", "after the cut events were written again")
		requireUnchanged(t, p, "s1", before)
		w = open(t, p, "s1", sdk.AccessWrite)
		writeCheckpoint(t, p, w.Handle, 10, fold("b"))
		closeHandle(t, p, w.Handle)
		requireCheckpointEverywhere(t, p, "s1", 10, fold("b"))
		requireUnchanged(t, p, "s1", before)
	}},
}
