package compaction

import (
	"fmt"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Validator checks the relational compaction invariants of docs/compaction.md at step
// A11 of Append (docs/format.md, The order of checks; never on restore). A violation is COMPACTION_INVARIANT with
// the rule's number and the offending values in the detail:
//
//  1. compaction/start while a bracket is open;
//  2. compaction/summary with another id than the open bracket's, or a
//     second summary in a bracket; shadowedSeqs empty or with duplicates;
//     shadowedRange.start/end not the first/last of shadowedSeqs;
//     shadowedTokenCount not a non-negative safe integer;
//  3. compaction/end not matching the open id or its turn; an end without
//     error and without exactly one summary;
//  4. a numbered bracket (turn: n) whose n is not the open turn; a
//     standalone bracket (turn: null) while a turn is open;
//  5. turn/end of turn n while bracket n is open; turn/start while a
//     standalone bracket is open;
//  6. a user/message with source.kind "compact-checkpoint" whose
//     compactionId is not the open bracket's.
//
// The state it checks against (open bracket, open turn) is folded
// incrementally, so a check costs the events appended since the previous
// one. A Validator belongs to one session: give each session its own
// (NewValidator), as store.Options.Relational does. Safe for concurrent use.
type Validator struct {
	t tracker
}

// NewValidator returns a Validator for one session.
func NewValidator() *Validator { return &Validator{} }

// CheckAppend implements session.Relational: events is the log before e.
func (v *Validator) CheckAppend(events session.EventList, e session.Event) error {
	switch e.Type() {
	case session.TypeCompactionStart, session.TypeCompactionSummary, session.TypeCompactionEnd,
		session.TypeTurnStart, session.TypeTurnEnd:
	case session.TypeUserMessage:
		if !e.DataView().Get("source").Get("kind").StrEqual("compact-checkpoint") {
			return nil
		}
	default:
		return nil
	}
	return checkInvariants(v.t.state(events), e)
}

// checkInvariants checks e against the state of the log before it.
func checkInvariants(st logState, e session.Event) error {
	d := e.DataView()
	open, b := st.open, st.bracket
	switch e.Type() {
	case session.TypeCompactionStart:
		id, _ := d.Get("compactionId").Str()
		if open {
			return violation(1, "compaction/start %q while bracket %q (started at seq %d) is open", id, b.ID, b.StartSeq)
		}
		turn, numbered := d.Get("turn").Int()
		switch cur := st.openTurn(); {
		case numbered && turn != cur:
			return violation(4, "compaction/start %q is numbered for turn %d but the open turn is %s", id, turn, turnText(cur))
		case !numbered && cur >= 0:
			return violation(4, "standalone compaction/start %q (turn: null) while turn %d is open", id, cur)
		}
	case session.TypeCompactionSummary:
		id, _ := d.Get("compactionId").Str()
		switch {
		case !open:
			return violation(2, "compaction/summary %q with no open bracket", id)
		case id != b.ID:
			return violation(2, "compaction/summary %q inside bracket %q", id, b.ID)
		case b.Summaries > 0:
			return violation(2, "a second compaction/summary in bracket %q", id)
		}
		return checkShadowed(d)
	case session.TypeCompactionEnd:
		id, _ := d.Get("compactionId").Str()
		turn, numbered := d.Get("turn").Int()
		if !numbered {
			turn = -1
		}
		switch {
		case !open:
			return violation(3, "compaction/end %q with no open bracket", id)
		case id != b.ID:
			return violation(3, "compaction/end %q does not match the open bracket %q", id, b.ID)
		case turn != b.Turn:
			return violation(3, "compaction/end %q has turn %s; its start has turn %s", id, turnText(turn), turnText(b.Turn))
		case !d.Get("error").Exists() && b.Summaries != 1:
			return violation(3, "compaction/end %q without error after %d summaries; exactly one is required", id, b.Summaries)
		}
	case session.TypeTurnEnd:
		turn, _ := d.Get("turn").Int()
		if open && b.Turn == turn {
			return violation(5, "turn/end of turn %d while its compaction bracket %q is open", turn, b.ID)
		}
	case session.TypeTurnStart:
		turn, _ := d.Get("turn").Int()
		if open && b.Turn < 0 {
			return violation(5, "turn/start of turn %d while the standalone compaction bracket %q is open", turn, b.ID)
		}
	case session.TypeUserMessage:
		id, _ := d.Get("source").Get("compactionId").Str()
		if !open {
			return violation(6, "checkpoint user/message for compaction %q with no open bracket", id)
		}
		if id != b.ID {
			return violation(6, "checkpoint user/message for compaction %q inside bracket %q", id, b.ID)
		}
	}
	return nil
}

// checkShadowed checks the shadowed members of a compaction/summary (rule 2).
func checkShadowed(d jsonv.Value) error {
	seqs := d.Get("shadowedSeqs")
	n := seqs.Len()
	if n == 0 {
		return violation(2, "compaction/summary shadowedSeqs is empty")
	}
	seen := make(map[int64]struct{}, n)
	for _, x := range seqs.Elements() {
		v, _ := x.Int()
		if _, dup := seen[v]; dup {
			return violation(2, "compaction/summary shadowedSeqs lists %d more than once", v)
		}
		seen[v] = struct{}{}
	}
	r := d.Get("shadowedRange")
	start, _ := r.Get("start").Int()
	end, _ := r.Get("end").Int()
	first, _ := seqs.Index(0).Int()
	last, _ := seqs.Index(n - 1).Int()
	if start != first || end != last {
		return violation(2, "compaction/summary shadowedRange {start %d, end %d} differs from the first and last of shadowedSeqs (%d, %d)", start, end, first, last)
	}
	count := d.Get("shadowedTokenCount")
	if c, ok := count.Int(); !ok || c < 0 { // Int is within ±(2^53−1)
		return violation(2, "compaction/summary shadowedTokenCount %s is not a non-negative safe integer", count.Bytes())
	}
	return nil
}

func turnText(turn int64) string {
	if turn < 0 {
		return "none (null)"
	}
	return fmt.Sprint(turn)
}

// violation builds the COMPACTION_INVARIANT error for a rule of docs/compaction.md.
func violation(rule int, format string, args ...any) *sdk.Error {
	detail := fmt.Sprintf(format, args...)
	return &sdk.Error{Code: sdk.CodeCompactionInvariant, Op: "compaction",
		Detail: "rule " + fmt.Sprint(rule) + ": " + strings.TrimSpace(detail)}
}
