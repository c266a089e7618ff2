package events

import "encoding/json"

// Event types of the core vocabulary a harness writes (docs/format.md).
const (
	TypeTurnStart        = "turn/start"
	TypeTurnEnd          = "turn/end"
	TypeStepStart        = "step/start"
	TypeStepEnd          = "step/end"
	TypeSystemMessage    = "system/message"
	TypeDeveloperMessage = "developer/message"
	TypeUserMessage      = "user/message"
	TypeAssistantMessage = "assistant/message"
	TypeAssistantAttempt = "assistant/attempt"
	TypeToolCall         = "tool/call"
	TypeToolResult       = "tool/result"
	TypeTodoWrite        = "todo/write"
	TypeRequestHeader    = "request/header"
	TypeRequestContext   = "request/context"
	// TypeSourceLine is source/line, one line of another tool's session
	// file kept byte for byte by an import (docs/format.md).
	TypeSourceLine = "source/line"
)

// TurnStart is turn/start: turn begins.
func TurnStart(turn int) Input {
	b := numMember([]byte{'{'}, "turn", int64(turn))
	return Input{Type: TypeTurnStart, Data: append(b, '}')}
}

// TurnEnd is turn/end: turn is over, for reason.
func TurnEnd(turn int, reason Reason) Input {
	b := numMember([]byte{'{'}, "turn", int64(turn))
	b = member(b, "reason")
	if reason.json == nil {
		b = append(b, "null"...) // the zero Reason: Append says a reason is required
	} else {
		b = append(b, reason.json...)
	}
	return Input{Type: TypeTurnEnd, Data: append(b, '}')}
}

// StepStart is step/start: step of turn begins.
func StepStart(turn, step int) Input {
	return Input{Type: TypeStepStart, Data: append(turnStep(turn, step), '}')}
}

// StepEnd is step/end: step of turn is over.
func StepEnd(turn, step int) Input {
	return Input{Type: TypeStepEnd, Data: append(turnStep(turn, step), '}')}
}

// Reason is why a turn ended, the reason of turn/end (docs/format.md, "Turn
// end reasons"). Make one with Completed, AbortedByUser, AbortedByParent,
// AbortedDisposed, AbortedByHook, Blocked, Failed, MaxTokens, Interrupted,
// Forked or PluginReason; the zero Reason is no reason, which Append
// rejects.
type Reason struct{ json []byte }

func kindReason(kind string) Reason {
	b := strMember([]byte{'{'}, "kind", kind)
	return Reason{append(b, '}')}
}

func abortedReason(cause []byte) Reason {
	b := strMember([]byte{'{'}, "kind", "aborted")
	b = append(member(b, "cause"), cause...)
	return Reason{append(b, '}')}
}

func causeOf(kind string) []byte { return kindReason(kind).json }

// Completed is the reason of a turn the agent loop finished normally.
func Completed() Reason { return kindReason("completed") }

// AbortedByUser is the reason of a turn the user stopped.
func AbortedByUser() Reason { return abortedReason(causeOf("user")) }

// AbortedByParent is the reason of a turn its parent (e.g. the agent that
// started this one) stopped.
func AbortedByParent() Reason { return abortedReason(causeOf("parent")) }

// AbortedDisposed is the reason of a turn stopped because its agent was
// disposed.
func AbortedDisposed() Reason { return abortedReason(causeOf("disposed")) }

// AbortedByHook is the reason of a turn a hook stopped, saying why.
func AbortedByHook(why string) Reason {
	b := strMember([]byte{'{'}, "kind", "hook")
	b = strMember(b, "reason", why)
	return abortedReason(append(b, '}'))
}

// Blocked is the reason of a turn a hook or policy stopped.
func Blocked() Reason { return kindReason("blocked") }

// TurnError is the error a turn failed with, for Failed.
type TurnError struct {
	// Code is the error's code; a failure that did not come from the model
	// has code "UNKNOWN".
	Code    string
	Message string // what happened
}

// Failed is the reason of a turn that failed (kind "error") with the
// error e.
func Failed(e TurnError) Reason {
	m := strMember([]byte{'{'}, "message", e.Message)
	m = strMember(m, "code", e.Code)
	b := strMember([]byte{'{'}, "kind", "error")
	b = append(member(b, "error"), m...)
	return Reason{append(b, "}}"...)}
}

// MaxTokens is the reason of a turn whose step hit the output token cap.
func MaxTokens() Reason { return kindReason("max-tokens") }

// Interrupted is the reason crash repair writes when it closes a turn left
// open; a harness does not write it.
func Interrupted() Reason { return kindReason("interrupted") }

// Forked is the reason a fork writes when it closes a turn it cut; a
// harness does not write it.
func Forked() Reason { return kindReason("forked") }

// PluginReason is the reason kind "plugin:<name>" of a plugin, with the
// members of the JSON object members (nil for none) after kind. logbook
// keeps it without reading it.
func PluginReason(name string, members json.RawMessage) Reason {
	b := strMember([]byte{'{'}, "kind", "plugin:"+name)
	b = extra(b, members)
	return Reason{append(b, '}')}
}
