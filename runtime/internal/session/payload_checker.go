package session

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// maxPathDepth bounds the JSON paths of the shapes (payload_shapes.go; the
// deepest is data.message.content[i].<member>, five segments).
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
