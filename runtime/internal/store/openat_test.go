package store

import (
	"errors"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// OpenAt with another first seq than the stored length plus the repair
// batch is SEQ_CONFLICT before the repair: the stored log is unchanged (no
// closer, no marker) and the claim is released, so a later OpenAt with the
// right seq resumes it.
func TestOpenAtChecksTheFirstSeqBeforeTheRepair(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	before := stored(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	for _, want := range []sdk.Offset{0, 6, 10, 12} {
		_, _, err := st.OpenAt(ctx, "s", want)
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict || e.Meta["actual"] != "11" {
			t.Fatalf("OpenAt %d of a log of 6 and a repair of 5: %v", want, err)
		}
		if after := stored(t, p, "s"); len(after) != len(before) {
			t.Fatalf("a refused OpenAt stored %d events, want %d", len(after), len(before))
		}
	}
	s, rep, err := st.OpenAt(ctx, "s", 11)
	if err != nil || rep.Closers != 4 || s.Len() != 11 {
		t.Fatalf("OpenAt 11: %v, %+v", err, rep)
	}
}

// FirstSeq is what OpenWith's caller's first event gets: the stored length
// plus the open's batch (none with Continue), and it writes nothing.
func TestFirstSeqCountsTheOpenBatch(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	before := stored(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	for cont, want := range map[bool]sdk.Offset{false: 11, true: 6} {
		got, err := st.FirstSeq(ctx, "s", cont)
		if err != nil || got != want {
			t.Fatalf("FirstSeq continue=%v: %d, %v; want %d", cont, got, err, want)
		}
	}
	if after := stored(t, p, "s"); len(after) != len(before) {
		t.Fatalf("FirstSeq stored %d events, want %d", len(after), len(before))
	}
}

// An empty stored log opens with no batch (SPEC §23.1): no marker at seq 0,
// so the first event the caller appends is seq 0, as after Create.
func TestOpenOfAnEmptyLogAppendsNothing(t *testing.T) {
	p := mem()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	created, err := st.Create(ctx, CreateOptions{ID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Release(ctx, created); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FirstSeq(ctx, "e", false); err != nil || got != 0 {
		t.Fatalf("FirstSeq of an empty log: %d, %v", got, err)
	}
	s, rep, err := st.OpenAt(ctx, "e", 0)
	if err != nil || s.Len() != 0 || rep.Closers != 0 {
		t.Fatalf("OpenAt 0 of an empty log: %v, %+v, len %d", err, rep, s.Len())
	}
	if after := stored(t, p, "e"); len(after) != 0 {
		t.Fatalf("the open of an empty log stored %d events", len(after))
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
