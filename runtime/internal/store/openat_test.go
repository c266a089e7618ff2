package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
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
	if err != nil || rep.Closers != 4 || rep.Appended != 5 || s.Len() != 11 {
		t.Fatalf("OpenAt 11: %v, %+v", err, rep)
	}
}

// OpenWith's Expect counts the open's batch: the stored length plus the
// closers and the marker, none with Continue. A wrong seq is refused with
// those counts and writes nothing; the right one opens.
func TestOpenWithExpectCountsTheOpenBatch(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	before := stored(t, p, "s")
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	for cont, c := range map[bool]struct {
		want   sdk.Offset
		detail string
	}{
		false: {11, "(the stored log holds 6 events and the open appends 5 repair events first)"},
		true:  {6, "(the stored log holds 6 events and the open appends 0 repair events first)"},
	} {
		wrong := c.want + 1
		_, _, err := st.OpenWith(ctx, "s", OpenOptions{Expect: &wrong, Continue: cont})
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict || e.Meta["actual"] != strconv.Itoa(int(c.want)) || !strings.Contains(e.Detail, c.detail) {
			t.Fatalf("OpenWith continue=%v expecting %d: %v; want actual %d and %q", cont, wrong, err, c.want, c.detail)
		}
		if after := stored(t, p, "s"); len(after) != len(before) {
			t.Fatalf("a refused OpenWith continue=%v stored %d events, want %d", cont, len(after), len(before))
		}
	}
	s, rep, err := st.OpenWith(ctx, "s", OpenOptions{Expect: new(sdk.Offset(6)), Continue: true})
	if err != nil || !rep.Continued || rep.Appended != 0 || s.Len() != 6 {
		t.Fatalf("OpenWith continue expecting 6: %v, %+v", err, rep)
	}
}

// An empty stored log opens with no batch (docs/architecture.md): no marker at seq 0,
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
	if _, _, err := st.OpenAt(ctx, "e", 1); !errors.Is(err, sdk.CodeSeqConflict) {
		t.Fatalf("OpenAt 1 of an empty log: %v", err)
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

// OpenAt of a log that ends in a torn tail counts session/recovered in the
// open's batch and refuses another seq before the write open that would
// cut the tail: the stored file stays byte for byte. The right seq cuts it
// and appends the batch.
func TestOpenAtLeavesATornTailUncut(t *testing.T) {
	st, path := tornLog(t)
	before, _ := os.ReadFile(path)
	for _, want := range []sdk.Offset{2, 3, 5} {
		_, _, err := st.OpenAt(ctx, "s", want)
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict || e.Meta["actual"] != "4" ||
			!strings.Contains(e.Detail, "(the stored log holds 2 events and the open appends 2 repair events first)") {
			t.Fatalf("OpenAt %d of 2 events and a torn tail: %v", want, err)
		}
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatalf("a refused OpenAt %d changed the stored log", want)
		}
	}
	s, rep, err := st.OpenAt(ctx, "s", 4)
	if err != nil || rep.Torn.Bytes != int64(len(tornTail)) || rep.Appended != 2 || s.Len() != 4 || s.Events().At(2).Type() != session.TypeSessionRecovered {
		t.Fatalf("OpenAt 4: %v, %+v", err, rep)
	}
}

// cutIn is a persistence whose next write open first runs writer: another
// writer getting in between OpenAt's read-only look and its write claim.
type cutIn struct {
	sdk.Persistence
	writer func()
}

func (c *cutIn) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if w := c.writer; access == sdk.AccessWrite && w != nil {
		c.writer = nil
		w()
	}
	return c.Persistence.Open(ctx, id, access)
}

// The counts of OpenAt's SEQ_CONFLICT come from the one read under the
// write claim: when another writer resumes the log after the caller looked
// at it, the error names the log as that writer left it (11 events, no
// repair left to append), never a difference of two reads, and they add up
// to the actual seq. Nothing is written by the refused open.
func TestOpenAtConflictCountsAreFromOneRead(t *testing.T) {
	p := mem()
	crashedLog(t, p, "s")
	other := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	c := &cutIn{Persistence: p, writer: func() {
		s, _, err := other.Open(ctx, "s") // the closers and the marker: 11 events
		if err != nil {
			t.Error(err)
			return
		}
		if err := other.Release(ctx, s); err != nil {
			t.Error(err)
		}
	}}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: c})
	_, _, err := st.OpenAt(ctx, "s", 6) // what a --continue caller saw before
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict {
		t.Fatalf("OpenAt 6 after another writer resumed the log: %v", err)
	}
	var storedN, opening int
	if _, err := fmt.Sscanf(e.Detail[strings.Index(e.Detail, "(the stored log holds "):], "(the stored log holds %d events and the open appends %d repair", &storedN, &opening); err != nil {
		t.Fatalf("detail %q: %v", e.Detail, err)
	}
	log := stored(t, p, "s")
	if storedN != len(log) || storedN != 11 || opening != 0 || e.Meta["actual"] != strconv.Itoa(storedN+opening) {
		t.Fatalf("detail %q, actual %s: want the stored 11 events and no repair, adding up to actual", e.Detail, e.Meta["actual"])
	}
}
