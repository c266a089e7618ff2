package session

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// loopState is the agent-loop state folded from the log (docs/format.md,
// "The agent-loop protocol"): step A10a checks an appended event against
// it, and crash repair and fork closers close what it finds open.
//
// The fold never fails: a stored log is read as it is, so a log that broke
// the rules (written before them, by a lenient session, or imported) folds
// to a best-effort state. The turn, lastTurn and step fields use -1 for
// "none"; a turn or step number is never negative. lastStep starts at 0,
// as step 0 means "outside any step" (docs/format.md): a step/start needs a
// step of 1 or more.
type loopState struct {
	turn     int64      // the open turn; -1 when no turn is open
	lastTurn int64      // the highest turn so far; -1 before the first
	step     int64      // the open step; -1 when no step is open
	lastStep int64      // the open turn's highest step; 0 when it has none
	calls    []loopCall // the calls announced since the open step began, in order
}

// loopCall is one call announced by a tool-call block of an
// assistant/message of the open step.
type loopCall struct {
	// id is the call id's canonical JSON string: a view into the envelope
	// of the assistant/message that announced it (records are immutable and
	// stay in memory), so announcing a call allocates nothing. Canonical
	// encodings are equal exactly when the ids are (jsonv.Value.RawEqual).
	id        []byte
	step      int64   // the step of the assistant/message that announced it
	callSeq   sdk.Seq // the seq of its tool/call, when called
	resultSeq sdk.Seq // the seq of its tool/result, when answered
	called    bool    // a tool/call was recorded
	answered  bool    // a tool/result answered it
}

// newLoopState returns the state of an empty log.
func newLoopState() loopState { return loopState{turn: -1, lastTurn: -1, step: -1} }

// clone returns a copy that shares nothing with l (a group's scratch state).
func (l *loopState) clone() loopState {
	c := *l
	c.calls = append([]loopCall(nil), l.calls...)
	return c
}

// idString returns the call's id (it allocates: for errors and closers).
func (c *loopCall) idString() string {
	doc, _ := jsonv.Parse(c.id, jsonv.Options{}) // canonical JSON string bytes: cannot fail
	id, _ := doc.Root().Str()
	return id
}

// envView returns the canonical encoding of v, a value inside r's data d
// (the record's dataView), as a view into r's envelope: the envelope holds
// the data's canonical bytes at dataStart, whichever parse d comes from.
// It returns nil when v is absent.
func envView(r *record, d, v jsonv.Value) []byte {
	if !v.Exists() {
		return nil
	}
	ds, _ := d.Span()
	start, end := v.Span()
	off := int(r.dataStart) - ds
	return r.env[off+start : off+end : off+end]
}

// dropCalls forgets the open step's calls.
func (l *loopState) dropCalls() {
	clear(l.calls)
	l.calls = l.calls[:0]
}

// findValue returns the index of the call announced with the id given as
// a JSON string, or -1, without allocating.
func (l *loopState) findValue(id jsonv.Value) int {
	for i := range l.calls {
		if id.RawEqual(l.calls[i].id) {
			return i
		}
	}
	return -1
}

// unanswered reports whether a call of the open step has no result.
func (l *loopState) unanswered() bool {
	for i := range l.calls {
		if !l.calls[i].answered {
			return true
		}
	}
	return false
}

// isLoopType reports whether events of type typ change the loop state.
func isLoopType(typ string) bool {
	switch typ {
	case TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd, TypeAssistantMessage, TypeToolCall, TypeToolResult:
		return true
	}
	return false
}

// fold applies one event. Only the types of isLoopType change the state;
// a tool/result that replaces an earlier one (the pruner's rewrite) answers
// nothing.
func (l *loopState) fold(r *record) {
	if !isLoopType(r.typ) {
		return
	}
	d := r.dataView()
	switch r.typ {
	case TypeTurnStart:
		n, _ := d.Get("turn").Int()
		l.turn, l.lastTurn = n, max(l.lastTurn, n)
		l.step, l.lastStep = -1, 0
		l.dropCalls()
	case TypeTurnEnd:
		n, _ := d.Get("turn").Int()
		l.turn, l.lastTurn = -1, max(l.lastTurn, n)
		l.step, l.lastStep = -1, 0
		l.dropCalls()
	case TypeStepStart:
		n, _ := d.Get("step").Int()
		l.step, l.lastStep = n, max(l.lastStep, n)
	case TypeStepEnd:
		n, _ := d.Get("step").Int()
		l.step, l.lastStep = -1, max(l.lastStep, n)
		l.dropCalls()
	case TypeAssistantMessage:
		step, _ := d.Get("step").Int()
		for _, b := range d.Get("message").Get("content").Elements() {
			if !b.Get("type").StrEqual("tool-call") {
				continue
			}
			idv := b.Get("id")
			if i := l.findValue(idv); i >= 0 {
				l.calls[i] = loopCall{id: l.calls[i].id, step: step} // announced again: a foreign log
				continue
			}
			l.calls = append(l.calls, loopCall{id: envView(r, d, idv), step: step})
		}
	case TypeToolCall:
		if i := l.findValue(d.Get("callId")); i >= 0 {
			l.calls[i].called, l.calls[i].callSeq = true, r.seq
		}
	case TypeToolResult:
		if r.meta.op.Replace {
			return
		}
		if i := l.findValue(d.Get("message").Get("toolCallId")); i >= 0 {
			l.calls[i].answered, l.calls[i].resultSeq = true, r.seq
		}
	}
}

// foldLoop folds the loop state of a log of n events, the i-th of which at
// returns. Everything before the last turn boundary (turn/start or
// turn/end) is summed up by it, and everything in the open turn before its
// last step boundary by that one, so a long log costs a backward scan of
// types and a parse of the open step's events only. For a log that keeps
// the rules the result is the fold of every event; for one that does not,
// it is the best effort the fold promises.
func foldLoop(n int, at func(int) *record) loopState {
	l := newLoopState()
	t := n - 1
	for t >= 0 && at(t).typ != TypeTurnStart && at(t).typ != TypeTurnEnd {
		t--
	}
	if t < 0 {
		return l
	}
	l.fold(at(t))
	from := t + 1
	if l.turn >= 0 {
		st := n - 1
		for st > t && at(st).typ != TypeStepStart && at(st).typ != TypeStepEnd {
			st--
		}
		if st > t {
			from = st
		}
	}
	for i := from; i < n; i++ {
		l.fold(at(i))
	}
	return l
}

// refoldLoop folds the session's loop state from its records (after a
// restore or an extension, which read a stored log as it is).
func (s *Session) refoldLoop() {
	recs := s.records
	s.loop = foldLoop(len(recs), func(i int) *record { return recs[i] })
}

// checkLoop runs step A10a (docs/format.md, "The agent-loop protocol"):
// r must fit the loop state l. A session whose header says
// sdk.ProtocolLenient skips it. It allocates only to report a violation.
func (s *Session) checkLoop(l *loopState, r *record) error {
	if s.opts.Header.Protocol == sdk.ProtocolLenient {
		return nil
	}
	return l.check(r)
}

// check is checkLoop without the lenient switch.
func (l *loopState) check(r *record) error {
	switch r.typ {
	case TypeTurnStart:
		n, _ := r.dataView().Get("turn").Int()
		if l.turn >= 0 {
			return loopError(sdk.CodeTurnAlreadyOpen, "turn/start needs no turn open; turn "+itoa(l.turn)+" is open, asked for turn "+itoa(n),
				"open", itoa(l.turn), "turn", itoa(n))
		}
		if n <= l.lastTurn {
			return loopError(sdk.CodeTurnNotIncreasing, "turn/start must number its turn above every earlier turn; asked for turn "+itoa(n)+", the last was "+itoa(l.lastTurn),
				"turn", itoa(n), "last", itoa(l.lastTurn))
		}
	case TypeTurnEnd:
		n, _ := r.dataView().Get("turn").Int()
		if l.turn < 0 {
			return loopError(sdk.CodeTurnNotOpen, "turn/end closes the open turn; asked for turn "+itoa(n)+", no turn is open", "turn", itoa(n))
		}
		if n != l.turn {
			return loopError(sdk.CodeTurnNotOpen, "turn/end closes the open turn; asked for turn "+itoa(n)+", turn "+itoa(l.turn)+" is open",
				"turn", itoa(n), "open", itoa(l.turn))
		}
		if l.step >= 0 {
			return loopError(sdk.CodeStepAlreadyOpen, "turn/end needs the turn's step closed first; step "+itoa(l.step)+" of turn "+itoa(l.turn)+" is open (append step/end)",
				"step", itoa(l.step))
		}
	case TypeStepStart:
		d := r.dataView()
		t, n := turnStep(d)
		if l.turn < 0 {
			return loopError(sdk.CodeTurnNotOpen, "step/start needs an open turn; asked for turn "+itoa(t)+", no turn is open (append turn/start first)", "turn", itoa(t))
		}
		if t != l.turn {
			return l.mismatch("step/start", t, n)
		}
		if l.step >= 0 {
			return loopError(sdk.CodeStepAlreadyOpen, "step/start needs no step open; step "+itoa(l.step)+" is open, asked for step "+itoa(n)+" (append step/end first)",
				"step", itoa(l.step))
		}
		if n <= l.lastStep {
			return loopError(sdk.CodeStepNotIncreasing, "step/start must number its step above the turn's earlier steps and above 0 (step 0 means outside any step); asked for step "+itoa(n)+", the last was "+itoa(l.lastStep),
				"step", itoa(n), "last", itoa(l.lastStep))
		}
	case TypeStepEnd, TypeAssistantMessage, TypeAssistantAttempt, TypeToolCall, TypeToolResult:
		if r.typ == TypeToolResult && r.meta.op.Replace {
			return nil // a rewrite of an earlier result (S7e–S7g)
		}
		d := r.dataView()
		t, n := turnStep(d)
		if err := l.inStep(r.typ, t, n); err != nil {
			return err
		}
		return l.checkInStep(r.typ, d)
	case TypeSystemMessage, TypeDeveloperMessage:
		d := r.dataView()
		t, n := turnStep(d)
		outside := n == 0 && (l.turn >= 0 && t == l.turn || l.turn < 0 && t == 0)
		inStep := l.step >= 0 && t == l.turn && n == l.step
		if !outside && !inStep {
			return l.mismatch(r.typ, t, n)
		}
		if l.unanswered() {
			return l.unansweredError(r.typ)
		}
	case TypeUserMessage:
		d := r.dataView()
		if d.Get("source").Get("kind").StrEqual("compact-checkpoint") {
			return nil // a compaction's checkpoint, governed by the compaction invariants
		}
		if l.turn < 0 {
			return loopError(sdk.CodeTurnNotOpen, "a user/message needs an open turn; no turn is open (append turn/start first)")
		}
		if l.unanswered() {
			return l.unansweredError("user/message")
		}
	}
	return nil
}

// turnStep returns the turn and step an event's data carries.
func turnStep(d jsonv.Value) (turn, step int64) {
	turn, _ = d.Get("turn").Int()
	step, _ = d.Get("step").Int()
	return turn, step
}

// checkInStep runs the rules of an event of type typ that belongs to the
// open step (inStep passed), d being its data.
func (l *loopState) checkInStep(typ string, d jsonv.Value) error {
	switch typ {
	case TypeStepEnd:
		if l.unanswered() {
			return l.unansweredError(typ)
		}
	case TypeAssistantMessage:
		if l.unanswered() {
			return l.unansweredError(typ)
		}
		for _, b := range d.Get("message").Get("content").Elements() {
			if !b.Get("type").StrEqual("tool-call") {
				continue
			}
			if i := l.findValue(b.Get("id")); i >= 0 {
				id := l.calls[i].idString()
				return loopError(sdk.CodeToolCallRepeated, "an assistant/message announces call "+strconv.Quote(id)+", which step "+itoa(l.step)+" already announced; call ids are unique within a step",
					"callId", id)
			}
		}
	case TypeToolCall:
		i, e := l.announced(typ, d.Get("callId"), sdk.CodeToolCallNotAnnounced)
		if e != nil {
			return e
		}
		if c := l.calls[i]; c.called {
			return loopError(sdk.CodeToolCallRepeated, "tool/call for call "+strconv.Quote(c.idString())+" was already recorded at seq "+itoa(int64(c.callSeq)),
				"callId", c.idString())
		}
	case TypeToolResult:
		i, e := l.announced(typ, d.Get("message").Get("toolCallId"), sdk.CodeToolResultUnmatched)
		if e != nil {
			return e
		}
		if c := l.calls[i]; c.answered {
			return loopError(sdk.CodeToolResultRepeated, "call "+strconv.Quote(c.idString())+" was already answered at seq "+itoa(int64(c.resultSeq)),
				"callId", c.idString(), "resultSeq", itoa(int64(c.resultSeq)))
		}
	}
	return nil
}

// announced returns the index of the open step's call whose id is the
// JSON string idv, or, when no assistant/message of the step announced it,
// the error with code (TOOL_CALL_NOT_ANNOUNCED for a tool/call,
// TOOL_RESULT_UNMATCHED for a tool/result) for an event of type typ.
func (l *loopState) announced(typ string, idv jsonv.Value, code sdk.Code) (int, *sdk.Error) {
	if i := l.findValue(idv); i >= 0 {
		return i, nil
	}
	id, _ := idv.Str()
	return -1, loopError(code, typ+" names call "+strconv.Quote(id)+", which no tool-call block of step "+itoa(l.step)+"'s assistant/message announced",
		"callId", id)
}

// inStep checks that an event carrying turn t and step n belongs to the
// open step: STEP_NOT_OPEN when none is open (or, for step/end, when n is
// not it), TURN_STEP_MISMATCH when t or n is not the open one.
func (l *loopState) inStep(typ string, t, n int64) error {
	if l.step < 0 {
		return loopError(sdk.CodeStepNotOpen, typ+" needs an open step; asked for step "+itoa(n)+", no step is open (append step/start first)", "step", itoa(n))
	}
	if typ == TypeStepEnd && t == l.turn && n != l.step {
		return loopError(sdk.CodeStepNotOpen, "step/end closes the open step; asked for step "+itoa(n)+", step "+itoa(l.step)+" is open",
			"step", itoa(n), "open", itoa(l.step))
	}
	if t != l.turn || n != l.step {
		return l.mismatch(typ, t, n)
	}
	return nil
}

// mismatch is TURN_STEP_MISMATCH for an event of type typ carrying turn t
// and step n.
func (l *loopState) mismatch(typ string, t, n int64) *sdk.Error {
	open := "no turn is open"
	meta := []string{"turn", itoa(t), "step", itoa(n)}
	if l.turn >= 0 {
		open = "turn " + itoa(l.turn) + " is open"
		meta = append(meta, "openTurn", itoa(l.turn))
		if l.step >= 0 {
			open += " with step " + itoa(l.step)
			meta = append(meta, "openStep", itoa(l.step))
		} else {
			open += " with no step open"
		}
	}
	rule := typ + " must carry the open turn and step"
	if typ == TypeSystemMessage || typ == TypeDeveloperMessage {
		rule = typ + " must carry the open turn and step, or step 0 with the open turn (turn 0 when no turn is open)"
	}
	return loopError(sdk.CodeTurnStepMismatch, rule+"; it carries turn "+itoa(t)+" step "+itoa(n)+", "+open, meta...)
}

// unansweredError is TOOL_CALLS_UNANSWERED for an event of type typ,
// naming the open step's calls without a result.
func (l *loopState) unansweredError(typ string) *sdk.Error {
	var ids []string
	for _, c := range l.calls {
		if !c.answered {
			ids = append(ids, c.idString())
		}
	}
	list := jsonv.AppendStringArray(nil, ids)
	return loopError(sdk.CodeToolCallsUnanswered, typ+" needs every call of step "+itoa(l.step)+" answered first; calls "+string(list)+" have no tool/result (a harness that gives up on a call writes an error result for it)",
		"callIds", string(list))
}

// loopError builds a loop rule's error with its Meta given as name, value
// pairs.
func loopError(code sdk.Code, detail string, meta ...string) *sdk.Error {
	e := &sdk.Error{Code: code, Op: "session", Detail: detail}
	if len(meta) > 0 {
		e.Meta = make(map[string]string, len(meta)/2)
		for i := 0; i+1 < len(meta); i += 2 {
			e.Meta[meta[i]] = meta[i+1]
		}
	}
	return e
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
