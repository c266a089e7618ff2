package events

import (
	"encoding/json"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// ToolCall is tool/call: execution of the call c has started. Crash
// repair relies on it: a call with a tool/call and no tool/result has an
// unknown outcome.
func ToolCall(turn, step int, c Call) Input {
	b := strMember(turnStep(turn, step), "callId", c.ID)
	b = strMember(b, "name", c.Name)
	b = strMember(b, "arguments", c.Arguments)
	return Input{Type: TypeToolCall, Data: append(b, '}')}
}

// ToolFailure is the error of a failed tool call, the error member of its
// tool/result (docs/format.md, ToolError).
type ToolFailure struct {
	Name string // the error's name, e.g. "PermissionError"
	// Code is the error's code, e.g. "EACCES", or one of sdk's
	// ToolErrorNotStarted, ToolErrorOutcomeUnknown and
	// ToolErrorAbortedBeforeDispatch.
	Code   string
	Reason string // "" = absent
}

// ToolMessage is a tool call's result, for Tool: the tool message and the
// members stored beside it.
type ToolMessage struct {
	ID      string // the message id
	CallID  string // the tool call answered: its id in the assistant message
	Content []Block
	// IsError marks the result as a failure. It is implied by Failure.
	IsError bool
	Failure *ToolFailure    // nil = absent
	Meta    json.RawMessage // any JSON value; nil = absent
}

// Tool is tool/result: the result m of a tool call in step of turn.
func Tool(turn, step int, m ToolMessage) Input {
	b := member(turnStep(turn, step), "message")
	b = strMember(append(b, '{'), "id", m.ID)
	b = strMember(b, "role", "tool")
	b = strMember(b, "toolCallId", m.CallID)
	if m.IsError || m.Failure != nil {
		b = append(member(b, "isError"), "true"...)
	}
	b = content(b, m.Content)
	b = strMember(append(member(b, "source"), `{"kind":"tool"`...), "callId", m.CallID)
	b = append(b, "}}"...)
	if f := m.Failure; f != nil {
		b = strMember(append(member(b, "error"), '{'), "name", f.Name)
		b = strMember(b, "code", f.Code)
		if f.Reason != "" {
			b = strMember(b, "reason", f.Reason)
		}
		b = append(b, '}')
	}
	if m.Meta != nil {
		b = value(member(b, "meta"), m.Meta)
	}
	return surface(TypeToolResult, append(b, '}'))
}

// ToolText is a tool call's result as one text block, for ToolResult and
// ToolError.
type ToolText struct {
	ID     string // the message id
	CallID string // the tool call answered: its id in the assistant message
	Text   string // the text of its one block
}

// ToolResult is tool/result: the successful result r.
func ToolResult(turn, step int, r ToolText) Input {
	return Tool(turn, step, ToolMessage{ID: r.ID, CallID: r.CallID, Content: []Block{Text(r.Text)}})
}

// ToolError is tool/result: the call r answers failed; r's text tells the
// model what happened and f is the error (isError is set). A zero f writes
// no error member, only isError.
func ToolError(turn, step int, r ToolText, f ToolFailure) Input {
	m := ToolMessage{ID: r.ID, CallID: r.CallID, Content: []Block{Text(r.Text)}, IsError: true}
	if f != (ToolFailure{}) {
		m.Failure = &f
	}
	return Tool(turn, step, m)
}

// Replacing returns in as the replacement of the surface nodes start …
// end (inclusive, in surface order) instead of an append: its SurfaceOp is
// Replace(start, end) and its SourceEventSeqs are shadowed, which must list
// every node it hides. A rewritten tool result, such as a pruned one,
// replaces its original alone and changes nothing but the content:
//
//	events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "[2 files]"}).Replacing(8, 8, 8)
func (in Input) Replacing(start, end sdk.Seq, shadowed ...sdk.Seq) Input {
	in.SurfaceOp = Replace(start, end)
	in.SourceEventSeqs = slices.Clone(shadowed)
	return in
}
