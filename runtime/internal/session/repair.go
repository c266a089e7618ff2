package session

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Cause says why an open turn is closed (docs/architecture.md).
type Cause string

// The causes of crash repair and fork closers.
const (
	Interrupted Cause = "interrupted"
	Forked      Cause = "forked"
)

// The recovery texts of docs/architecture.md: what the log proves, and what to do.
const (
	textInterruptedUnknown = "The session stopped after this tool call started and before its result was saved, so the outcome is unknown. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
	textInterruptedNotRun  = "The session stopped before this tool call started. Run it again if you still need it."
	textForkedUnknown      = "This branch was copied from another session after this tool call started but before its result; the original session may have finished it since. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
	textForkedNotRun       = "This branch was copied from another session before this tool call started; the original session may have run it since. Only repeat it when repeating is harmless (read-only or idempotent work); for anything with side effects, first confirm what actually happened or ask the user. Never repeat it blindly."
)

type pendingCall struct {
	id      string
	step    int64
	callSeq sdk.Seq
	started bool
}

// OpenTurnClosers returns the events that close the log's open turn
// (docs/architecture.md): an error tool/result per pending call of the open step, step/end
// when a step is open, and turn/end with the cause — stamped with the last
// event's time and numbered after it. Pure and deterministic; nothing when
// the log is empty or no turn is open.
func OpenTurnClosers(events []Event, cause Cause) []Event {
	if len(events) == 0 {
		return nil
	}
	var (
		openTurn, openStep int64 = -1, -1
		pending            []pendingCall
	)
	find := func(id string) int {
		for i := range pending {
			if pending[i].id == id {
				return i
			}
		}
		return -1
	}
	// turn/start and turn/end reset all the state below, so the fold starts
	// at the last of them: a long log costs a backward scan for its last
	// turn boundary, not a fold of every event. No boundary: no turn.
	from := len(events) - 1
	for from >= 0 && events[from].r.typ != TypeTurnStart && events[from].r.typ != TypeTurnEnd {
		from--
	}
	if from < 0 {
		return nil
	}
	for _, e := range events[from:] {
		d := e.r.dataView()
		switch e.r.typ {
		case TypeTurnStart:
			openTurn, _ = d.Get("turn").Int()
			openStep, pending = -1, pending[:0]
		case TypeTurnEnd:
			openTurn, openStep, pending = -1, -1, pending[:0]
		case TypeStepStart:
			openStep, _ = d.Get("step").Int()
		case TypeStepEnd:
			openStep, pending = -1, pending[:0]
		case TypeAssistantMessage:
			step, _ := d.Get("step").Int()
			for _, b := range d.Get("message").Get("content").Elements() {
				if !b.Get("type").StrEqual("tool-call") {
					continue
				}
				id, _ := b.Get("id").Str()
				if i := find(id); i >= 0 {
					pending[i].step, pending[i].started = step, false
				} else {
					pending = append(pending, pendingCall{id: id, step: step})
				}
			}
		case TypeToolCall:
			id, _ := d.Get("callId").Str()
			if i := find(id); i >= 0 {
				pending[i].callSeq, pending[i].started = e.r.seq, true
			}
		case TypeToolResult:
			id, _ := d.Get("message").Get("source").Get("callId").Str()
			if i := find(id); i >= 0 {
				pending = append(pending[:i], pending[i+1:]...)
			}
		}
	}
	if openTurn < 0 {
		return nil
	}
	last := events[len(events)-1].r
	seq, t := last.seq+1, last.time
	var out []Event
	for _, p := range pending {
		out = append(out, closerToolResult(seq, t, openTurn, p, cause))
		seq++
	}
	if openStep >= 0 {
		out = append(out, mustEvent(seq, t, TypeStepEnd, turnStepData(openTurn, openStep), nil))
		seq++
	}
	data := []byte(`{"turn":` + strconv.FormatInt(openTurn, 10) + `,"reason":{"kind":` + string(jsonv.AppendString(nil, string(cause))) + `}}`)
	out = append(out, mustEvent(seq, t, TypeTurnEnd, data, nil))
	return out
}

// InterruptedTurnClosers is OpenTurnClosers(events, Interrupted).
func InterruptedTurnClosers(events []Event) []Event { return OpenTurnClosers(events, Interrupted) }

func turnStepData(turn, step int64) []byte {
	return []byte(`{"turn":` + strconv.FormatInt(turn, 10) + `,"step":` + strconv.FormatInt(step, 10) + `}`)
}

func closerToolResult(seq sdk.Seq, t int64, turn int64, p pendingCall, cause Cause) Event {
	code, name, text := ToolNotStarted, toolNotStartedName, textInterruptedNotRun
	if p.started {
		code, name, text = ToolOutcomeUnknown, toolOutcomeUnknownName, textInterruptedUnknown
	}
	if cause == Forked {
		text = textForkedNotRun
		if p.started {
			text = textForkedUnknown
		}
	}
	id := closerMessageID(cause, p.id, seq)
	b := []byte(`{"turn":`)
	b = strconv.AppendInt(b, turn, 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, p.step, 10)
	b = append(b, `,"message":{"id":`...)
	b = jsonv.AppendString(b, id)
	b = append(b, `,"role":"tool","toolCallId":`...)
	b = jsonv.AppendString(b, p.id)
	b = append(b, `,"isError":true,"source":{"kind":"tool","callId":`...)
	b = jsonv.AppendString(b, p.id)
	b = append(b, `},"content":[{"type":"text","text":`...)
	b = jsonv.AppendString(b, text)
	b = append(b, `}]},"error":{"name":`...)
	b = jsonv.AppendString(b, name)
	b = append(b, `,"code":`...)
	b = jsonv.AppendString(b, code)
	b = append(b, `}}`...)
	meta := &surfaceMeta{opPresent: true, opOK: true}
	if p.started {
		meta.srcPresent, meta.srcOK, meta.sources = true, true, []sdk.Seq{p.callSeq}
	}
	return mustEvent(seq, t, TypeToolResult, b, meta)
}

// mustEvent builds an event from data this package rendered itself; a
// failure is a bug in this package.
func mustEvent(seq sdk.Seq, t int64, typ string, data []byte, meta *surfaceMeta) Event {
	if meta == nil {
		meta = &surfaceMeta{}
	}
	r, err := buildEnvelope(seq, t, typ, data, meta, false)
	if err != nil {
		panic("session: rendered an invalid " + typ + ": " + err.Error())
	}
	return Event{r}
}
