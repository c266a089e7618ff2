package session

import (
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// class is an event type's class (docs/format.md).
type class uint8

const (
	classU class = iota // unknown to this build: retained verbatim
	classS              // surface event
	classB              // execution boundary
	classL              // core log-only fact
	classX              // reserved, written only by the store
	classP              // log-only type declared by a loaded plugin
	classJ              // message projection
	classR              // plugin record
)

func (c class) String() string {
	return [...]string{"U", "S", "B", "L", "X", "P", "J", "R"}[c]
}

// The core event types (docs/format.md; source/line from format version
// 4 on); those a
// harness writes are package events' constants.
const (
	TypeTurnStart         = events.TypeTurnStart
	TypeTurnEnd           = events.TypeTurnEnd
	TypeStepStart         = events.TypeStepStart
	TypeStepEnd           = events.TypeStepEnd
	TypeSystemMessage     = events.TypeSystemMessage
	TypeDeveloperMessage  = events.TypeDeveloperMessage
	TypeUserMessage       = events.TypeUserMessage
	TypeAssistantMessage  = events.TypeAssistantMessage
	TypeAssistantAttempt  = events.TypeAssistantAttempt
	TypeToolCall          = events.TypeToolCall
	TypeToolResult        = events.TypeToolResult
	TypeTodoWrite         = events.TypeTodoWrite
	TypeRequestHeader     = events.TypeRequestHeader
	TypeRequestContext    = events.TypeRequestContext
	TypeSourceLine        = events.TypeSourceLine
	TypeSessionEndSeed    = "session/end-seed"
	TypeSessionRecovered  = "session/recovered"
	TypeSessionSalvaged   = "session/salvaged"
	TypeCompactionStart   = "compaction/start"
	TypeCompactionSummary = "compaction/summary"
	TypeCompactionEnd     = "compaction/end"
	TypeCompactionPrune   = "compaction/prune"
)

// Prefixes of the plugin-owned type families (docs/plugins.md).
const (
	ProjectionPrefix   = "projection:"
	PluginRecordPrefix = "plugin:"
)

// Tool-error codes stored in tool/result event data (not Go errors); sdk
// defines and documents them.
const (
	ToolNotStarted         = sdk.ToolErrorNotStarted
	ToolOutcomeUnknown     = sdk.ToolErrorOutcomeUnknown
	AbortedBeforeDispatch  = sdk.ToolErrorAbortedBeforeDispatch
	toolNotStartedName     = "ToolNotStartedError"
	toolOutcomeUnknownName = "ToolOutcomeUnknownError"
)

// coreTypes lists the core types, most frequent first.
var coreTypes = [...]string{
	TypeAssistantMessage, TypeToolResult, TypeToolCall, TypeUserMessage, TypeStepStart, TypeStepEnd,
	TypeTurnStart, TypeTurnEnd, TypeRequestHeader, TypeRequestContext, TypeSystemMessage, TypeDeveloperMessage,
	TypeAssistantAttempt, TypeTodoWrite, TypeSessionEndSeed, TypeSessionRecovered,
	TypeSessionSalvaged, TypeCompactionStart, TypeCompactionSummary, TypeCompactionEnd, TypeCompactionPrune,
	TypeSourceLine,
}

func coreClass(typ string) (class, bool) {
	switch typ {
	case TypeSystemMessage, TypeDeveloperMessage, TypeUserMessage, TypeAssistantMessage, TypeToolResult:
		return classS, true
	case TypeTurnStart, TypeTurnEnd, TypeStepStart, TypeStepEnd:
		return classB, true
	case TypeAssistantAttempt, TypeToolCall, TypeTodoWrite, TypeRequestHeader, TypeRequestContext,
		TypeCompactionStart, TypeCompactionSummary, TypeCompactionEnd, TypeCompactionPrune, TypeSourceLine:
		return classL, true
	case TypeSessionEndSeed, TypeSessionRecovered, TypeSessionSalvaged:
		return classX, true
	}
	return classU, false
}

// IsCoreType reports whether typ is one of the core types.
func IsCoreType(typ string) bool {
	_, ok := coreClass(typ)
	return ok
}

// validTypeName checks the type grammar of docs/format.md:
// 1–128 bytes matching ^[a-z][a-z0-9-]*(?:[/:][a-z0-9][a-z0-9._-]*)+$.
func validTypeName(t string) bool {
	if len(t) == 0 || len(t) > 128 || !isLower(t[0]) {
		return false
	}
	i := 1
	for i < len(t) && (isLower(t[i]) || isDigit(t[i]) || t[i] == '-') {
		i++
	}
	segments := 0
	for i < len(t) {
		if t[i] != '/' && t[i] != ':' {
			return false
		}
		i++
		if i >= len(t) || !(isLower(t[i]) || isDigit(t[i])) {
			return false
		}
		i++
		for i < len(t) && (isLower(t[i]) || isDigit(t[i]) || t[i] == '.' || t[i] == '_' || t[i] == '-') {
			i++
		}
		segments++
	}
	return segments > 0
}

// validPluginName checks [a-z0-9][a-z0-9._-]{0,63} (docs/architecture.md).
func validPluginName(n string) bool {
	if len(n) == 0 || len(n) > 64 || !(isLower(n[0]) || isDigit(n[0])) {
		return false
	}
	for i := 1; i < len(n); i++ {
		c := n[i]
		if !(isLower(c) || isDigit(c) || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validRecordName checks [a-z0-9][a-z0-9._/-]* (docs/plugins.md).
func validRecordName(n string) bool {
	if len(n) == 0 || !(isLower(n[0]) || isDigit(n[0])) {
		return false
	}
	for i := 1; i < len(n); i++ {
		c := n[i]
		if !(isLower(c) || isDigit(c) || c == '.' || c == '_' || c == '-' || c == '/') {
			return false
		}
	}
	return true
}

// splitOwned splits "prefix<owner>/<rest>" into owner and rest.
func splitOwned(typ, prefix string) (owner, rest string, ok bool) {
	if !strings.HasPrefix(typ, prefix) {
		return "", "", false
	}
	owner, rest, ok = strings.Cut(typ[len(prefix):], "/")
	return owner, rest, ok
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
