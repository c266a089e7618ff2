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

// OpenTurnClosers returns the events that close the log's open turn
// (docs/architecture.md): an error tool/result per call of the open step
// without a result, step/end when a step is open, and turn/end with the
// cause — stamped with the last event's time and numbered after it. The
// open turn is the loop state of docs/format.md folded from events (the
// fold step A10a checks appends against), so closers of a log that keeps
// the loop rules keep them too. Pure and deterministic; nothing when the
// log is empty or no turn is open.
func OpenTurnClosers(events []Event, cause Cause) []Event {
	l := foldLoop(len(events), func(i int) *record { return events[i].r })
	if l.turn < 0 {
		return nil
	}
	last := events[len(events)-1].r
	seq, t := last.seq+1, last.time
	var out []Event
	for _, c := range l.calls {
		if c.answered {
			continue
		}
		out = append(out, closerToolResult(seq, t, l.turn, c, cause))
		seq++
	}
	if l.step >= 0 {
		out = append(out, mustEvent(seq, t, TypeStepEnd, turnStepData(l.turn, l.step), nil))
		seq++
	}
	data := []byte(`{"turn":` + strconv.FormatInt(l.turn, 10) + `,"reason":{"kind":` + string(jsonv.AppendString(nil, string(cause))) + `}}`)
	out = append(out, mustEvent(seq, t, TypeTurnEnd, data, nil))
	return out
}

// InterruptedTurnClosers is OpenTurnClosers(events, Interrupted).
func InterruptedTurnClosers(events []Event) []Event { return OpenTurnClosers(events, Interrupted) }

func turnStepData(turn, step int64) []byte {
	return []byte(`{"turn":` + strconv.FormatInt(turn, 10) + `,"step":` + strconv.FormatInt(step, 10) + `}`)
}

func closerToolResult(seq sdk.Seq, t int64, turn int64, p loopCall, cause Cause) Event {
	code, name, text := ToolNotStarted, toolNotStartedName, textInterruptedNotRun
	if p.called {
		code, name, text = ToolOutcomeUnknown, toolOutcomeUnknownName, textInterruptedUnknown
	}
	if cause == Forked {
		text = textForkedNotRun
		if p.called {
			text = textForkedUnknown
		}
	}
	callID := p.idString()
	id := closerMessageID(cause, callID, seq)
	b := []byte(`{"turn":`)
	b = strconv.AppendInt(b, turn, 10)
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, p.step, 10)
	b = append(b, `,"message":{"id":`...)
	b = jsonv.AppendString(b, id)
	b = append(b, `,"role":"tool","toolCallId":`...)
	b = jsonv.AppendString(b, callID)
	b = append(b, `,"isError":true,"source":{"kind":"tool","callId":`...)
	b = jsonv.AppendString(b, callID)
	b = append(b, `},"content":[{"type":"text","text":`...)
	b = jsonv.AppendString(b, text)
	b = append(b, `}]},"error":{"name":`...)
	b = jsonv.AppendString(b, name)
	b = append(b, `,"code":`...)
	b = jsonv.AppendString(b, code)
	b = append(b, `}}`...)
	meta := &surfaceMeta{opPresent: true, opOK: true}
	if p.called {
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
	r, err := buildEnvelope(seq, t, typ, data, meta, false, nil)
	if err != nil {
		panic("session: rendered an invalid " + typ + ": " + err.Error())
	}
	return Event{r}
}
