package pruner

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Marker is M of docs/compaction.md: the text that replaces the cut middle of a
// tool output.
const Marker = "\n\n[... middle of tool output removed ...]\n\n"

// MarkerChars is cp(Marker), the code points the budget rule counts.
const MarkerChars = 43

// The default budget of docs/compaction.md, in code points.
const (
	DefaultThresholdChars = 8192
	DefaultHeadChars      = 4096
	DefaultTailChars      = 1024
)

// op is the Op of this package's errors.
const op = "pruner"

// DefaultBudget returns the budget of docs/compaction.md: 8192 / 4096 / 1024.
func DefaultBudget() sdk.PruneBudget {
	return sdk.PruneBudget{ThresholdChars: DefaultThresholdChars, HeadChars: DefaultHeadChars, TailChars: DefaultTailChars}
}

// ValidateBudget checks b against docs/compaction.md: every value ≥ 0 and
// HeadChars + MarkerChars + TailChars ≤ ThresholdChars. A violation is a
// CONFIG_INVALID *sdk.Error naming the three values.
func ValidateBudget(b sdk.PruneBudget) error {
	if b.ThresholdChars < 0 || b.HeadChars < 0 || b.TailChars < 0 {
		return sdk.Errorf(sdk.CodeConfigInvalid, op,
			"the prune budget must not be negative; got thresholdChars %d, headChars %d, tailChars %d",
			b.ThresholdChars, b.HeadChars, b.TailChars)
	}
	// Compared by subtraction: the sum of huge values would overflow.
	room := b.ThresholdChars - MarkerChars
	if room < 0 || b.HeadChars > room || b.TailChars > room-b.HeadChars {
		return sdk.Errorf(sdk.CodeConfigInvalid, op,
			"the prune budget needs headChars + %d (the marker) + tailChars ≤ thresholdChars; got headChars %d, tailChars %d, thresholdChars %d",
			MarkerChars, b.HeadChars, b.TailChars, b.ThresholdChars)
	}
	return nil
}

// Result is the outcome of pruning one message.
type Result struct {
	// Content is the new `content` array, canonical JSON.
	Content []byte
	// CharsBefore is the text code points of the original content.
	CharsBefore int64
	// CharsAfter is HeadChars + MarkerChars + TailChars: the text code
	// points of Content.
	CharsAfter int64
}

// PruneMessage applies docs/compaction.md to message, a derived tool/result message
// in JSON ({id, role, content: [...], …}). It returns ok false, and no
// Result, when the message's text is within b.ThresholdChars. It is a pure
// function: message is neither modified nor retained.
//
// Errors: CONFIG_INVALID for a budget ValidateBudget refuses;
// PAYLOAD_INVALID when message is not JSON (wrapping the JSON_* error),
// has no `content` array, or holds a block that is not an object with a
// string `type`, or a `text` block whose `text` is not a string.
func PruneMessage(message []byte, b sdk.PruneBudget) (r Result, ok bool, err error) {
	if err := ValidateBudget(b); err != nil {
		return Result{}, false, err
	}
	doc, err := jsonv.Parse(message, jsonv.Options{})
	if err != nil {
		return Result{}, false, &sdk.Error{Code: sdk.CodePayloadInvalid, Op: op,
			Detail: "the tool result message is not valid JSON", Err: err}
	}
	content := doc.Root().Get("content")
	if content.Kind() != jsonv.Array {
		return Result{}, false, payloadInvalid("the tool result message has no content array")
	}
	blocks, total, err := readBlocks(content, doc.Buffer())
	if err != nil {
		return Result{}, false, err
	}
	if total <= b.ThresholdChars {
		return Result{}, false, nil
	}
	return Result{
		Content:     cut(blocks, b.HeadChars, total-b.TailChars),
		CharsBefore: total,
		CharsAfter:  b.HeadChars + MarkerChars + b.TailChars,
	}, true, nil
}

// block is one content block: its value and, for a text block, the
// canonical encoding of its text without the quotes (aliasing the parsed
// document) and the text's length in code points.
type block struct {
	v      jsonv.Value
	isText bool
	body   []byte
	chars  int64
}

// readBlocks checks the blocks of content and measures the text blocks;
// buf is the canonical buffer of content's document.
func readBlocks(content jsonv.Value, buf []byte) ([]block, int64, error) {
	blocks := make([]block, 0, content.Len())
	var total int64
	for i, v := range content.Elements() {
		if v.Kind() != jsonv.Object || v.Get("type").Kind() != jsonv.String {
			return nil, 0, payloadInvalid("content block %d is not an object with a string type", i)
		}
		b := block{v: v}
		if v.Get("type").StrEqual("text") {
			t := v.Get("text")
			if t.Kind() != jsonv.String {
				return nil, 0, payloadInvalid("text block %d has no string text", i)
			}
			start, end := t.Span()
			b.isText, b.body = true, buf[start+1:end-1]
			b.chars = bodyChars(b.body)
			total += b.chars
		}
		blocks = append(blocks, b)
	}
	return blocks, total, nil
}

// markerBody is the canonical encoding of Marker without the quotes.
const markerBody = `\n\n[... middle of tool output removed ...]\n\n`

// cut renders the content array with the code points [from, to) of the
// concatenated text blocks removed (docs/compaction.md steps 3–4); from < to.
//
// It works on the canonical encodings of the texts: canonical JSON encodes
// each code point on its own (as UTF-8 or as one escape, docs/format.md), so the
// encoding cut at code point boundaries is the canonical encoding of the
// cut text, and the texts are never decoded and re-encoded.
func cut(blocks []block, from, to int64) []byte {
	var out []byte
	out = append(out, '[')
	wrote, marked := false, false
	var pos int64 // code points of the text blocks before the current one
	for _, b := range blocks {
		start, end := pos, pos+b.chars
		pos = end
		if !b.isText || start >= to || end <= from {
			// Not a text block, or a text block the cut does not reach
			// (an empty one at or outside the cut's ends): unchanged.
			out = appendSep(out, &wrote)
			out = b.v.AppendRaw(out)
			continue
		}
		head, tail, mark := 0, len(b.body), !marked
		if from > start {
			head = bodyOffset(b.body, from-start)
		}
		if to < end {
			tail = bodyOffset(b.body, to-start)
		}
		marked = true
		if head == 0 && !mark && tail == len(b.body) {
			continue // left empty by the cut, or empty inside it: dropped
		}
		out = appendSep(out, &wrote)
		out = appendTextBlock(out, b.v, b.body[:head], mark, b.body[tail:])
	}
	return append(out, ']')
}

// appendSep writes the comma before every element but the first.
func appendSep(out []byte, wrote *bool) []byte {
	if *wrote {
		out = append(out, ',')
	}
	*wrote = true
	return out
}

// appendTextBlock writes the text block v with its text replaced by head,
// the marker when mark, and tail (canonical encodings without quotes),
// keeping its other members and their order.
func appendTextBlock(out []byte, v jsonv.Value, head []byte, mark bool, tail []byte) []byte {
	out = append(out, '{')
	first := true
	for name, val := range v.Members() {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = name.AppendRaw(out)
		out = append(out, ':')
		if !name.StrEqual("text") {
			out = val.AppendRaw(out)
			continue
		}
		out = append(out, '"')
		out = append(out, head...)
		if mark {
			out = append(out, markerBody...)
		}
		out = append(out, tail...)
		out = append(out, '"')
	}
	return append(out, '}')
}

// bodyChars returns the code points of the text whose canonical encoding
// (without quotes) is body: each escape is one.
func bodyChars(body []byte) int64 {
	_, n := scan(body, math.MaxInt64)
	return n
}

// bodyOffset returns the byte offset in body, a canonical encoding
// without quotes, of the text's code point n (len(body) past its end).
func bodyOffset(body []byte, n int64) int {
	off, _ := scan(body, n)
	return off
}

// scan walks body, a canonical string encoding without quotes, until n
// code points are passed or body ends, and returns the byte offset reached
// (the start of code point n) and the code points passed. A code point is
// a UTF-8 lead byte or an escape (\" \\ \b \t \n \f \r: two bytes;
// \u00xx: six).
//
// Written by hand because tool outputs are large and this is the pruner's
// inner loop: eight bytes without a backslash are counted at once (their
// lead bytes, SWAR), which utf8.RuneCount over the runs between escapes
// cannot match on output with a newline every few dozen bytes.
func scan(body []byte, n int64) (off int, count int64) {
	const (
		lsb = 0x0101010101010101
		msb = 0x8080808080808080
		bs  = lsb * '\\'
	)
	i := 0
	for i < len(body) {
		if i+8 <= len(body) && count+8 <= n {
			x := binary.LittleEndian.Uint64(body[i:])
			if y := x ^ bs; (y-lsb)&^y&msb == 0 { // no backslash
				// Continuation bytes are 10xxxxxx: bit 7 set, bit 6 clear.
				count += int64(8 - bits.OnesCount64(x&^(x<<1)&msb))
				i += 8
				continue
			}
		}
		c := body[i]
		if c&0xC0 == 0x80 {
			i++ // a continuation byte: its code point is counted
			continue
		}
		if count == n {
			return i, count
		}
		count++
		if c == '\\' {
			if body[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
			continue
		}
		i++
	}
	return i, count
}

func payloadInvalid(format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodePayloadInvalid, op, format, args...)
}
