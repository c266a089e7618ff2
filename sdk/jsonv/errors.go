package jsonv

import (
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of every error of this package.
const op = "json"

// Cuts applied to values quoted in error details.
const (
	maxDetailValue   = 128
	maxDetailPointer = 2048
)

func invalidUTF8(off int) *sdk.Error {
	return sdk.Errorf(sdk.CodeJSONInvalidUTF8, op, "invalid UTF-8 at byte offset %d", off)
}

// badUTF8At reports whether src[off] starts an invalid UTF-8 sequence.
func badUTF8At(src []byte, off int) bool {
	if off >= len(src) || src[off] < 0x80 {
		return false
	}
	r, size := utf8.DecodeRune(src[off:])
	return r == utf8.RuneError && size == 1
}

// unterminatedErr reports the end of input inside a string.
func unterminatedErr(src []byte, off int) *sdk.Error {
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "unexpected end of input at byte offset %d inside a string", off)
}

func controlErr(c byte, off int) *sdk.Error {
	return sdk.Errorf(sdk.CodeJSONSyntax, op,
		"raw control character U+%04X in a string at byte offset %d (it must be escaped)", c, off)
}

// syntaxErr reports that the grammar fails at src[off] (off == len(src):
// at the end of input). J2 outranks J3: an invalid UTF-8 byte there is
// reported as JSON_INVALID_UTF8.
func syntaxErr(src []byte, off int, expecting string) *sdk.Error {
	if badUTF8At(src, off) {
		return invalidUTF8(off)
	}
	what := "end of input"
	if off < len(src) {
		what = describe(src, off)
	}
	if expecting == "" {
		return sdk.Errorf(sdk.CodeJSONSyntax, op, "unexpected %s at byte offset %d", what, off)
	}
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "unexpected %s at byte offset %d; %s", what, off, expecting)
}

// literalErr reports a broken true, false or null at src[i].
func literalErr(src []byte, i int, lit string) *sdk.Error {
	j := i
	for j < len(src) && j-i < len(lit) && src[j] == lit[j-i] {
		j++
	}
	if badUTF8At(src, j) {
		return invalidUTF8(j)
	}
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "invalid literal %s at byte offset %d; expecting %s",
		quoteCut(string(word(src, i))), i, lit)
}

// numberSyntaxErr reports a number literal starting at src[start] that
// breaks the grammar at src[bad].
func numberSyntaxErr(src []byte, start, bad int) *sdk.Error {
	if badUTF8At(src, bad) {
		return invalidUTF8(bad)
	}
	why := "unexpected end of input"
	switch {
	case bad < len(src) && src[bad]-'0' <= 9:
		why = "leading zero"
	case bad < len(src):
		why = "unexpected " + describe(src, bad) + " at byte offset " + strconv.Itoa(bad)
	}
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "invalid number %s at byte offset %d (%s)",
		quoteCut(string(word(src, start))), start, why)
}

// badHexErr reports a \u escape at src[at] whose hex digits break at
// src[bad].
func badHexErr(src []byte, at, bad int) *sdk.Error {
	if badUTF8At(src, bad) {
		return invalidUTF8(bad)
	}
	end := min(bad+1, len(src))
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "invalid escape %s at byte offset %d (expecting 4 hex digits)",
		quoteCut(string(src[at:end])), at)
}

// trailingErr reports data after the value at src[off].
func trailingErr(src []byte, off int) *sdk.Error {
	if badUTF8At(src, off) {
		return invalidUTF8(off)
	}
	return sdk.Errorf(sdk.CodeJSONSyntax, op, "trailing data: unexpected %s at byte offset %d after the value",
		describe(src, off), off)
}

// numberRuleErr reports a number literal breaking J7, J8 or J9.
func numberRuleErr(rule sdk.Code, lit []byte, pointer string, off int) *sdk.Error {
	var what string
	switch rule {
	case sdk.CodeJSONNegativeZero:
		what = "negative zero %s"
	case sdk.CodeJSONNumberNotFinite:
		what = "number %s is not a finite float64"
	default:
		what = "integer %s is beyond ±(2^53−1)"
	}
	return sdk.Errorf(rule, op, what+" at JSON pointer %s (byte offset %d)",
		quoteCut(string(lit)), quotePointer(pointer), off)
}

// duplicateErr reports that member name k of object obj repeats an earlier
// name; off is its byte offset in the input.
func duplicateErr(tape []node, out []byte, obj, k uint32, off int) *sdk.Error {
	name := appendUnescaped(nil, out[tape[k].start+1:tape[k].end-1])
	return sdk.Errorf(sdk.CodeJSONDuplicateKey, op,
		"duplicate member name %s (byte offset %d) in the object at JSON pointer %s",
		quoteCut(string(name)), off, quotePointer(pointerOf(tape, out, obj, false)))
}

// pointerOf returns the JSON pointer of open container cur, or with pending
// of the value being parsed inside it (whose node is not yet on the tape).
// It walks the parent links of the open containers: each one is the last
// child of its parent, preceded by its member name in an object.
func pointerOf(tape []node, out []byte, cur uint32, pending bool) string {
	var chain []uint32
	for c := cur; c != noParent; c = tape[c].next {
		chain = append(chain, c)
	}
	slices.Reverse(chain)
	if pending && cur != noParent {
		chain = append(chain, uint32(len(tape)))
	}
	var b []byte
	for j := 1; j < len(chain); j++ {
		parent, child := chain[j-1], chain[j]
		b = append(b, '/')
		if tape[parent].kind() == Object {
			k := tape[child-1]
			b = appendPointerToken(b, appendUnescaped(nil, out[k.start+1:k.end-1]))
			continue
		}
		idx := 0
		for c := parent + 1; c < child; c = tape[c].next {
			idx++
		}
		b = strconv.AppendInt(b, int64(idx), 10)
	}
	return string(b)
}

// appendPointerToken appends name escaped per RFC 6901 ("~" → "~0",
// "/" → "~1").
func appendPointerToken(b, name []byte) []byte {
	for _, c := range name {
		switch c {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, c)
		}
	}
	return b
}

// describe names the token at src[off] for a detail: a word (letters,
// digits, signs, dots) as `token "NaN"`, anything else as one character.
func describe(src []byte, off int) string {
	if w := word(src, off); len(w) > 0 {
		return "token " + quoteCut(string(w))
	}
	r, _ := utf8.DecodeRune(src[off:])
	return fmt.Sprintf("character %q", r)
}

// word returns the run of letters, digits, '+', '-', '.' and '_' at
// src[off:].
func word(src []byte, off int) []byte {
	j := off
	for j < len(src) && j-off <= maxDetailValue {
		c := src[j]
		if c|0x20 >= 'a' && c|0x20 <= 'z' || c-'0' <= 9 || c == '+' || c == '-' || c == '.' || c == '_' {
			j++
			continue
		}
		break
	}
	return src[off:j]
}

// quoteCut quotes s for a detail, cut to maxDetailValue bytes.
func quoteCut(s string) string { return strconv.Quote(cut(s, maxDetailValue)) }

// quotePointer quotes a JSON pointer for a detail, cut to maxDetailPointer
// bytes.
func quotePointer(p string) string { return strconv.Quote(cut(p, maxDetailPointer)) }

// cut shortens s to at most limit bytes on a rune boundary, marking the cut
// with "…".
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	i := limit
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
