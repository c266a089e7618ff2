package session

import (
	"strconv"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Event-local validation (docs/format.md): the payload shapes of the core
// vocabulary (docs/format.md), messages and content blocks (docs/format.md), the
// request/header rules and the developer/message headerSeq rule (docs/format.md), and
// the targets member of projection events (docs/plugins.md).
//
// The shapes are tables of members (name, required, rule); one walker checks
// closed and open objects against them. The valid path allocates only a copy
// of each image block's data (for the base64 check) and, past dupLinear tool
// names or tool-call ids, a map: the JSON path is a fixed stack of segments
// inside the checker, rendered to text only for an error, and strings are
// compared on their canonical bytes without decoding them.
//
// Order: members in document order, then missing required members; for a
// message the role comes first (MESSAGE_ROLE_MISMATCH), then its members,
// source, toolCallId pairing and blocks; then the rules that need the whole
// payload (headerSeq binding, error ⇒ isError). request/header follows the
// precedence of docs/format.md.
//
// Decisions of this package where the format leaves room:
//   - compactionId is a non-empty string; sourceCommandId any string.
//   - session/salvaged names its source by a valid session id and its
//     artifact by a non-empty string; the three counts are ≥ 0.
//   - tool/call callId, name and arguments are plain strings (nothing more
//     is asked of them); so are the provider and model of request/context
//     and compaction/summary.
//   - image data must decode with base64.StdEncoding (padding required, CR and
//     LF ignored, as that decoder does); it is validated without decoding.
//   - compaction/summary.shadowedTokenCount must be integer-form here; its
//     sign is left to the relational rule of docs/compaction.md (COMPACTION_INVARIANT).
//     compaction/prune.shadowedTokenCount, which no relational rule covers,
//     must be ≥ 0 here.
//   - adapterDefaults is strictly {reasoningEffort?, maxTokens?}: a plugin:
//     member there is HEADER_INVALID (docs/format.md states the subset rule).
//   - A message's checkpoint source (user/message, kind "compact-checkpoint")
//     needs a non-empty compactionId and a string sourceCommandId if present,
//     else MESSAGE_SOURCE_INVALID; other source members stay open.
//   - Turn end reason kinds and block types "plugin:<name>" need a non-empty
//     name; the error cause of reason kind "error" is an open object.
//   - Summary blocks of compaction/summary follow the block rules of docs/format.md with
//     text and plugin:* allowed, so a tool-addition there is TOOL_CHANGE_ROLE.
//   - Shape errors of data, header (not an object, missing) are
//     PAYLOAD_INVALID; a missing or non-object config is HEADER_INVALID; a
//     missing or non-string reason is HEADER_REASON_INVALID; a non-Seq
//     headerSeq is PAYLOAD_INVALID (binding errors are docs/format.md's).
//   - A missing or non-string message role is PAYLOAD_INVALID.
//   - Projection details name "projection event" (the type is not passed).

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

// checkPayload runs the event-local validation of docs/format.md for one core event
// type: payload shapes of docs/format.md (closed objects; plugin:* members allowed),
// turn end reasons, messages and blocks (docs/format.md) with their specific codes,
// the request/header rules in the precedence docs/format.md gives (headerSeen: the log
// already has a request/header before this event), TOOL_RESULT_ERROR_WITHOUT_ISERROR
// and DEVELOPER_HEADER_SEQ_MISMATCH. It returns nil for a valid payload and
// for a type outside the core vocabulary. Errors have Op "session", Seq -1
// and Index -1; the caller sets the seq.
func checkPayload(typ string, data jsonv.Value, headerSeen bool) *sdk.Error {
	c := newChecker(typ, "data")
	var s objectShape
	switch typ {
	case "turn/start":
		s = shapeTurnStart
	case "turn/end":
		s = shapeTurnEnd
	case "step/start", "step/end":
		s = shapeStep
	case "system/message":
		s = shapeSystem
	case "developer/message":
		if err := c.object(data, shapeDeveloper, false); err != nil {
			return err
		}
		return c.headerSeqBinding(data)
	case "user/message":
		return c.message(data)
	case "assistant/message":
		s = shapeAssistant
	case "assistant/attempt":
		s = shapeAttempt
	case "tool/call":
		s = shapeToolCall
	case "tool/result":
		if err := c.object(data, shapeToolResult, false); err != nil {
			return err
		}
		return c.errorNeedsIsError(data)
	case "todo/write":
		s = shapeTodoWrite
	case "request/header":
		return c.header(data, headerSeen)
	case "request/context":
		s = shapeContext
	case "session/end-seed":
		s = shapeEndSeed
	case "session/recovered":
		s = shapeRecovered
	case "session/salvaged":
		s = shapeSalvaged
	case "compaction/start":
		s = shapeCompStart
	case "compaction/summary":
		s = shapeCompSummary
	case "compaction/end":
		s = shapeCompEnd
	case "compaction/prune":
		s = shapeCompPrune
	default:
		return nil
	}
	return c.object(data, s, false)
}

// checkMessage validates msg as the message of an event of type eventType
// (one of the five surface types) per docs/format.md. It serves the
// message member of surface events and the messages returned by projection
// plugins; paths in the detail start at "message".
func checkMessage(eventType string, msg jsonv.Value) *sdk.Error {
	c := newChecker(eventType, "message")
	return c.message(msg)
}

// checkProjectionTargets checks the docs/plugins.md targets member of a projection
// event's data: a non-empty array of distinct Seqs, each < seq. Other members
// belong to the plugin. Violations are PAYLOAD_INVALID naming the element.
func checkProjectionTargets(data jsonv.Value, seq sdk.Seq) *sdk.Error {
	c := newChecker("projection event", "data")
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, data, "must be an object with targets")
	}
	c.in("targets")
	targets := data.Get("targets")
	if targets.Kind() != jsonv.Array || targets.Len() == 0 {
		return c.bad(c.code, targets, "must be a non-empty array of Seqs")
	}
	var seen intSet
	for i, t := range targets.Elements() {
		c.at(i)
		if err := c.value(t, rSeq); err != nil {
			return err
		}
		n, _ := t.Int()
		if n >= int64(seq) {
			return c.badf(c.code, "%d: must be less than the event's seq %d", n, seq)
		}
		if seen.add(n) {
			return c.badf(c.code, "%d: duplicate target", n)
		}
		c.out()
	}
	return nil
}

// maxPathDepth bounds the JSON paths of the shapes above (the deepest is
// data.message.content[i].<member>, five segments).
const maxPathDepth = 8

// payloadChecker walks one value. It carries the event type and the code
// of shape errors for details, and the JSON path of the value being checked
// as a fixed stack of segments: in/at push, out pops, and the text is
// rendered only when an error is reported. Error returns leave the path as
// it is.
type payloadChecker struct {
	typ  string
	code sdk.Code
	n    int
	path [maxPathDepth]pathSeg
}

type pathSeg struct {
	name  string // member name; "" for an array element
	index int
}

func newChecker(typ, root string) payloadChecker {
	c := payloadChecker{typ: typ, code: sdk.CodePayloadInvalid}
	c.in(root)
	return c
}

func (c *payloadChecker) in(name string) { c.path[c.n] = pathSeg{name: name}; c.n++ }
func (c *payloadChecker) at(i int)       { c.path[c.n] = pathSeg{index: i}; c.n++ }
func (c *payloadChecker) out()           { c.n-- }

// where renders the current path, e.g. data.message.content[2].type.
func (c *payloadChecker) where() string {
	var b []byte
	for i, s := range c.path[:c.n] {
		switch {
		case s.name == "":
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(s.index), 10)
			b = append(b, ']')
		case i > 0:
			b = append(b, '.')
			fallthrough
		default:
			b = append(b, s.name...)
		}
	}
	return string(b)
}

// bad reports v at the current path breaking rule; an absent v is reported
// as missing.
func (c *payloadChecker) bad(code sdk.Code, v jsonv.Value, rule string) *sdk.Error {
	if !v.Exists() {
		return sdk.Errorf(code, "session", "%s: %s: missing; %s", c.typ, c.where(), rule)
	}
	return sdk.Errorf(code, "session", "%s: %s = %s: %s", c.typ, c.where(), showValue(v), rule)
}

// badf reports a formatted rule at the current path.
func (c *payloadChecker) badf(code sdk.Code, format string, args ...any) *sdk.Error {
	e := sdk.Errorf(code, "session", format, args...)
	e.Detail = c.typ + ": " + c.where() + ": " + e.Detail
	return e
}

// object checks v against s: every listed member obeys its rule, required
// members are present and, unless open, every other member is named plugin:*.
// Members are checked in document order; missing ones after that.
func (c *payloadChecker) object(v jsonv.Value, s objectShape, open bool) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, v, "must be an object")
	}
	var seen uint32
	for key, mv := range v.Members() {
		i := s.find(key)
		if i < 0 {
			if open || hasPluginPrefix(key, 0) {
				continue
			}
			name, _ := key.Str()
			c.in(name)
			return c.badf(c.code, "unknown member")
		}
		seen |= 1 << i
		c.in(s[i].name)
		if err := c.value(mv, s[i].rule); err != nil {
			return err
		}
		c.out()
	}
	for i := range s {
		if s[i].req && seen&(1<<i) == 0 {
			c.in(s[i].name)
			return c.badf(c.code, "missing")
		}
	}
	return nil
}

// value checks one value against r.
func (c *payloadChecker) value(v jsonv.Value, r valueRule) *sdk.Error {
	switch r {
	case rAny:
		return nil
	case rString:
		if v.Kind() != jsonv.String {
			return c.bad(c.code, v, "must be a string")
		}
	case rNonEmpty:
		if v.Kind() != jsonv.String || v.StrEqual("") {
			return c.bad(c.code, v, "must be a non-empty string")
		}
	case rNat:
		if n, ok := v.Int(); !ok || n < 0 {
			return c.bad(c.code, v, "must be a non-negative safe integer")
		}
	case rSeq:
		if n, ok := v.Int(); !ok || n < 0 || n > sdk.MaxSeq {
			return c.bad(c.code, v, "must be a Seq (integer 0 … 2^53−1)")
		}
	case rInt:
		if _, ok := v.Int(); !ok {
			return c.bad(c.code, v, "must be an integer")
		}
	case rNatOrNull:
		if v.Kind() == jsonv.Null {
			return nil
		}
		if n, ok := v.Int(); !ok || n < 0 {
			return c.bad(c.code, v, "must be a non-negative safe integer or null")
		}
	case rTrue:
		if b, ok := v.Bool(); !ok || !b {
			return c.bad(c.code, v, "must be true when present")
		}
	case rBool:
		if _, ok := v.Bool(); !ok {
			return c.bad(c.code, v, "must be a boolean")
		}
	case rNumber:
		if v.Kind() != jsonv.Number {
			return c.bad(c.code, v, "must be a number")
		}
	case rObject:
		if v.Kind() != jsonv.Object {
			return c.bad(c.code, v, "must be an object")
		}
	case rArray:
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, v, "must be an array")
		}
	case rSeqs, rStop:
		if r == rStop && v.Kind() == jsonv.String {
			return nil
		}
		if v.Kind() != jsonv.Array {
			if r == rStop {
				return c.bad(c.code, v, "must be a string or an array of strings")
			}
			return c.bad(c.code, v, "must be an array of Seqs")
		}
		elem := rSeq
		if r == rStop {
			elem = rString
		}
		for i, e := range v.Elements() {
			c.at(i)
			if err := c.value(e, elem); err != nil {
				return err
			}
			c.out()
		}
	case rMsgID:
		if !validMessageID(v) {
			return c.bad(c.code, v, "must be a non-empty string of at most 256 bytes")
		}
	case rSessionID:
		s, ok := v.Str()
		if !ok || sdk.ValidateSessionID(s) != nil {
			return c.bad(c.code, v, "must be a session id (1–80 bytes of UTF-8 without control characters)")
		}
	case rBase64:
		s, ok := v.Str()
		if !ok || !validBase64(s) {
			return c.bad(c.code, v, "must be a base64 string (standard encoding, padded)")
		}
	case rUsage:
		return c.object(v, shapeUsage, true)
	case rToolError:
		return c.object(v, shapeToolError, false)
	case rRange:
		return c.object(v, shapeRange, false)
	case rReason:
		return c.reason(v)
	case rCause:
		return c.cause(v)
	case rErrorInfo:
		return c.object(v, shapeErrorInfo, true)
	case rTodos:
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, v, "must be an array")
		}
		for i, e := range v.Elements() {
			c.at(i)
			if err := c.object(e, shapeTodo, false); err != nil {
				return err
			}
			c.out()
		}
	case rTodoStatus:
		if !v.StrEqual("pending") && !v.StrEqual("in_progress") && !v.StrEqual("completed") {
			return c.bad(c.code, v, `must be "pending", "in_progress" or "completed"`)
		}
	case rSummary:
		return c.blocks(v, summaryBlocks, "compaction/summary")
	case rMessage:
		return c.message(v)
	default:
		panic("session: unknown payload rule " + strconv.Itoa(int(r)))
	}
	return nil
}

// reason checks a TurnEndReason (docs/format.md).
func (c *payloadChecker) reason(v jsonv.Value) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, v, "must be an object with a kind")
	}
	kind := v.Get("kind")
	switch {
	case kind.StrEqual("completed"), kind.StrEqual("blocked"), kind.StrEqual("max-tokens"),
		kind.StrEqual("interrupted"), kind.StrEqual("forked"):
		return c.object(v, shapeReasonPlain, false)
	case kind.StrEqual("aborted"):
		return c.object(v, shapeReasonAborted, false)
	case kind.StrEqual("error"):
		return c.object(v, shapeReasonError, false)
	case hasPluginPrefix(kind, 1):
		return nil // opaque
	}
	c.in("kind")
	return c.bad(c.code, kind, "unknown turn end reason kind (want completed, aborted, blocked, error, max-tokens, interrupted, forked or plugin:<name>)")
}

// cause checks the cause of an aborted turn (docs/format.md).
func (c *payloadChecker) cause(v jsonv.Value) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, v, "must be an object with a kind")
	}
	kind := v.Get("kind")
	switch {
	case kind.StrEqual("user"), kind.StrEqual("parent"), kind.StrEqual("disposed"):
		return c.object(v, shapeCausePlain, false)
	case kind.StrEqual("hook"):
		return c.object(v, shapeCauseHook, false)
	}
	c.in("kind")
	return c.bad(c.code, kind, `must be "user", "parent", "disposed" or "hook"`)
}

// message checks a message of the checker's event type (docs/format.md): role first,
// then the members, the source, the tool-call id pairing, then the blocks.
func (c *payloadChecker) message(msg jsonv.Value) *sdk.Error {
	mk := surfaceMsgOf(c.typ)
	if mk == nil {
		return c.badf(c.code, "%s carries no message", c.typ)
	}
	if msg.Kind() != jsonv.Object {
		return c.bad(c.code, msg, "must be a message object")
	}
	if role := msg.Get("role"); !role.StrEqual(mk.role) {
		c.in("role")
		if role.Kind() != jsonv.String {
			return c.bad(c.code, role, "must be a string")
		}
		return c.bad(sdk.CodeMessageRoleMismatch, role, "must be "+strconv.Quote(mk.role)+" in "+mk.typ)
	}
	if err := c.object(msg, mk.shape, false); err != nil {
		return err
	}
	if err := c.source(msg, mk); err != nil {
		return err
	}
	c.in("content")
	if err := c.blocks(msg.Get("content"), mk.blocks, mk.typ); err != nil {
		return err
	}
	c.out()
	return nil
}

// source checks message.source: the generic rule (object, non-empty string
// kind) with PAYLOAD_INVALID, the per-type rules of docs/format.md with
// MESSAGE_SOURCE_INVALID, and toolCallId == source.callId for tool messages.
func (c *payloadChecker) source(msg jsonv.Value, mk *surfaceMsg) *sdk.Error {
	src := msg.Get("source")
	c.in("source")
	kind := src.Get("kind")
	if kind.Kind() != jsonv.String || kind.StrEqual("") {
		c.in("kind")
		return c.bad(c.code, kind, "must be a non-empty string")
	}
	switch mk.role {
	case "system":
		if err := c.sourceKind(kind, "system-prompt"); err != nil {
			return err
		}
	case "assistant":
		if err := c.sourceKind(kind, "model"); err != nil {
			return err
		}
		if err := c.sourceString(src, "provider"); err != nil {
			return err
		}
		if err := c.sourceString(src, "model"); err != nil {
			return err
		}
	case "user":
		if !kind.StrEqual("compact-checkpoint") {
			break
		}
		if err := c.sourceString(src, "compactionId"); err != nil {
			return err
		}
		if v := src.Get("sourceCommandId"); v.Exists() && v.Kind() != jsonv.String {
			c.in("sourceCommandId")
			return c.bad(sdk.CodeMessageSourceInvalid, v, "must be a string")
		}
	case "tool":
		if err := c.sourceKind(kind, "tool"); err != nil {
			return err
		}
		if err := c.sourceString(src, "callId"); err != nil {
			return err
		}
		callID, toolCallID := src.Get("callId"), msg.Get("toolCallId")
		if !sameString(callID, toolCallID) {
			c.in("callId")
			cidPath := c.where()
			c.out()
			c.out()
			c.in("toolCallId")
			tid, _ := toolCallID.Str()
			cid, _ := callID.Str()
			return c.badf(sdk.CodeToolCallIDMismatch, "%q differs from %s = %q", tid, cidPath, cid)
		}
	}
	c.out()
	return nil
}

// sourceKind requires source.kind == want (MESSAGE_SOURCE_INVALID).
func (c *payloadChecker) sourceKind(kind jsonv.Value, want string) *sdk.Error {
	if kind.StrEqual(want) {
		return nil
	}
	c.in("kind")
	return c.bad(sdk.CodeMessageSourceInvalid, kind, "must be "+strconv.Quote(want)+" in "+c.typ)
}

// sourceString requires source.<name> to be a non-empty string
// (MESSAGE_SOURCE_INVALID).
func (c *payloadChecker) sourceString(src jsonv.Value, name string) *sdk.Error {
	v := src.Get(name)
	if v.Kind() == jsonv.String && !v.StrEqual("") {
		return nil
	}
	c.in(name)
	return c.bad(sdk.CodeMessageSourceInvalid, v, "must be a non-empty string")
}

// blocks checks a content array (docs/format.md) with the block kinds in allowed; where
// names the event type for details.
func (c *payloadChecker) blocks(content jsonv.Value, allowed blockSet, where string) *sdk.Error {
	if content.Kind() != jsonv.Array {
		return c.bad(c.code, content, "must be an array of blocks")
	}
	var ids stringSet
	for i, b := range content.Elements() {
		c.at(i)
		if b.Kind() != jsonv.Object {
			return c.bad(c.code, b, "must be a block object")
		}
		t := b.Get("type")
		kind, k := blockSet(0), -1
		for j := range blockKinds {
			if t.StrEqual(blockKinds[j].name) {
				kind, k = blockKinds[j].kind, j
				break
			}
		}
		if k < 0 {
			if !hasPluginPrefix(t, 1) {
				c.in("type")
				if t.Kind() != jsonv.String {
					return c.bad(c.code, t, "must be a string")
				}
				return c.bad(c.code, t, "unknown block type")
			}
			kind = bPlugin
		}
		if allowed&kind == 0 {
			c.in("type")
			if kind&(bToolAddition|bToolRemoval) != 0 {
				return c.bad(sdk.CodeToolChangeRole, t, "allowed only in developer/message, not in "+where)
			}
			return c.bad(c.code, t, "block type not allowed in "+where)
		}
		if kind == bPlugin {
			c.out()
			continue // opaque
		}
		if kind == bToolAddition && b.Get("tool").Exists() {
			c.in("tool")
			return c.badf(sdk.CodeToolAdditionInlineDefinition,
				"a tool-addition names a tool of the request header (headerSeq) and carries no definition")
		}
		if err := c.object(b, blockKinds[k].shape, false); err != nil {
			return err
		}
		switch kind {
		case bToolAddition, bToolRemoval:
			if b.Get("toolName").StrEqual("") {
				c.in("toolName")
				return c.badf(sdk.CodeToolChangeNameEmpty, `"": must be a non-empty tool name`)
			}
		case bToolCall:
			if id := b.Get("id"); ids.add(id) {
				c.in("id")
				s, _ := id.Str()
				return c.badf(c.code, "%q: duplicate tool-call id in the message", s)
			}
		}
		c.out()
	}
	return nil
}

// headerSeqBinding checks the docs/format.md rule of developer/message: headerSeq
// present ⇔ at least one tool-addition block. The shape is already valid.
func (c *payloadChecker) headerSeqBinding(data jsonv.Value) *sdk.Error {
	content := data.Get("message").Get("content")
	additions, first := 0, -1
	for i, b := range content.Elements() {
		if b.Get("type").StrEqual("tool-addition") {
			if additions == 0 {
				first = i
			}
			additions++
		}
	}
	hs := data.Get("headerSeq")
	switch {
	case hs.Exists() && additions == 0:
		c.in("headerSeq")
		return c.bad(sdk.CodeDeveloperHeaderSeqMismatch, hs,
			"present but the message has no tool-addition block (removal-only messages carry no headerSeq)")
	case !hs.Exists() && additions > 0:
		c.in("headerSeq")
		name, _ := content.Index(first).Get("toolName").Str()
		return c.badf(sdk.CodeDeveloperHeaderSeqMismatch,
			"missing but the message has %d tool-addition block(s) (first %q at content[%d])", additions, name, first)
	}
	return nil
}

// errorNeedsIsError checks the docs/format.md rule of tool/result: error present ⇒
// message.isError == true. The shape is already valid.
func (c *payloadChecker) errorNeedsIsError(data jsonv.Value) *sdk.Error {
	if !data.Get("error").Exists() {
		return nil
	}
	ie := data.Get("message").Get("isError")
	if b, ok := ie.Bool(); ok && b {
		return nil
	}
	c.in("message")
	c.in("isError")
	if !ie.Exists() {
		return c.badf(sdk.CodeToolResultErrorWithoutIserror, "missing but data.error is present; must be true")
	}
	return c.bad(sdk.CodeToolResultErrorWithoutIserror, ie, "must be true when data.error is present")
}

// header validates request/header data in the precedence of docs/format.md: the
// header rules first (system, empty tools, empty adapterDefaults, shapes of
// config, adapterDefaults, tools and startsSeries, reason), then the closed
// member rule of data and header.
func (c *payloadChecker) header(data jsonv.Value, headerSeen bool) *sdk.Error {
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, data, "must be an object")
	}
	h := data.Get("header")
	c.in("header")
	if h.Kind() != jsonv.Object {
		return c.bad(c.code, h, "must be an EpochHeader object")
	}
	if sys := h.Get("system"); sys.Exists() {
		c.in("system")
		return c.badf(sdk.CodeHeaderSystemForbidden, "forbidden; the system prompt is a system/message")
	}
	tools := h.Get("tools")
	if tools.Kind() == jsonv.Array && tools.Len() == 0 {
		c.in("tools")
		return c.badf(sdk.CodeHeaderEmptyTools, "[]: omit tools instead of sending an empty list")
	}
	ad := h.Get("adapterDefaults")
	if ad.Kind() == jsonv.Object && ad.Len() == 0 {
		c.in("adapterDefaults")
		return c.badf(sdk.CodeHeaderEmptyAdapterDefaults, "{}: omit adapterDefaults instead of sending an empty object")
	}

	c.code = sdk.CodeHeaderInvalid
	config := h.Get("config")
	c.in("config")
	if err := c.object(config, shapeConfig, true); err != nil {
		return err
	}
	c.out()
	if ad.Exists() {
		c.in("adapterDefaults")
		if ad.Kind() != jsonv.Object {
			return c.bad(c.code, ad, "must be an object")
		}
		for key, v := range ad.Members() {
			name := "reasoningEffort"
			if !key.StrEqual(name) {
				name = "maxTokens"
			}
			if !key.StrEqual(name) {
				s, _ := key.Str()
				c.in(s)
				return c.badf(c.code, "unknown member (allowed: reasoningEffort, maxTokens)")
			}
			if b, ok := v.Bool(); !ok || !b {
				c.in(name)
				return c.bad(c.code, v, "must be true")
			}
			if !config.Get(name).Exists() {
				c.in(name)
				return c.badf(c.code, "marks data.header.config.%s, which is absent", name)
			}
		}
		c.out()
	}
	if tools.Exists() {
		c.in("tools")
		if tools.Kind() != jsonv.Array {
			return c.bad(c.code, tools, "must be an array of ToolSchema")
		}
		var names stringSet
		for i, t := range tools.Elements() {
			c.at(i)
			if err := c.object(t, shapeToolSchema, true); err != nil {
				return err
			}
			if name := t.Get("name"); names.add(name) {
				c.in("name")
				s, _ := name.Str()
				return c.badf(c.code, "%q: duplicate tool name", s)
			}
			c.out()
		}
		c.out()
	}
	c.out() // header
	if ss := data.Get("startsSeries"); ss.Exists() {
		if b, ok := ss.Bool(); !ok || !b {
			c.in("startsSeries")
			return c.bad(c.code, ss, "must be true when present")
		}
	}

	reason := data.Get("reason")
	initial := reason.StrEqual("initial")
	if !initial && !reason.StrEqual("resume") && !reason.StrEqual("change") && !reason.StrEqual("series") {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, `must be "initial", "resume", "change" or "series"`)
	}
	if initial && headerSeen {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, "the log already has a request/header")
	}
	if !initial && !headerSeen {
		c.in("reason")
		return c.bad(sdk.CodeHeaderReasonInvalid, reason, `the first request/header of a log must have reason "initial"`)
	}

	c.code = sdk.CodePayloadInvalid
	if err := c.object(data, shapeHeaderData, false); err != nil {
		return err
	}
	c.in("header")
	return c.object(h, shapeHeader, false)
}

// showValue renders a value for a detail: scalars as (shortened) JSON,
// containers by kind and size.
func showValue(v jsonv.Value) string {
	switch v.Kind() {
	case jsonv.Object:
		return "an object of " + strconv.Itoa(v.Len()) + " members"
	case jsonv.Array:
		return "an array of " + strconv.Itoa(v.Len()) + " elements"
	}
	const max = 80
	b := v.Bytes()
	if len(b) <= max {
		return string(b)
	}
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}

// The helpers below compare canonical encodings copied into stack buffers:
// jsonv's canonical string encoding is unique (docs/format.md), so equal bytes
// mean equal strings, and Str (which allocates) is left to error reports.

// hasPluginPrefix reports whether v is a string "plugin:" followed by at
// least minName bytes.
func hasPluginPrefix(v jsonv.Value, minName int) bool {
	const quoted = `"` + pluginMemberPrefix
	if v.Kind() != jsonv.String {
		return false
	}
	var buf [64]byte
	raw := v.AppendRaw(buf[:0])
	return len(raw) >= len(quoted)+minName+1 && string(raw[:len(quoted)]) == quoted
}

// sameString reports whether a and b are equal strings.
func sameString(a, b jsonv.Value) bool {
	if a.Kind() != jsonv.String || b.Kind() != jsonv.String {
		return false
	}
	var ba, bb [64]byte
	return string(a.AppendRaw(ba[:0])) == string(b.AppendRaw(bb[:0]))
}

// validMessageID reports whether v is a non-empty string of at most 256
// bytes. The canonical body is never shorter than the decoded string, so
// only long ids are decoded.
func validMessageID(v jsonv.Value) bool {
	if v.Kind() != jsonv.String || v.StrEqual("") {
		return false
	}
	if start, end := v.Span(); end-start-2 <= 256 {
		return true
	}
	s, _ := v.Str()
	return len(s) <= 256
}

// dupLinear is the size up to which the sets below scan an array; beyond it
// they switch to a map so hostile inputs stay linear.
const dupLinear = 64

// stringSet detects repeated string values (tool-call ids, tool names). The
// zero value is empty and lives on the caller's stack until it outgrows
// dupLinear.
type stringSet struct {
	n     int
	small [dupLinear]jsonv.Value
	big   map[string]struct{}
}

// add reports whether v equals a string added before, and adds it.
func (s *stringSet) add(v jsonv.Value) (dup bool) {
	if s.big == nil {
		for _, x := range s.small[:s.n] {
			if sameString(x, v) {
				return true
			}
		}
		if s.n < dupLinear {
			s.small[s.n] = v
			s.n++
			return false
		}
		s.big = make(map[string]struct{}, 4*dupLinear)
		for _, x := range s.small {
			k, _ := x.Str()
			s.big[k] = struct{}{}
		}
	}
	k, _ := v.Str()
	if _, ok := s.big[k]; ok {
		return true
	}
	s.big[k] = struct{}{}
	return false
}

// intSet is stringSet for integers (projection targets).
type intSet struct {
	n     int
	small [dupLinear]int64
	big   map[int64]struct{}
}

// add reports whether v was added before, and adds it.
func (s *intSet) add(v int64) (dup bool) {
	if s.big == nil {
		for _, x := range s.small[:s.n] {
			if x == v {
				return true
			}
		}
		if s.n < dupLinear {
			s.small[s.n] = v
			s.n++
			return false
		}
		s.big = make(map[int64]struct{}, 4*dupLinear)
		for _, x := range s.small {
			s.big[x] = struct{}{}
		}
	}
	if _, ok := s.big[v]; ok {
		return true
	}
	s.big[v] = struct{}{}
	return false
}

// validBase64 reports whether base64.StdEncoding decodes s: groups of four
// alphabet characters, the last group possibly ending in "=" or "==", CR and
// LF ignored anywhere (as that decoder does). It checks without decoding.
func validBase64(s string) bool {
	n, pad := 0, 0
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\r' || ch == '\n':
			continue
		case ch == '=':
			pad++
		case pad > 0:
			return false
		case 'A' <= ch && ch <= 'Z', 'a' <= ch && ch <= 'z', '0' <= ch && ch <= '9', ch == '+', ch == '/':
		default:
			return false
		}
		n++
	}
	return n%4 == 0 && pad <= 2
}
