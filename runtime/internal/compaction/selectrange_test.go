package compaction

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// anaLongTurn: system(0), U(1), then three tool rounds A[c](k) R(k+1) of
// known sizes, and a final A text: nodes 0..8. It is all one turn: turn
// boundaries give no protection (docs/compaction.md).
func anaLongTurn(t testing.TB) *session.Session {
	s := anaSession(t)
	anaAppend(t, s,
		anaSys("system prompt"),                                   // 0
		anaUser("u1", "do a thing"),                               // 1
		anaAsst("a2", anaAsstOpts{}, anaCall("c2", "read", "{}")), // 2
		anaResult("r3", "c2", strings.Repeat("x", 400)),           // 3: 100+4+4 = 108
		anaAsst("a4", anaAsstOpts{}, anaCall("c4", "read", "{}")), // 4
		anaResult("r5", "c4", strings.Repeat("y", 400)),           // 5: 108
		anaAsst("a6", anaAsstOpts{}, anaCall("c6", "read", "{}")), // 6
		anaResult("r7", "c6", strings.Repeat("z", 400)),           // 7: 108
		anaAsst("a8", anaAsstOpts{}, anaText("done")),             // 8: 1+4+4 = 9
	)
	return s
}

func anaMeasure(t testing.TB, meter *Meter) Measurement {
	t.Helper()
	m, err := meter.Measure()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSelectRangeSteps(t *testing.T) {
	s := anaLongTurn(t)
	meter := NewMeter(s)
	m := anaMeasure(t, meter)
	cases := []struct {
		name       string
		retain     int64
		start, end sdk.Seq
		ok         bool
	}{
		// keep = 8 (9 ≥ 0); the cut before 8 is balanced: compact 1..7.
		{"retain 0 keeps the newest node, compacts the largest balanced head", 0, 1, 7, true},
		// keep = 7 (9+108 ≥ 100), unbalanced before R(7) → keep 6: compact 1..5.
		{"the cut moves before an open tool call", 100, 1, 5, true},
		// keep = 5 → 4: compact 1..3.
		{"more retained", 200, 1, 3, true},
		// keep = 3 → 2: compact only U(1).
		{"down to the first message after the system prompt", 300, 1, 1, true},
		// keep = 1 ≤ first (the sums from the end: 9 117 127 235 245 353 363 374).
		{"nothing left before the retained tail", 370, 0, 0, false},
		{"retain more than there is", 1 << 40, 0, 0, false},
	}
	for _, c := range cases {
		start, end, ok, err := meter.SelectRange(m, c.retain)
		if err != nil || ok != c.ok || ok && (start != c.start || end != c.end) {
			t.Errorf("%s: SelectRange(%d) = %d..%d %v %v; want %d..%d %v", c.name, c.retain, start, end, ok, err, c.start, c.end, c.ok)
		}
	}
}

func TestSelectRangeSystemNodeZeroIsNeverCompacted(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s, anaSys("prompt"), anaUser("u1", "one"))
	meter := NewMeter(s)
	// keep = 1 == first: not ok, although retain 0 would otherwise take node 0.
	if _, _, ok, err := meter.SelectRange(anaMeasure(t, meter), 0); ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	// Without a system prompt node 0 is fair game.
	s2 := anaSession(t)
	anaAppend(t, s2, anaUser("u0", "zero"), anaUser("u1", "one"))
	m2 := NewMeter(s2)
	if st, en, ok, err := m2.SelectRange(anaMeasure(t, m2), 0); !ok || err != nil || st != 0 || en != 0 {
		t.Fatalf("got %d..%d %v %v", st, en, ok, err)
	}
	// A system/message at a later position is not protected.
	s3 := anaSession(t)
	anaAppend(t, s3, anaUser("u0", "zero"), anaSys("late prompt"), anaUser("u2", "two"))
	m3 := NewMeter(s3)
	if st, en, ok, err := m3.SelectRange(anaMeasure(t, m3), 0); !ok || err != nil || st != 0 || en != 1 {
		t.Fatalf("got %d..%d %v %v", st, en, ok, err)
	}
}

func TestSelectRangeWalkReachingFirstIsNotOK(t *testing.T) {
	// Every cut after U(1) is unbalanced: the call of A(2) is answered last.
	s := anaSession(t)
	anaAppend(t, s,
		anaSys("p"), anaUser("u1", "x"),
		anaAsst("a2", anaAsstOpts{}, anaCall("c2", "read", "{}"), anaCall("c2b", "read", "{}")),
		anaResult("r3", "c2b", "b"), anaUser("u4", "interjection"), anaResult("r5", "c2", "a"))
	meter := NewMeter(s)
	if st, en, ok, err := meter.SelectRange(anaMeasure(t, meter), 0); !ok || err != nil || st != 1 || en != 1 {
		t.Fatalf("got %d..%d %v %v", st, en, ok, err)
	}
	s2 := anaSession(t)
	anaAppend(t, s2, anaSys("p"), anaAsst("a1", anaAsstOpts{}, anaCall("c1", "read", "{}")), anaUser("u2", "x"), anaResult("r3", "c1", "a"))
	m2 := NewMeter(s2)
	if _, _, ok, err := m2.SelectRange(anaMeasure(t, m2), 0); ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
}

func TestSelectRangeFollowsSurfaceOrderNotSeqOrder(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s, anaUser("u0", "zero"), anaUser("u1", "one"), anaUser("u2", "two"),
		anaReplace("cp3", 0, 1, 0, 1)) // nodes [3, 2]
	meter := NewMeter(s)
	m := anaMeasure(t, meter)
	if st, en, ok, err := meter.SelectRange(m, 0); !ok || err != nil || st != 3 || en != 3 {
		t.Fatalf("got %d..%d %v %v", st, en, ok, err)
	}
	if err := meter.CheckRegion(3, 2); err != nil {
		t.Fatalf("CheckRegion(3, 2): %v", err)
	}
	err := meter.CheckRegion(2, 3)
	anaRequireCode(t, err, sdk.CodeCompactionUnbalancedBoundary, "start 2 at position 1 comes after end 3 at position 0")
}

func TestSelectRangeCompactionSurfaceMismatch(t *testing.T) {
	s := anaLongTurn(t)
	meter := NewMeter(s)
	old := anaMeasure(t, meter)
	before := s.Len()
	anaAppend(t, s, anaUser("u9", "late"))
	_, _, ok, err := meter.SelectRange(old, 0)
	e := anaRequireCode(t, err, sdk.CodeCompactionSurfaceMismatch, "9 nodes", "now has 10")
	if ok || e.SessionID != "s1" {
		t.Fatalf("ok %v, error %+v", ok, e)
	}
	// Same length, other seqs: a replacement of one node by one.
	m := anaMeasure(t, meter)
	anaAppend(t, s, anaReplace("cp10", 1, 1, 1))
	_, _, _, err = meter.SelectRange(m, 0)
	anaRequireCode(t, err, sdk.CodeCompactionSurfaceMismatch, "node 1 at position 1", "now has 10")
	err = meter.ValidatePluginRange(m, 2, 3)
	anaRequireCode(t, err, sdk.CodeCompactionSurfaceMismatch)
	// A copy of the current measurement (another array) is compared by value.
	cur := anaMeasure(t, meter)
	cp := cur
	cp.Nodes = append([]NodeTokens(nil), cur.Nodes...)
	if _, _, _, err := meter.SelectRange(cp, 0); err != nil {
		t.Fatalf("copied measurement: %v", err)
	}
	if s.Len() != before+2 {
		t.Fatal("selection changed the session")
	}
}

func TestCheckRegionCompactionUnbalancedBoundary(t *testing.T) {
	s := anaLongTurn(t)
	anaAppend(t, s, anaReplace("cp9", 1, 1, 1)) // node 1 → 9; seq 1 is shadowed
	meter := NewMeter(s)
	if err := meter.CheckRegion(9, 5); err != nil {
		t.Fatalf("balanced region: %v", err)
	}
	if err := meter.CheckRegion(4, 7); err != nil {
		t.Fatalf("old steps inside one turn: %v", err)
	}
	cases := []struct {
		name       string
		start, end sdk.Seq
		seq        int64
		want       []string
		notFound   bool
	}{
		{"start not a node", 1, 5, 1, []string{"region start 1 is not a current surface node"}, true},
		{"end not a node", 9, 42, 42, []string{"region end 42 is not a current surface node"}, true},
		{"start after end", 5, 2, 5, []string{"start 5 at position 5 comes after end 2 at position 2"}, false},
		{"cut before start unbalanced", 3, 5, 3, []string{"before region start 3"}, false},
		{"cut after end unbalanced", 9, 4, 4, []string{"after region end 4"}, false},
	}
	for _, c := range cases {
		err := meter.CheckRegion(c.start, c.end)
		e := anaRequireCode(t, err, sdk.CodeCompactionUnbalancedBoundary, c.want...)
		if e.Seq == nil || *e.Seq != c.seq {
			t.Errorf("%s: error %v; want seq %d", c.name, e, c.seq)
		}
		if got := errors.Is(err, sdk.CodeToolPairingSeqNotFound); got != c.notFound {
			t.Errorf("%s: wraps TOOL_PAIRING_SEQ_NOT_FOUND = %v", c.name, got)
		}
		if err := meter.ValidatePluginRange(anaMeasure(t, meter), c.start, c.end); sdk.CodeOf(err) != sdk.CodeCompactionUnbalancedBoundary {
			t.Errorf("%s: ValidatePluginRange = %v", c.name, err)
		}
	}
	if err := meter.ValidatePluginRange(anaMeasure(t, meter), 9, 7); err != nil {
		t.Fatalf("valid plugin range: %v", err)
	}
}

func TestCheckRegionSystemNode0Protected(t *testing.T) {
	s := anaLongTurn(t)
	meter := NewMeter(s)
	err := meter.CheckRegion(0, 1)
	e := anaRequireCode(t, err, sdk.CodeSystemNode0Protected, "region 0..1", "node 0")
	if e.Seq == nil || *e.Seq != 0 {
		t.Fatalf("error %v names the wrong seq", e)
	}
	err = meter.ValidatePluginRange(anaMeasure(t, meter), 0, 8)
	anaRequireCode(t, err, sdk.CodeSystemNode0Protected)
}

func TestSelectRangeToolPairingCorrupt(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s, anaUser("u0", "x"), anaResult("r1", "ghost", "orphan"), anaUser("u2", "y"), anaUser("u3", "z"))
	meter := NewMeter(s)
	_, _, ok, err := meter.SelectRange(anaMeasure(t, meter), 0)
	anaRequireCode(t, err, sdk.CodeToolPairingCorrupt, "node 1")
	if ok {
		t.Fatal("ok with an error")
	}
	err = meter.CheckRegion(2, 2)
	anaRequireCode(t, err, sdk.CodeToolPairingCorrupt, "node 1")
	// Cuts before the corruption are still answered.
	if err := meter.CheckRegion(0, 0); err != nil {
		t.Fatalf("CheckRegion(0, 0) = %v", err)
	}
}
