package session

import (
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
// compared on their canonical bytes without decoding them. The tables are
// in payload_shapes.go, the walker in payload_checker.go, messages, sources
// and blocks in payload_message.go, request/header and the rules that need
// the whole payload in payload_header.go, and the string comparisons and
// duplicate sets in payload_values.go.
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
	case "source/line":
		return c.sourceLine(data)
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
