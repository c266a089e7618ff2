package session

import "github.com/seed-e5e476df/logbook/sdk/jsonv"

// The shape tables of event-local validation: the value rules, the member
// lists of every payload object and the content blocks of each surface type.

const pluginMemberPrefix = "plugin:"

// valueRule says what value one object member or array element may hold.
type valueRule uint8

const (
	rAny        valueRule = iota // any JSON value
	rString                      // any string
	rNonEmpty                    // non-empty string
	rNat                         // integer-form number ≥ 0 (safe by jsonv rule J9)
	rSeq                         // integer-form number in 0 … MaxSeq
	rInt                         // integer-form number
	rNatOrNull                   // rNat or null
	rTrue                        // literal true
	rBool                        // true or false
	rNumber                      // any number
	rObject                      // any object
	rArray                       // array of any values
	rSeqs                        // array of rSeq
	rMsgID                       // non-empty string of at most 256 bytes
	rSessionID                   // a session id (sdk.ValidateSessionID)
	rBase64                      // string that base64.StdEncoding decodes
	rStop                        // string or array of strings (config.stop)
	rUsage                       // TokenUsage (docs/format.md)
	rToolError                   // ToolError (docs/format.md)
	rRange                       // {start, end} of Seqs
	rReason                      // TurnEndReason (docs/format.md)
	rCause                       // aborted cause (docs/format.md)
	rErrorInfo                   // error of reason kind "error" (docs/format.md)
	rTodos                       // todo/write list
	rTodoStatus                  // pending | in_progress | completed
	rSummary                     // Block[] of text and plugin:* blocks
	rMessage                     // the message of the checker's event type (docs/format.md)
)

// memberRule is one member an object shape lists: its name, whether it is
// required, and the rule its value must meet.
type memberRule struct {
	name string
	req  bool
	rule valueRule
}

// objectShape lists the members an object may have (at most 32); the
// walker checks closed and open objects against it.
type objectShape []memberRule

func (s objectShape) find(key jsonv.Value) int {
	for i := range s {
		if key.StrEqual(s[i].name) {
			return i
		}
	}
	return -1
}

var (
	turnMember = memberRule{"turn", true, rNat}
	stepMember = memberRule{"step", true, rNat}

	shapeTurnStart = objectShape{turnMember}
	shapeTurnEnd   = objectShape{turnMember, {"reason", true, rReason}}
	shapeStep      = objectShape{turnMember, stepMember}
	shapeSystem    = objectShape{turnMember, stepMember, {"message", true, rMessage}}
	shapeDeveloper = objectShape{turnMember, stepMember, {"message", true, rMessage}, {"headerSeq", false, rSeq}}
	shapeAssistant = objectShape{turnMember, stepMember, {"message", true, rMessage}, {"stream", true, rArray},
		{"usage", false, rUsage}, {"interrupted", false, rTrue}}
	shapeAttempt  = objectShape{turnMember, stepMember, {"stream", true, rArray}}
	shapeToolCall = objectShape{turnMember, stepMember, {"callId", true, rString}, {"name", true, rString},
		{"arguments", true, rString}}
	shapeToolResult = objectShape{turnMember, stepMember, {"message", true, rMessage}, {"error", false, rToolError},
		{"meta", false, rAny}}
	shapeTodoWrite = objectShape{{"todos", true, rTodos}}
	shapeTodo      = objectShape{{"content", true, rString}, {"status", true, rTodoStatus}}
	shapeContext   = objectShape{{"provider", true, rString}, {"model", true, rString},
		{"contextWindow", false, rNat}, {"systemPromptUpdate", false, rString}}
	shapeEndSeed   = objectShape{{"inherited", false, rTrue}}
	shapeRecovered = objectShape{{"tornBytes", true, rNat}, {"tornFromSeq", true, rSeq}, {"artifact", false, rString}}
	shapeSalvaged  = objectShape{{"salvagedFrom", true, rSessionID}, {"damagedAtOffset", true, rNat},
		{"damagedBytes", true, rNat}, {"intactEventsExcluded", true, rNat}, {"artifact", true, rNonEmpty}}
	shapeCompStart = objectShape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"turn", true, rNatOrNull}}
	shapeCompSummary = objectShape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"summary", true, rSummary}, {"shadowedRange", true, rRange}, {"shadowedSeqs", true, rSeqs},
		{"shadowedTokenCount", true, rInt}, {"provider", true, rString}, {"model", true, rString},
		{"maxTokens", false, rNat}, {"usage", false, rUsage}, {"rawOutput", false, rAny}}
	shapeCompEnd = objectShape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"turn", true, rNatOrNull}, {"error", false, rString}}
	shapeCompPrune = objectShape{{"shadowedRange", true, rRange}, {"shadowedSeqs", true, rSeqs},
		{"shadowedTokenCount", true, rNat}}

	shapeRange     = objectShape{{"start", true, rSeq}, {"end", true, rSeq}}
	shapeUsage     = objectShape{{"input", true, rNat}, {"output", true, rNat}, {"cacheRead", false, rNat}, {"cacheWrite", false, rNat}}
	shapeToolError = objectShape{{"name", true, rString}, {"code", true, rString}, {"reason", false, rString}}

	shapeReasonPlain   = objectShape{{"kind", true, rAny}}
	shapeReasonAborted = objectShape{{"kind", true, rAny}, {"cause", true, rCause}}
	shapeReasonError   = objectShape{{"kind", true, rAny}, {"error", true, rErrorInfo}}
	shapeCausePlain    = objectShape{{"kind", true, rAny}}
	shapeCauseHook     = objectShape{{"kind", true, rAny}, {"reason", true, rString}}
	shapeErrorInfo     = objectShape{{"message", true, rString}, {"code", true, rString}}

	shapeMessage     = objectShape{{"id", true, rMsgID}, {"role", true, rAny}, {"content", true, rArray}, {"source", true, rObject}}
	shapeToolMessage = objectShape{{"id", true, rMsgID}, {"role", true, rAny}, {"content", true, rArray}, {"source", true, rObject},
		{"toolCallId", true, rNonEmpty}, {"isError", false, rBool}}

	shapeHeaderData = objectShape{{"header", true, rAny}, {"reason", true, rAny}, {"startsSeries", false, rAny}}
	shapeHeader     = objectShape{{"config", true, rAny}, {"adapterDefaults", false, rAny}, {"tools", false, rAny}}
	shapeConfig     = objectShape{{"provider", true, rNonEmpty}, {"model", true, rNonEmpty}, {"reasoningEffort", false, rNonEmpty},
		{"maxTokens", false, rNat}, {"temperature", false, rNumber}, {"stop", false, rStop}}
	shapeToolSchema = objectShape{{"name", true, rNonEmpty}, {"description", false, rString}, {"parameters", false, rObject},
		{"deferLoading", false, rTrue}}
)

// Content block kinds (docs/format.md) as a set.
type blockSet uint8

const (
	bText blockSet = 1 << iota
	bReasoning
	bToolCall
	bImage
	bToolAddition
	bToolRemoval
	bPlugin
)

var blockKinds = [...]struct {
	name  string
	kind  blockSet
	shape objectShape
}{
	{"text", bText, objectShape{{"type", true, rAny}, {"text", true, rString}}},
	{"reasoning", bReasoning, objectShape{{"type", true, rAny}, {"text", true, rString}, {"signature", false, rString}}},
	{"tool-call", bToolCall, objectShape{{"type", true, rAny}, {"id", true, rNonEmpty}, {"name", true, rNonEmpty}, {"arguments", true, rString}}},
	{"image", bImage, objectShape{{"type", true, rAny}, {"mediaType", true, rString}, {"data", true, rBase64}}},
	{"tool-addition", bToolAddition, objectShape{{"type", true, rAny}, {"toolName", true, rString}}},
	{"tool-removal", bToolRemoval, objectShape{{"type", true, rAny}, {"toolName", true, rString}}},
}

const summaryBlocks = bText | bPlugin

// surfaceMsg is the docs/format.md row of one surface event type.
type surfaceMsg struct {
	typ, role string
	blocks    blockSet
	shape     objectShape
}

var surfaceMsgs = [...]surfaceMsg{
	{"system/message", "system", bText, shapeMessage},
	{"developer/message", "developer", bToolAddition | bToolRemoval | bText, shapeMessage},
	{"user/message", "user", bText | bImage | bPlugin, shapeMessage},
	{"assistant/message", "assistant", bText | bReasoning | bToolCall | bPlugin, shapeMessage},
	{"tool/result", "tool", bText | bImage | bPlugin, shapeToolMessage},
}

func surfaceMsgOf(eventType string) *surfaceMsg {
	for i := range surfaceMsgs {
		if surfaceMsgs[i].typ == eventType {
			return &surfaceMsgs[i]
		}
	}
	return nil
}
