package compaction

import (
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Bracket is an open compaction bracket: a compaction/start not yet followed
// by a compaction/end or a lifecycle marker (docs/compaction.md).
type Bracket struct {
	// ID is the bracket's compactionId.
	ID string
	// Turn is the turn the bracket belongs to, or -1 for a standalone bracket
	// (turn: null).
	Turn int64
	// StartSeq is the seq of the compaction/start.
	StartSeq sdk.Seq
	// Summaries counts the compaction/summary events with the bracket's id
	// since its start.
	Summaries int
}

// OpenBracket reports the open bracket of a log (docs/compaction.md): a bracket
// is open iff, scanning back, the latest compaction/start or compaction/end
// is a start and no session/end-seed follows it. It scans back from the end
// of the log to the latest of those events, so it costs the distance to it;
// the Compactor and the invariant validator keep the same state
// incrementally instead.
func OpenBracket(events session.EventList) (Bracket, bool) {
	summaries := map[string]int{}
	for i := events.Len() - 1; i >= 0; i-- {
		e := events.At(i)
		switch e.Type() {
		case session.TypeCompactionSummary:
			id, _ := e.DataView().Get("compactionId").Str()
			summaries[id]++
		case session.TypeCompactionEnd, session.TypeSessionEndSeed:
			return Bracket{}, false
		case session.TypeCompactionStart:
			b := bracketOf(e)
			b.Summaries = summaries[b.ID]
			return b, true
		}
	}
	return Bracket{}, false
}

// bracketOf reads the bracket a compaction/start opens.
func bracketOf(e session.Event) Bracket {
	d := e.DataView()
	id, _ := d.Get("compactionId").Str()
	turn, ok := d.Get("turn").Int()
	if !ok {
		turn = -1
	}
	return Bracket{ID: id, Turn: turn, StartSeq: e.Seq()}
}

// logState is what the lock and the invariants need to know about a log:
// the open bracket and the open turn. The zero value is the empty log's.
type logState struct {
	open     bool
	bracket  Bracket
	turnOpen bool
	turn     int64 // the open turn, when turnOpen
}

// openTurn returns the open turn, or -1 when none is open.
func (st logState) openTurn() int64 {
	if !st.turnOpen {
		return -1
	}
	return st.turn
}

// apply folds one event.
func (st *logState) apply(e session.Event) {
	switch e.Type() {
	case session.TypeCompactionStart:
		st.open, st.bracket = true, bracketOf(e)
	case session.TypeCompactionSummary:
		if id, _ := e.DataView().Get("compactionId").Str(); st.open && id == st.bracket.ID {
			st.bracket.Summaries++
		}
	case session.TypeCompactionEnd, session.TypeSessionEndSeed:
		st.open, st.bracket = false, Bracket{}
	case session.TypeTurnStart:
		st.turn, _ = e.DataView().Get("turn").Int()
		st.turnOpen = true
	case session.TypeTurnEnd:
		st.turnOpen = false
	}
}

// tracker keeps a logState folded incrementally over a growing log, so each
// call costs the events appended since the previous one. The logs it is
// given may end in members of a group being validated, which are dropped
// again when the group is rejected; a few earlier states are kept so that
// the next call resumes from the last one still on the log instead of
// folding the whole log again. Safe for concurrent use.
type tracker struct {
	mu   sync.Mutex
	cur  trackPoint
	hist [4]trackPoint // earlier points, most recent at hist[0]
}

// trackPoint is the state after the first n events, whose last is last.
type trackPoint struct {
	n    int
	last session.Event
	st   logState
}

// on reports whether p describes a prefix of events.
func (p trackPoint) on(events session.EventList) bool {
	return p.n <= events.Len() && (p.n == 0 || events.At(p.n-1) == p.last)
}

// state returns the state after every event of events.
func (t *tracker) state(events session.EventList) logState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.cur.on(events) {
		t.cur = trackPoint{}
		for _, p := range t.hist {
			if p.n > 0 && p.on(events) {
				t.cur = p
				break
			}
		}
	}
	n := events.Len()
	if n == t.cur.n {
		return t.cur.st
	}
	copy(t.hist[1:], t.hist[:len(t.hist)-1])
	t.hist[0] = t.cur
	for i := t.cur.n; i < n; i++ {
		t.cur.st.apply(events.At(i))
	}
	t.cur.n, t.cur.last = n, events.At(n-1)
	return t.cur.st
}
