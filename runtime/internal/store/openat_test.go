package store

import (
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// OpenAt with another stored length is SEQ_CONFLICT before the repair: the
// stored log is unchanged (no closer, no marker) and the claim is released,
// so a later OpenAt with the right length resumes it.
func TestOpenAtChecksTheStoredLengthBeforeTheRepair(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	before := stored(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	for _, want := range []sdk.Offset{0, 5, 7} {
		_, _, err := st.OpenAt(ctx, "s", want)
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict || e.Meta["actual"] != "6" {
			t.Fatalf("OpenAt %d of a log of 6: %v", want, err)
		}
		if after := stored(t, p, "s"); len(after) != len(before) {
			t.Fatalf("a refused OpenAt stored %d events, want %d", len(after), len(before))
		}
	}
	s, rep, err := st.OpenAt(ctx, "s", 6)
	if err != nil || rep.Closers != 4 || s.Len() != 11 {
		t.Fatalf("OpenAt 6: %v, %+v", err, rep)
	}
}

// OpenWith Continue appends nothing at open: the stored log still ends in
// its open turn, and the live session takes the turn's next events.
func TestOpenWithContinueAppendsNoRepair(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	before := stored(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	s, rep, err := st.OpenWith(ctx, "s", OpenOptions{Continue: true})
	if err != nil || !rep.Continued || rep.Closers != 0 || s.Len() != sdk.Offset(len(before)) {
		t.Fatalf("OpenWith Continue: %v, %+v, len %d", err, rep, s.Len())
	}
	if after := stored(t, p, "s"); len(after) != len(before) {
		t.Fatalf("OpenWith Continue stored %d events, want %d", len(after), len(before))
	}
}
