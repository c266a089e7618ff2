package session

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// shapeSourceLine lists the members of source/line (docs/format.md).
var shapeSourceLine = objectShape{{"line", true, rNat}, {"text", false, rString}, {"bytes", false, rBase64},
	{"newline", false, rBool}, {"damage", false, rNonEmpty}}

// sourceLine checks a source/line payload: a closed object (not even
// plugin:* members: the record is a copy of the source, nothing more) with
// line ≥ 1, exactly one of text (the line as a string, without a line
// feed) and bytes (the standard base64 of a line that is not valid UTF-8,
// without a line feed), newline only as false, and damage a non-empty
// string. Every breach is PAYLOAD_INVALID naming the member and the rule.
func (c *payloadChecker) sourceLine(data jsonv.Value) *sdk.Error {
	if data.Kind() != jsonv.Object {
		return c.bad(c.code, data, "must be an object {line, text | bytes, newline?, damage?}")
	}
	for key := range data.Members() {
		if shapeSourceLine.find(key) < 0 {
			name, _ := key.Str()
			c.in(name)
			return c.badf(c.code, "unknown member; source/line holds only line, text or bytes, newline and damage")
		}
	}
	if err := c.object(data, shapeSourceLine, false); err != nil {
		return err
	}
	if n, _ := data.Get("line").Int(); n < 1 {
		c.in("line")
		return c.badf(c.code, "%d: must be a line number ≥ 1", n)
	}
	text, bytes := data.Get("text"), data.Get("bytes")
	switch {
	case text.Exists() == bytes.Exists():
		return c.badf(c.code, "must hold exactly one of text (a UTF-8 line) and bytes (the base64 of a line that is not UTF-8)")
	case text.Exists():
		if s, _ := text.Str(); strings.IndexByte(s, '\n') >= 0 {
			c.in("text")
			return c.badf(c.code, "must not hold a line feed: it ends the line (newline)")
		}
	default:
		s, _ := bytes.Str()
		b, err := base64.StdEncoding.DecodeString(s)
		c.in("bytes")
		switch {
		case err != nil:
			return c.badf(c.code, "must be standard padded base64")
		case utf8.Valid(b):
			return c.badf(c.code, "holds valid UTF-8; such a line is stored as text")
		case strings.IndexByte(string(b), '\n') >= 0:
			return c.badf(c.code, "must not hold a line feed: it ends the line (newline)")
		}
		c.out()
	}
	if nl := data.Get("newline"); nl.Exists() {
		if b, _ := nl.Bool(); b {
			c.in("newline")
			return c.badf(c.code, "true: must be absent (the line ends in a line feed) or false (a last line without one)")
		}
	}
	return nil
}
