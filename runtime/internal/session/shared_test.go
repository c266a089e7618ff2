package session

import (
	"bytes"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
)

// Shared hands out the stored bytes themselves, and says what the
// envelope says.
func TestSharedIsTheStoredEvent(t *testing.T) {
	s, _ := newTestSession(t)
	mustAppend(t, s, evTurnStart(1))
	mustAppend(t, s, evU("u", "x"))
	mustAppend(t, s, replacing(evU("u", "y"), 1, 1, 1))
	for _, ev := range s.Events().All() {
		sh := ev.Shared()
		parsed, err := events.ParseEvent(ev.Envelope())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sh.Envelope, parsed.Envelope) || !bytes.Equal(sh.Data, parsed.Data) || sh.Seq != parsed.Seq || sh.Time != parsed.Time ||
			sh.Type != parsed.Type || sh.Ignorable != parsed.Ignorable || (sh.SurfaceOp == nil) != (parsed.SurfaceOp == nil) ||
			(sh.SurfaceOp != nil && *sh.SurfaceOp != *parsed.SurfaceOp) || !slices.Equal(sh.SourceEventSeqs, parsed.SourceEventSeqs) {
			t.Errorf("seq %d: shared %+v, envelope %+v", ev.Seq(), sh, parsed)
		}
		if &sh.Envelope[0] != &ev.r.env[0] || &sh.Data[0] != &ev.r.env[ev.r.dataStart] {
			t.Errorf("seq %d: Shared copied the bytes", ev.Seq())
		}
	}
	msgs, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs.All() {
		if !bytes.Equal(m.SharedJSON(), m.JSON()) {
			t.Errorf("SharedJSON %s, JSON %s", m.SharedJSON(), m.JSON())
		}
	}
	if (MessageView{}).SharedJSON() != nil {
		t.Error("the zero MessageView has bytes")
	}
}
