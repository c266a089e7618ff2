package session

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Event-local validation (SPEC §6.4): the payload shapes of the core
// vocabulary (§4.2, §4.3), messages and content blocks (§5), the
// request/header rules and the developer/message headerSeq rule (§8.3), and
// the targets member of projection events (§19.1).
//
// The shapes are tables of members (name, required, rule); one walker checks
// closed and open objects against them. Nothing is allocated on the valid path
// beyond what jsonv itself does: JSON paths are linked frames on the stack and
// are rendered to text only when an error is reported.
//
// Decisions where SPEC is silent:
//   - compactionId is a non-empty string; sourceCommandId any string.
//   - tool/call callId, name and arguments are plain strings (SPEC says no
//     more); request/context and compaction/summary provider/model too.
//   - image data must decode with base64.StdEncoding (padding required, CR and
//     LF ignored, as that decoder does); it is validated without decoding.
//   - compaction/summary.shadowedTokenCount must be integer-form here; its
//     sign is left to the relational rule of §16.3 (COMPACTION_INVARIANT).
//     compaction/prune.shadowedTokenCount, which no relational rule covers,
//     must be ≥ 0 here.
//   - adapterDefaults is strictly {reasoningEffort?, maxTokens?}: a plugin:
//     member there is HEADER_INVALID (§6.4 states the subset rule).
//   - A message's checkpoint source (user/message, kind "compact-checkpoint")
//     needs a non-empty compactionId and a string sourceCommandId if present,
//     else MESSAGE_SOURCE_INVALID; other source members stay open.
//   - Turn end reason kinds and block types "plugin:<name>" need a non-empty
//     name; the error cause of reason kind "error" is an open object.
//   - Summary blocks of compaction/summary follow the block rules of §5.2 with
//     text and plugin:* allowed, so a tool-addition there is TOOL_CHANGE_ROLE.
//   - Shape errors of data, header (not an object, missing) are
//     PAYLOAD_INVALID; a missing or non-object config is HEADER_INVALID; a
//     non-Seq headerSeq is PAYLOAD_INVALID (binding errors are §8.3's).

const pluginMemberPrefix = "plugin:"

// prule is the value rule of one member or element.
type prule uint8

const (
	rAny        prule = iota // any JSON value
	rString                  // any string
	rNonEmpty                // non-empty string
	rNat                     // integer-form number ≥ 0 (safe by jsonv rule J9)
	rSeq                     // integer-form number in 0 … MaxSeq
	rInt                     // integer-form number
	rNatOrNull               // rNat or null
	rTrue                    // literal true
	rBool                    // true or false
	rNumber                  // any number
	rObject                  // any object
	rArray                   // array of any values
	rSeqs                    // array of rSeq
	rMsgID                   // non-empty string of at most 256 bytes
	rBase64                  // string that base64.StdEncoding decodes
	rStop                    // string or array of strings (config.stop)
	rUsage                   // TokenUsage (§5.3)
	rToolError               // ToolError (§5.3)
	rRange                   // {start, end} of Seqs
	rReason                  // TurnEndReason (§4.3)
	rCause                   // aborted cause (§4.3)
	rErrorInfo               // error of reason kind "error" (§4.3)
	rTodos                   // todo/write list
	rTodoStatus              // pending | in_progress | completed
	rSummary                 // Block[] of text and plugin:* blocks
	rMessage                 // the message of the checker's event type (§5.1)
)

// pmember is one listed member of an object shape.
type pmember struct {
	name string
	req  bool
	rule prule
}

// pshape lists an object's members; at most 32.
type pshape []pmember

func (s pshape) find(key jsonv.Value) int {
	for i := range s {
		if key.StrEqual(s[i].name) {
			return i
		}
	}
	return -1
}

var (
	turnMember = pmember{"turn", true, rNat}
	stepMember = pmember{"step", true, rNat}

	shapeTurnStart = pshape{turnMember}
	shapeTurnEnd   = pshape{turnMember, {"reason", true, rReason}}
	shapeStep      = pshape{turnMember, stepMember}
	shapeSystem    = pshape{turnMember, stepMember, {"message", true, rMessage}}
	shapeDeveloper = pshape{turnMember, stepMember, {"message", true, rMessage}, {"headerSeq", false, rSeq}}
	shapeAssistant = pshape{turnMember, stepMember, {"message", true, rMessage}, {"stream", true, rArray},
		{"usage", false, rUsage}, {"interrupted", false, rTrue}}
	shapeAttempt  = pshape{turnMember, stepMember, {"stream", true, rArray}}
	shapeToolCall = pshape{turnMember, stepMember, {"callId", true, rString}, {"name", true, rString},
		{"arguments", true, rString}}
	shapeToolResult = pshape{turnMember, stepMember, {"message", true, rMessage}, {"error", false, rToolError},
		{"meta", false, rAny}}
	shapeTodoWrite = pshape{{"todos", true, rTodos}}
	shapeTodo      = pshape{{"content", true, rString}, {"status", true, rTodoStatus}}
	shapeContext   = pshape{{"provider", true, rString}, {"model", true, rString},
		{"contextWindow", false, rNat}, {"systemPromptUpdate", false, rString}}
	shapeEndSeed   = pshape{{"inherited", false, rTrue}}
	shapeRecovered = pshape{{"tornBytes", true, rNat}, {"tornFromSeq", true, rSeq}, {"artifact", false, rString}}
	shapeCompStart = pshape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"turn", true, rNatOrNull}}
	shapeCompSummary = pshape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"summary", true, rSummary}, {"shadowedRange", true, rRange}, {"shadowedSeqs", true, rSeqs},
		{"shadowedTokenCount", true, rInt}, {"provider", true, rString}, {"model", true, rString},
		{"maxTokens", false, rNat}, {"usage", false, rUsage}, {"rawOutput", false, rAny}}
	shapeCompEnd = pshape{{"compactionId", true, rNonEmpty}, {"sourceCommandId", false, rString},
		{"turn", true, rNatOrNull}, {"error", false, rString}}
	shapeCompPrune = pshape{{"shadowedRange", true, rRange}, {"shadowedSeqs", true, rSeqs},
		{"shadowedTokenCount", true, rNat}}

	shapeRange     = pshape{{"start", true, rSeq}, {"end", true, rSeq}}
	shapeUsage     = pshape{{"input", true, rNat}, {"output", true, rNat}, {"cacheRead", false, rNat}, {"cacheWrite", false, rNat}}
	shapeToolError = pshape{{"name", true, rString}, {"code", true, rString}, {"reason", false, rString}}

	shapeReasonPlain   = pshape{{"kind", true, rAny}}
	shapeReasonAborted = pshape{{"kind", true, rAny}, {"cause", true, rCause}}
	shapeReasonError   = pshape{{"kind", true, rAny}, {"error", true, rErrorInfo}}
	shapeCausePlain    = pshape{{"kind", true, rAny}}
	shapeCauseHook     = pshape{{"kind", true, rAny}, {"reason", true, rString}}
	shapeErrorInfo     = pshape{{"message", true, rString}, {"code", true, rString}}

	shapeMessage     = pshape{{"id", true, rMsgID}, {"role", true, rAny}, {"content", true, rArray}, {"source", true, rObject}}
	shapeToolMessage = pshape{{"id", true, rMsgID}, {"role", true, rAny}, {"content", true, rArray}, {"source", true, rObject},
		{"toolCallId", true, rNonEmpty}, {"isError", false, rBool}}

	shapeHeaderData = pshape{{"header", true, rAny}, {"reason", true, rAny}, {"startsSeries", false, rAny}}
	shapeHeader     = pshape{{"config", true, rAny}, {"adapterDefaults", false, rAny}, {"tools", false, rAny}}
	shapeConfig     = pshape{{"provider", true, rNonEmpty}, {"model", true, rNonEmpty}, {"reasoningEffort", false, rNonEmpty},
		{"maxTokens", false, rNat}, {"temperature", false, rNumber}, {"stop", false, rStop}}
	shapeToolSchema = pshape{{"name", true, rNonEmpty}, {"description", false, rString}, {"parameters", false, rObject},
		{"deferLoading", false, rTrue}}
)

// Content block kinds (§5.2) as a set.
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
	shape pshape
}{
	{"text", bText, pshape{{"type", true, rAny}, {"text", true, rString}}},
	{"reasoning", bReasoning, pshape{{"type", true, rAny}, {"text", true, rString}, {"signature", false, rString}}},
	{"tool-call", bToolCall, pshape{{"type", true, rAny}, {"id", true, rNonEmpty}, {"name", true, rNonEmpty}, {"arguments", true, rString}}},
	{"image", bImage, pshape{{"type", true, rAny}, {"mediaType", true, rString}, {"data", true, rBase64}}},
	{"tool-addition", bToolAddition, pshape{{"type", true, rAny}, {"toolName", true, rString}}},
	{"tool-removal", bToolRemoval, pshape{{"type", true, rAny}, {"toolName", true, rString}}},
}

const summaryBlocks = bText | bPlugin

// surfaceMsg is the §5.1 row of one surface event type.
type surfaceMsg struct {
	typ, role string
	blocks    blockSet
	shape     pshape
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

// checkPayload runs the event-local validation of SPEC §6.4 for one core event
// type: payload shapes of §4.2 (closed objects; plugin:* members allowed),
// turn end reasons (§4.3), messages and blocks (§5) with their specific codes,
// the request/header rules in the precedence §6.4 gives (headerSeen: the log
// already has a request/header before this event), TOOL_RESULT_ERROR_WITHOUT_ISERROR
// and DEVELOPER_HEADER_SEQ_MISMATCH. It returns nil for a valid payload and
// for a type outside the core vocabulary. Errors have Op "session", Seq -1
// and Index -1; the caller sets the seq.
func checkPayload(typ string, data jsonv.Value, headerSeen bool) *sdk.Error {
	c := pchecker{typ: typ, code: sdk.CodePayloadInvalid}
	root := jpath{name: "data"}
	var s pshape
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
		if err := c.object(&root, data, shapeDeveloper, false); err != nil {
			return err
		}
		return c.headerSeqBinding(&root, data)
	case "user/message":
		return c.message(&root, data)
	case "assistant/message":
		s = shapeAssistant
	case "assistant/attempt":
		s = shapeAttempt
	case "tool/call":
		s = shapeToolCall
	case "tool/result":
		if err := c.object(&root, data, shapeToolResult, false); err != nil {
			return err
		}
		return c.errorNeedsIsError(&root, data)
	case "todo/write":
		s = shapeTodoWrite
	case "request/header":
		return checkHeader(data, headerSeen)
	case "request/context":
		s = shapeContext
	case "session/end-seed":
		s = shapeEndSeed
	case "session/recovered":
		s = shapeRecovered
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
	return c.object(&root, data, s, false)
}

// checkMessage validates msg as the message of an event of type eventType
// (one of the five surface types) per SPEC §5.1 and §5.2. It serves the
// message member of surface events and the messages returned by projection
// plugins; paths in the detail start at "message".
func checkMessage(eventType string, msg jsonv.Value) *sdk.Error {
	c := pchecker{typ: eventType, code: sdk.CodePayloadInvalid}
	root := jpath{name: "message"}
	return c.message(&root, msg)
}

// checkProjectionTargets checks the §19.1 targets member of a projection
// event's data: a non-empty array of distinct Seqs, each < seq. Other members
// belong to the plugin. Violations are PAYLOAD_INVALID naming the element.
func checkProjectionTargets(data jsonv.Value, seq sdk.Seq) *sdk.Error {
	c := pchecker{typ: "projection event", code: sdk.CodePayloadInvalid}
	root := jpath{name: "data"}
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, &root, data, "must be an object with targets")
	}
	tp := root.member("targets")
	targets := data.Get("targets")
	if targets.Kind() != jsonv.Array || targets.Len() == 0 {
		return c.bad(c.code, &tp, targets, "must be a non-empty array of Seqs")
	}
	var small [16]int64
	seen := small[:0]
	var big map[int64]struct{}
	for i, t := range targets.Elements() {
		ep := tp.elem(i)
		if err := c.value(&ep, t, rSeq); err != nil {
			return err
		}
		n, _ := t.Int()
		if n >= int64(seq) {
			return c.badf(c.code, &ep, "%d: must be less than the event's seq %d", n, seq)
		}
		if dupInt(&seen, &big, n) {
			return c.badf(c.code, &ep, "%d: duplicate target", n)
		}
	}
	return nil
}

// pchecker carries the event type (for details) and the code of shape errors.
type pchecker struct {
	typ  string
	code sdk.Code
}

// object checks v against s: every listed member obeys its rule, required
// members are present and, unless open, every other member is named plugin:*.
// Members are checked in document order; missing ones after that.
func (c *pchecker) object(p *jpath, v jsonv.Value, s pshape, open bool) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, p, v, "must be an object")
	}
	var seen uint32
	for key, mv := range v.Members() {
		i := s.find(key)
		if i < 0 {
			if open {
				continue
			}
			name, _ := key.Str()
			if strings.HasPrefix(name, pluginMemberPrefix) {
				continue
			}
			mp := p.member(name)
			return c.badf(c.code, &mp, "unknown member")
		}
		seen |= 1 << i
		mp := p.member(s[i].name)
		if err := c.value(&mp, mv, s[i].rule); err != nil {
			return err
		}
	}
	for i := range s {
		if s[i].req && seen&(1<<i) == 0 {
			mp := p.member(s[i].name)
			return c.badf(c.code, &mp, "missing")
		}
	}
	return nil
}

// value checks one value against r.
func (c *pchecker) value(p *jpath, v jsonv.Value, r prule) *sdk.Error {
	switch r {
	case rAny:
		return nil
	case rString:
		if v.Kind() != jsonv.String {
			return c.bad(c.code, p, v, "must be a string")
		}
	case rNonEmpty:
		if v.Kind() != jsonv.String || v.StrEqual("") {
			return c.bad(c.code, p, v, "must be a non-empty string")
		}
	case rNat:
		if n, ok := intForm(v); !ok || n < 0 {
			return c.bad(c.code, p, v, "must be a non-negative safe integer")
		}
	case rSeq:
		if n, ok := intForm(v); !ok || n < 0 || n > sdk.MaxSeq {
			return c.bad(c.code, p, v, "must be a Seq (integer 0 … 2^53−1)")
		}
	case rInt:
		if _, ok := intForm(v); !ok {
			return c.bad(c.code, p, v, "must be an integer")
		}
	case rNatOrNull:
		if v.Kind() == jsonv.Null {
			return nil
		}
		if n, ok := intForm(v); !ok || n < 0 {
			return c.bad(c.code, p, v, "must be a non-negative safe integer or null")
		}
	case rTrue:
		if b, ok := v.Bool(); !ok || !b {
			return c.bad(c.code, p, v, "must be true when present")
		}
	case rBool:
		if _, ok := v.Bool(); !ok {
			return c.bad(c.code, p, v, "must be a boolean")
		}
	case rNumber:
		if v.Kind() != jsonv.Number {
			return c.bad(c.code, p, v, "must be a number")
		}
	case rObject:
		if v.Kind() != jsonv.Object {
			return c.bad(c.code, p, v, "must be an object")
		}
	case rArray:
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, p, v, "must be an array")
		}
	case rSeqs:
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, p, v, "must be an array of Seqs")
		}
		for i, e := range v.Elements() {
			ep := p.elem(i)
			if err := c.value(&ep, e, rSeq); err != nil {
				return err
			}
		}
	case rMsgID:
		s, ok := v.Str()
		if !ok || s == "" || len(s) > 256 {
			return c.bad(c.code, p, v, "must be a non-empty string of at most 256 bytes")
		}
	case rBase64:
		s, ok := v.Str()
		if !ok || !validBase64(s) {
			return c.bad(c.code, p, v, "must be a base64 string (standard encoding, padded)")
		}
	case rStop:
		if v.Kind() == jsonv.String {
			return nil
		}
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, p, v, "must be a string or an array of strings")
		}
		for i, e := range v.Elements() {
			ep := p.elem(i)
			if err := c.value(&ep, e, rString); err != nil {
				return err
			}
		}
	case rUsage:
		return c.object(p, v, shapeUsage, true)
	case rToolError:
		return c.object(p, v, shapeToolError, false)
	case rRange:
		return c.object(p, v, shapeRange, false)
	case rReason:
		return c.reason(p, v)
	case rCause:
		return c.cause(p, v)
	case rErrorInfo:
		return c.object(p, v, shapeErrorInfo, true)
	case rTodos:
		if v.Kind() != jsonv.Array {
			return c.bad(c.code, p, v, "must be an array")
		}
		for i, e := range v.Elements() {
			ep := p.elem(i)
			if err := c.object(&ep, e, shapeTodo, false); err != nil {
				return err
			}
		}
	case rTodoStatus:
		if !v.StrEqual("pending") && !v.StrEqual("in_progress") && !v.StrEqual("completed") {
			return c.bad(c.code, p, v, `must be "pending", "in_progress" or "completed"`)
		}
	case rSummary:
		return c.blocks(p, v, summaryBlocks, "compaction/summary summary")
	case rMessage:
		return c.message(p, v)
	default:
		panic("session: unknown payload rule " + strconv.Itoa(int(r)))
	}
	return nil
}

// reason checks a TurnEndReason (§4.3).
func (c *pchecker) reason(p *jpath, v jsonv.Value) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, p, v, "must be an object with a kind")
	}
	kp := p.member("kind")
	kind := v.Get("kind")
	switch {
	case kind.Kind() != jsonv.String:
		return c.bad(c.code, &kp, kind, "must be a string")
	case kind.StrEqual("completed"), kind.StrEqual("blocked"), kind.StrEqual("max-tokens"),
		kind.StrEqual("interrupted"), kind.StrEqual("forked"):
		return c.object(p, v, shapeReasonPlain, false)
	case kind.StrEqual("aborted"):
		return c.object(p, v, shapeReasonAborted, false)
	case kind.StrEqual("error"):
		return c.object(p, v, shapeReasonError, false)
	case isPluginName(kind):
		return nil // opaque
	}
	return c.bad(c.code, &kp, kind, "unknown turn end reason kind (want completed, aborted, blocked, error, max-tokens, interrupted, forked or plugin:<name>)")
}

// cause checks the cause of an aborted turn (§4.3).
func (c *pchecker) cause(p *jpath, v jsonv.Value) *sdk.Error {
	if v.Kind() != jsonv.Object {
		return c.bad(c.code, p, v, "must be an object with a kind")
	}
	kp := p.member("kind")
	kind := v.Get("kind")
	switch {
	case kind.StrEqual("user"), kind.StrEqual("parent"), kind.StrEqual("disposed"):
		return c.object(p, v, shapeCausePlain, false)
	case kind.StrEqual("hook"):
		return c.object(p, v, shapeCauseHook, false)
	}
	return c.bad(c.code, &kp, kind, `must be "user", "parent", "disposed" or "hook"`)
}

// message checks a message of the checker's event type (§5.1): role first,
// then the members, the source, the tool-call id pairing, then the blocks.
func (c *pchecker) message(p *jpath, msg jsonv.Value) *sdk.Error {
	mk := surfaceMsgOf(c.typ)
	if mk == nil {
		return c.badf(c.code, p, "%s carries no message", c.typ)
	}
	if msg.Kind() != jsonv.Object {
		return c.bad(c.code, p, msg, "must be a message object")
	}
	rp := p.member("role")
	role := msg.Get("role")
	if role.Kind() != jsonv.String {
		return c.bad(c.code, &rp, role, "must be a string")
	}
	if !role.StrEqual(mk.role) {
		return c.bad(sdk.CodeMessageRoleMismatch, &rp, role, "must be "+strconv.Quote(mk.role)+" in "+mk.typ)
	}
	if err := c.object(p, msg, mk.shape, false); err != nil {
		return err
	}
	if err := c.source(p, msg, mk); err != nil {
		return err
	}
	cp := p.member("content")
	return c.blocks(&cp, msg.Get("content"), mk.blocks, mk.typ+" messages")
}

// source checks message.source: the generic rule (object, non-empty string
// kind) with PAYLOAD_INVALID, the per-type rules of §5.1 with
// MESSAGE_SOURCE_INVALID, and toolCallId == source.callId for tool messages.
func (c *pchecker) source(p *jpath, msg jsonv.Value, mk *surfaceMsg) *sdk.Error {
	sp := p.member("source")
	src := msg.Get("source")
	kp := sp.member("kind")
	kind := src.Get("kind")
	if kind.Kind() != jsonv.String || kind.StrEqual("") {
		return c.bad(c.code, &kp, kind, "must be a non-empty string")
	}
	switch mk.role {
	case "system":
		return c.sourceKind(&kp, kind, "system-prompt")
	case "assistant":
		if err := c.sourceKind(&kp, kind, "model"); err != nil {
			return err
		}
		if err := c.sourceString(&sp, src, "provider"); err != nil {
			return err
		}
		return c.sourceString(&sp, src, "model")
	case "user":
		if !kind.StrEqual("compact-checkpoint") {
			return nil
		}
		if err := c.sourceString(&sp, src, "compactionId"); err != nil {
			return err
		}
		if v := src.Get("sourceCommandId"); v.Exists() && v.Kind() != jsonv.String {
			np := sp.member("sourceCommandId")
			return c.bad(sdk.CodeMessageSourceInvalid, &np, v, "must be a string")
		}
	case "tool":
		if err := c.sourceKind(&kp, kind, "tool"); err != nil {
			return err
		}
		if err := c.sourceString(&sp, src, "callId"); err != nil {
			return err
		}
		callID := src.Get("callId")
		tid, _ := msg.Get("toolCallId").Str()
		if !callID.StrEqual(tid) {
			cid, _ := callID.Str()
			tp := p.member("toolCallId")
			cp := sp.member("callId")
			return c.badf(sdk.CodeToolCallIDMismatch, &tp, "%q differs from %s = %q", tid, cp.String(), cid)
		}
	}
	return nil
}

// sourceKind requires source.kind == want (MESSAGE_SOURCE_INVALID).
func (c *pchecker) sourceKind(kp *jpath, kind jsonv.Value, want string) *sdk.Error {
	if kind.StrEqual(want) {
		return nil
	}
	return c.bad(sdk.CodeMessageSourceInvalid, kp, kind, "must be "+strconv.Quote(want)+" in "+c.typ)
}

// sourceString requires source.<name> to be a non-empty string
// (MESSAGE_SOURCE_INVALID).
func (c *pchecker) sourceString(sp *jpath, src jsonv.Value, name string) *sdk.Error {
	v := src.Get(name)
	if v.Kind() == jsonv.String && !v.StrEqual("") {
		return nil
	}
	np := sp.member(name)
	return c.bad(sdk.CodeMessageSourceInvalid, &np, v, "must be a non-empty string")
}

// blocks checks a content array (§5.2) with the block kinds in allowed; where
// names the container for details.
func (c *pchecker) blocks(p *jpath, content jsonv.Value, allowed blockSet, where string) *sdk.Error {
	if content.Kind() != jsonv.Array {
		return c.bad(c.code, p, content, "must be an array of blocks")
	}
	var small [8]string
	ids := small[:0]
	var big map[string]struct{}
	for i, b := range content.Elements() {
		bp := p.elem(i)
		if b.Kind() != jsonv.Object {
			return c.bad(c.code, &bp, b, "must be a block object")
		}
		tp := bp.member("type")
		t := b.Get("type")
		if t.Kind() != jsonv.String {
			return c.bad(c.code, &tp, t, "must be a string")
		}
		kind, k := blockSet(0), -1
		for j := range blockKinds {
			if t.StrEqual(blockKinds[j].name) {
				kind, k = blockKinds[j].kind, j
				break
			}
		}
		if k < 0 {
			if !isPluginName(t) {
				return c.bad(c.code, &tp, t, "unknown block type")
			}
			kind = bPlugin
		}
		if allowed&kind == 0 {
			if kind&(bToolAddition|bToolRemoval) != 0 {
				return c.bad(sdk.CodeToolChangeRole, &tp, t, "allowed only in developer/message messages, not in "+where)
			}
			return c.bad(c.code, &tp, t, "block type not allowed in "+where)
		}
		if kind == bPlugin {
			continue // opaque
		}
		if kind == bToolAddition {
			if tool := b.Get("tool"); tool.Exists() {
				mp := bp.member("tool")
				return c.badf(sdk.CodeToolAdditionInlineDefinition, &mp,
					"a tool-addition names a tool of the request header (headerSeq) and carries no definition")
			}
		}
		if err := c.object(&bp, b, blockKinds[k].shape, false); err != nil {
			return err
		}
		switch kind {
		case bToolAddition, bToolRemoval:
			if b.Get("toolName").StrEqual("") {
				np := bp.member("toolName")
				return c.badf(sdk.CodeToolChangeNameEmpty, &np, `"": must be a non-empty tool name`)
			}
		case bToolCall:
			id, _ := b.Get("id").Str()
			if dupString(&ids, &big, id) {
				ip := bp.member("id")
				return c.badf(c.code, &ip, "%q: duplicate tool-call id in the message", id)
			}
		}
	}
	return nil
}

// headerSeqBinding checks the §6.4 rule of developer/message: headerSeq
// present ⇔ at least one tool-addition block. The shape is already valid.
func (c *pchecker) headerSeqBinding(p *jpath, data jsonv.Value) *sdk.Error {
	additions := 0
	first := -1
	for i, b := range data.Get("message").Get("content").Elements() {
		if b.Get("type").StrEqual("tool-addition") {
			if additions == 0 {
				first = i
			}
			additions++
		}
	}
	hp := p.member("headerSeq")
	hs := data.Get("headerSeq")
	switch {
	case hs.Exists() && additions == 0:
		return c.bad(sdk.CodeDeveloperHeaderSeqMismatch, &hp, hs,
			"present but the message has no tool-addition block (removal-only messages carry no headerSeq)")
	case !hs.Exists() && additions > 0:
		name, _ := data.Get("message").Get("content").Index(first).Get("toolName").Str()
		return c.badf(sdk.CodeDeveloperHeaderSeqMismatch, &hp,
			"missing but the message has %d tool-addition block(s) (first %q at content[%d])", additions, name, first)
	}
	return nil
}

// errorNeedsIsError checks the §6.4 rule of tool/result: error present ⇒
// message.isError == true. The shape is already valid.
func (c *pchecker) errorNeedsIsError(p *jpath, data jsonv.Value) *sdk.Error {
	if !data.Get("error").Exists() {
		return nil
	}
	ie := data.Get("message").Get("isError")
	if b, ok := ie.Bool(); ok && b {
		return nil
	}
	mp := p.member("message")
	ip := mp.member("isError")
	if !ie.Exists() {
		return c.badf(sdk.CodeToolResultErrorWithoutIserror, &ip, "missing but data.error is present; must be true")
	}
	return c.bad(sdk.CodeToolResultErrorWithoutIserror, &ip, ie, "must be true when data.error is present")
}

// checkHeader validates request/header data in the precedence of §6.4: the
// header rules first (system, empty tools, empty adapterDefaults, shapes of
// config, adapterDefaults, tools and startsSeries, reason), then the closed
// member rule of data and header.
func checkHeader(data jsonv.Value, headerSeen bool) *sdk.Error {
	c := pchecker{typ: "request/header", code: sdk.CodePayloadInvalid}
	hc := pchecker{typ: "request/header", code: sdk.CodeHeaderInvalid}
	root := jpath{name: "data"}
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, &root, data, "must be an object")
	}
	hp := root.member("header")
	h := data.Get("header")
	if h.Kind() != jsonv.Object {
		return c.bad(c.code, &hp, h, "must be an EpochHeader object")
	}
	if sys := h.Get("system"); sys.Exists() {
		sp := hp.member("system")
		return c.badf(sdk.CodeHeaderSystemForbidden, &sp, "forbidden; the system prompt is a system/message")
	}
	tp := hp.member("tools")
	tools := h.Get("tools")
	if tools.Kind() == jsonv.Array && tools.Len() == 0 {
		return c.badf(sdk.CodeHeaderEmptyTools, &tp, "[]: omit tools instead of sending an empty list")
	}
	ap := hp.member("adapterDefaults")
	ad := h.Get("adapterDefaults")
	if ad.Kind() == jsonv.Object && ad.Len() == 0 {
		return c.badf(sdk.CodeHeaderEmptyAdapterDefaults, &ap, "{}: omit adapterDefaults instead of sending an empty object")
	}
	cp := hp.member("config")
	config := h.Get("config")
	if err := hc.object(&cp, config, shapeConfig, true); err != nil {
		return err
	}
	if ad.Exists() {
		if ad.Kind() != jsonv.Object {
			return hc.bad(hc.code, &ap, ad, "must be an object")
		}
		for key, v := range ad.Members() {
			name, _ := key.Str()
			mp := ap.member(name)
			if name != "reasoningEffort" && name != "maxTokens" {
				return hc.badf(hc.code, &mp, "unknown member (allowed: reasoningEffort, maxTokens)")
			}
			if b, ok := v.Bool(); !ok || !b {
				return hc.bad(hc.code, &mp, v, "must be true")
			}
			if !config.Get(name).Exists() {
				return hc.badf(hc.code, &mp, "marks data.header.config.%s, which is absent", name)
			}
		}
	}
	if tools.Exists() {
		if tools.Kind() != jsonv.Array {
			return hc.bad(hc.code, &tp, tools, "must be an array of ToolSchema")
		}
		var small [16]string
		names := small[:0]
		var big map[string]struct{}
		for i, t := range tools.Elements() {
			ep := tp.elem(i)
			if err := hc.object(&ep, t, shapeToolSchema, true); err != nil {
				return err
			}
			name, _ := t.Get("name").Str()
			if dupString(&names, &big, name) {
				np := ep.member("name")
				return hc.badf(hc.code, &np, "%q: duplicate tool name", name)
			}
		}
	}
	if ss := data.Get("startsSeries"); ss.Exists() {
		if b, ok := ss.Bool(); !ok || !b {
			sp := root.member("startsSeries")
			return hc.bad(hc.code, &sp, ss, "must be true when present")
		}
	}
	rp := root.member("reason")
	reason := data.Get("reason")
	initial := reason.StrEqual("initial")
	if !initial && !reason.StrEqual("resume") && !reason.StrEqual("change") && !reason.StrEqual("series") {
		return c.bad(sdk.CodeHeaderReasonInvalid, &rp, reason, `must be "initial", "resume", "change" or "series"`)
	}
	if initial && headerSeen {
		return c.bad(sdk.CodeHeaderReasonInvalid, &rp, reason, "the log already has a request/header")
	}
	if !initial && !headerSeen {
		return c.bad(sdk.CodeHeaderReasonInvalid, &rp, reason, `the first request/header of a log must have reason "initial"`)
	}
	if err := c.object(&root, data, shapeHeaderData, false); err != nil {
		return err
	}
	return c.object(&hp, h, shapeHeader, false)
}

// jpath is a JSON path as a chain of stack frames, rendered only for errors.
type jpath struct {
	up    *jpath
	name  string // member name; "" for an array element
	index int
}

func (p *jpath) member(name string) jpath { return jpath{up: p, name: name} }
func (p *jpath) elem(i int) jpath         { return jpath{up: p, index: i} }

func (p *jpath) String() string { return string(p.appendTo(nil)) }

func (p *jpath) appendTo(b []byte) []byte {
	if p.up != nil {
		b = p.up.appendTo(b)
	}
	if p.name == "" {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(p.index), 10)
		return append(b, ']')
	}
	if p.up != nil {
		b = append(b, '.')
	}
	return append(b, p.name...)
}

// bad reports v at p breaking rule; an absent v is reported as missing.
func (c *pchecker) bad(code sdk.Code, p *jpath, v jsonv.Value, rule string) *sdk.Error {
	if !v.Exists() {
		return sdk.Errorf(code, "session", "%s: %s: missing; %s", c.typ, p.String(), rule)
	}
	return sdk.Errorf(code, "session", "%s: %s = %s: %s", c.typ, p.String(), showValue(v), rule)
}

// badf reports a formatted rule at p.
func (c *pchecker) badf(code sdk.Code, p *jpath, format string, args ...any) *sdk.Error {
	e := sdk.Errorf(code, "session", format, args...)
	e.Detail = c.typ + ": " + p.String() + ": " + e.Detail
	return e
}

// showValue renders a value for a detail: scalars as (shortened) JSON, containers
// by kind and size.
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

// intForm returns the value of an integer-form number.
func intForm(v jsonv.Value) (int64, bool) {
	if v.Kind() != jsonv.Number || !v.IsIntegerForm() {
		return 0, false
	}
	return v.Int()
}

func isPluginName(v jsonv.Value) bool {
	s, ok := v.Str()
	return ok && len(s) > len(pluginMemberPrefix) && strings.HasPrefix(s, pluginMemberPrefix)
}

// dupLinear is the size up to which duplicate checks scan a slice; beyond it
// they switch to a map so hostile inputs stay linear.
const dupLinear = 32

// dupString reports whether s was seen before and records it.
func dupString(seen *[]string, big *map[string]struct{}, s string) bool {
	if *big == nil {
		for _, x := range *seen {
			if x == s {
				return true
			}
		}
		if len(*seen) < dupLinear {
			*seen = append(*seen, s)
			return false
		}
		*big = make(map[string]struct{}, 2*dupLinear)
		for _, x := range *seen {
			(*big)[x] = struct{}{}
		}
	}
	if _, ok := (*big)[s]; ok {
		return true
	}
	(*big)[s] = struct{}{}
	return false
}

// dupInt is dupString for integers.
func dupInt(seen *[]int64, big *map[int64]struct{}, n int64) bool {
	if *big == nil {
		for _, x := range *seen {
			if x == n {
				return true
			}
		}
		if len(*seen) < dupLinear {
			*seen = append(*seen, n)
			return false
		}
		*big = make(map[int64]struct{}, 2*dupLinear)
		for _, x := range *seen {
			(*big)[x] = struct{}{}
		}
	}
	if _, ok := (*big)[n]; ok {
		return true
	}
	(*big)[n] = struct{}{}
	return false
}

// validBase64 reports whether base64.StdEncoding decodes s: groups of four
// alphabet characters, the last group possibly ending in "=" or "==", CR and
// LF ignored anywhere (as that decoder does). It checks without decoding, so
// large images cost no allocation.
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
