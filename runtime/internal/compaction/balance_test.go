package compaction

import (
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// anaPairedSession: U(0) A[c1,c2](1) R c1(2) step(3) R c2(4) U(5) A[c3](6).
func anaPairedSession(t testing.TB) *session.Session {
	s := anaSession(t)
	anaAppend(t, s,
		anaUser("u0", "go"),
		anaAsst("a1", anaAsstOpts{}, anaText("calling"), anaCall("c1", "read", "{}"), anaCall("c2", "read", "{}")),
		anaResult("r2", "c1", "one"),
		anaStep(1, 2),
		anaResult("r4", "c2", "two"),
		anaUser("u5", "more"),
		anaAsst("a6", anaAsstOpts{}, anaCall("c3", "grep", "{}")),
	)
	return s
}

func TestBalanceCountsToolCallsAgainstResults(t *testing.T) {
	s := anaPairedSession(t)
	meter := NewMeter(s)
	cases := []struct {
		seq           sdk.Seq
		before, after bool
	}{
		{0, true, true},
		{1, true, false},
		{2, false, false},
		{4, false, true},
		{5, true, true},
		{6, true, false}, // c3 has no result yet
	}
	for _, c := range cases {
		b, err := meter.BalancedBefore(c.seq)
		if err != nil || b != c.before {
			t.Errorf("BalancedBefore(%d) = %v, %v; want %v", c.seq, b, err, c.before)
		}
		a, err := meter.BalancedAfter(c.seq)
		if err != nil || a != c.after {
			t.Errorf("BalancedAfter(%d) = %v, %v; want %v", c.seq, a, err, c.after)
		}
	}
	// The tail is extended: the result of c3 balances the end.
	anaAppend(t, s, anaResult("r7", "c3", "three"))
	if a, err := meter.BalancedAfter(7); err != nil || !a {
		t.Fatalf("BalancedAfter(7) = %v, %v", a, err)
	}
}

func TestBalanceFollowsProjectedToolCalls(t *testing.T) {
	// A projection that drops the tool calls of a1 leaves its results
	// unmatched: the counts are rebuilt for the new contentGeneration.
	s := anaPairedSession(t)
	meter := NewMeter(s)
	if b, err := meter.BalancedAfter(4); err != nil || !b {
		t.Fatalf("before projection: %v, %v", b, err)
	}
	anaAppend(t, s, anaProject("no calls", 1))
	_, err := meter.BalancedAfter(4)
	anaRequireCode(t, err, sdk.CodeToolPairingCorrupt, "node 2")
	if b, err := meter.BalancedBefore(2); err != nil || !b {
		t.Fatalf("the cut before the first stray result is still fine: %v, %v", b, err)
	}
}

func TestBalanceToolPairingCorrupt(t *testing.T) {
	s := anaSession(t)
	anaAppend(t, s, anaUser("u0", "go"), anaResult("r1", "ghost", "orphan"), anaUser("u2", "next"))
	meter := NewMeter(s)
	before := s.Len()
	if b, err := meter.BalancedBefore(1); err != nil || !b {
		t.Fatalf("BalancedBefore(1) = %v, %v", b, err)
	}
	_, err := meter.BalancedAfter(1)
	e := anaRequireCode(t, err, sdk.CodeToolPairingCorrupt, "node 1", "position 1")
	if (e.Seq == nil || *e.Seq != 1) || e.SessionID != "s1" || e.Op != "compaction" {
		t.Fatalf("error fields %+v", e)
	}
	_, err = meter.BalancedBefore(2)
	anaRequireCode(t, err, sdk.CodeToolPairingCorrupt, "node 1")
	if s.Len() != before {
		t.Fatal("a balance query changed the session")
	}
}

func TestBalanceToolPairingSeqNotFound(t *testing.T) {
	s := anaPairedSession(t)
	anaAppend(t, s, anaReplace("cp", 0, 0, 0)) // 7 replaces node 0
	meter := NewMeter(s)
	for _, seq := range []sdk.Seq{0, 3, 99, -1} { // shadowed, not a node, beyond the log, out of domain
		_, err := meter.BalancedBefore(seq)
		e := anaRequireCode(t, err, sdk.CodeToolPairingSeqNotFound, "seq ")
		if e.Seq == nil || *e.Seq != int64(seq) {
			t.Errorf("error %v; want seq %d", e, seq)
		}
		_, err = meter.BalancedAfter(seq)
		anaRequireCode(t, err, sdk.CodeToolPairingSeqNotFound)
	}
	if b, err := meter.BalancedBefore(7); err != nil || !b {
		t.Fatalf("the replacing node: %v, %v", b, err)
	}
}
