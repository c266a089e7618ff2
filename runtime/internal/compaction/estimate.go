package compaction

import (
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// EstimateMessage returns the docs/compaction.md token estimate of a model message:
// the sum of its content blocks' estimates plus 4. Only content counts; the
// id, role and source do not. A message whose content is not an array (never
// a validated one) is estimated as empty, 4.
func EstimateMessage(msg jsonv.Value) int64 {
	var e estimator
	return e.message(msg)
}

// EstimateMessageJSON is EstimateMessage over a message's JSON bytes, for a
// message that is not in a session yet (a compaction checkpoint). It fails
// only when b is not lossless JSON (docs/format.md), with that rule's code.
func EstimateMessageJSON(b []byte) (int64, error) {
	doc, err := jsonv.Parse(b, jsonv.Options{})
	if err != nil {
		return 0, err
	}
	return EstimateMessage(doc.Root()), nil
}

// EstimateTools returns the docs/compaction.md estimate of a header's tools:
// q(cp(canonical JSON of the array)) + 4, and 0 when tools is absent, not an
// array, or empty.
func EstimateTools(tools jsonv.Value) int64 {
	if tools.Kind() != jsonv.Array || tools.Len() == 0 {
		return 0
	}
	var e estimator
	return quarterCeil(e.jsonCodePoints(tools)) + 4
}

// estimator computes estimates, reusing one scratch buffer for the canonical
// bytes it counts, so estimating a message does not allocate once the buffer
// has grown. Not safe for concurrent use.
type estimator struct{ buf []byte }

// quarterCeil is q(x) = ceil(x / 4) for x ≥ 0.
func quarterCeil(x int64) int64 { return (x + 3) / 4 }

// message estimates a message object.
func (e *estimator) message(msg jsonv.Value) int64 {
	sum := int64(4)
	for _, b := range msg.Get("content").Elements() {
		sum += e.block(b)
	}
	return sum
}

// block estimates one content block. A text, reasoning or tool-call block
// whose counted members are not strings (never a validated one) is estimated
// by the rule for any other block.
func (e *estimator) block(b jsonv.Value) int64 {
	typ := b.Get("type")
	switch {
	case typ.StrEqual("text"), typ.StrEqual("reasoning"):
		if t := b.Get("text"); t.Kind() == jsonv.String {
			return quarterCeil(e.strCodePoints(t)) + 4
		}
	case typ.StrEqual("tool-call"):
		name, args := b.Get("name"), b.Get("arguments")
		if name.Kind() == jsonv.String && args.Kind() == jsonv.String {
			return quarterCeil(e.strCodePoints(name)) + quarterCeil(e.strCodePoints(args)) + 4
		}
	}
	return 4 + quarterCeil(e.jsonCodePoints(b))
}

// jsonCodePoints returns the number of code points of v's canonical JSON text.
func (e *estimator) jsonCodePoints(v jsonv.Value) int64 {
	e.buf = v.AppendRaw(e.buf[:0])
	return int64(utf8.RuneCount(e.buf))
}

// strCodePoints returns the number of code points of the string v decodes
// to, counted on its canonical encoding without decoding it: in canonical
// JSON a backslash only starts an escape (\uXXXX for a control character, a
// two-byte escape otherwise), and each escape is one code point.
func (e *estimator) strCodePoints(v jsonv.Value) int64 {
	e.buf = v.AppendRaw(e.buf[:0])
	body := e.buf[1 : len(e.buf)-1]
	var n int64
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\':
			if body[i+1] == 'u' {
				i += 5
			} else {
				i++
			}
			n++
		case c&0xC0 != 0x80: // not a UTF-8 continuation byte
			n++
		}
	}
	return n
}
