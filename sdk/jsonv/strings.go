package jsonv

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

// plain[c] reports whether byte c stands for itself inside a canonical
// string: printable ASCII except '"' and '\\'. Bytes from 0x80 up are
// UTF-8 and checked separately.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// keepEscape[c] reports whether the escape \c is already canonical.
var keepEscape = func() (t [256]bool) {
	for _, c := range `"\\bfnrt` {
		t[c] = true
	}
	return t
}()

// ctlEscape[c] is the canonical escape of control character c.
var ctlEscape = func() (t [0x20]string) {
	const hex = "0123456789abcdef"
	for c := range t {
		t[c] = `\u00` + string(hex[c>>4]) + string(hex[c&15])
	}
	t['\b'], t['\t'], t['\n'], t['\f'], t['\r'] = `\b`, `\t`, `\n`, `\f`, `\r`
	return t
}()

// hexVal[c] is the value of hex digit c, or -1.
var hexVal = func() (t [256]int8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = int8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = int8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = int8(c - 'A' + 10)
		default:
			t[c] = -1
		}
	}
	return t
}()

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special flags (bit 7 of each byte) the bytes of x, eight bytes of a
// string body, that need attention: a quote, a backslash, a control
// character or a byte from 0x80 up. It is zero exactly when there are none,
// and its lowest flagged byte is always a true one: a subtraction borrows
// only out of a byte that is itself flagged, and only into higher bytes.
func special(x uint64) uint64 {
	return ((x - lsb*0x20) | (x ^ lsb*'"' - lsb) | (x ^ lsb*'\\' - lsb) | x) & msb
}

// scanString scans a string body from src[i] (just past the opening quote)
// through the closing quote, writing its canonical encoding, quotes
// included, to out[w:]. It returns the indices past the string in src and
// out, and flagEsc when the encoding contains an escape.
//
// Bytes that stay as they are (printable ASCII, valid UTF-8, and the
// escapes \" \\ \b \f \n \r \t, which are already canonical) are copied
// as they are scanned, eight at a time where possible. Writing whole words
// is safe because the output never runs ahead of the input: w-i only
// shrinks, and out is as long as base+len(src).
func scanString(src []byte, i int, out []byte, w int) (int, int, uint32, *sdk.Error) {
	n := len(src)
	out[w] = '"'
	w++
	var flags uint32
	for {
		var c byte
		for {
			if i+8 > n {
				for i < n && plain[src[i]] {
					out[w] = src[i]
					i++
					w++
				}
				if i >= n {
					return 0, 0, 0, unterminatedErr(src, i)
				}
				c = src[i]
				break
			}
			x := binary.LittleEndian.Uint64(src[i:])
			binary.LittleEndian.PutUint64(out[w:], x)
			if m := special(x); m != 0 {
				tz := bits.TrailingZeros64(m) // 8k+7 for byte k
				i += tz >> 3
				w += tz >> 3
				c = byte(x >> (tz &^ 7))
				break
			}
			i += 8
			w += 8
		}
		switch {
		case c == '"':
			out[w] = '"'
			return i + 1, w + 1, flags, nil
		case c == '\\':
			if i+1 < n && keepEscape[src[i+1]] {
				out[w], out[w+1] = '\\', src[i+1]
				flags = flagEsc
				i += 2
				w += 2
				continue
			}
			var err *sdk.Error
			var esc bool
			i, w, esc, err = unescape(src, i, out, w)
			if err != nil {
				return 0, 0, 0, err
			}
			if esc {
				flags = flagEsc
			}
		case c < 0x20:
			return 0, 0, 0, controlErr(c, i)
		default:
			if c < 0xE0 && c >= 0xC2 && i+1 < n && src[i+1]&0xC0 == 0x80 {
				out[w], out[w+1] = c, src[i+1] // two-byte sequence, the common case
				i += 2
				w += 2
				continue
			}
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, 0, 0, invalidUTF8(i)
			}
			w += copy(out[w:], src[i:i+size])
			i += size
		}
	}
}

// unescape decodes the escape at src[i] ('\\') and writes its canonical
// form to out[w:]. It reports whether that form is itself an escape.
func unescape(src []byte, i int, out []byte, w int) (int, int, bool, *sdk.Error) {
	n := len(src)
	if i+1 >= n {
		return 0, 0, false, syntaxErr(src, n, "expecting an escape")
	}
	switch e := src[i+1]; e {
	case '"', '\\':
		out[w], out[w+1] = '\\', e
		return i + 2, w + 2, true, nil
	case '/':
		out[w] = '/'
		return i + 2, w + 1, false, nil
	case 'b', 'f', 'n', 'r', 't':
		out[w], out[w+1] = '\\', e
		return i + 2, w + 2, true, nil
	case 'u':
	default:
		if e >= 0x80 {
			return 0, 0, false, syntaxErr(src, i+1, "expecting an escape character")
		}
		return 0, 0, false, sdk.Errorf(sdk.CodeJSONSyntax, op,
			"invalid escape %s at byte offset %d", quoteCut(string(src[i:i+2])), i)
	}
	r, bad := hex4(src, i+2)
	if bad >= 0 {
		return 0, 0, false, badHexErr(src, i, bad)
	}
	at := i
	i += 6
	switch {
	case r < 0x80:
		c := byte(r)
		if plain[c] {
			out[w] = c
			return i, w + 1, false, nil
		}
		if c == '"' || c == '\\' {
			out[w], out[w+1] = '\\', c
			return i, w + 2, true, nil
		}
		return i, w + copy(out[w:], ctlEscape[c]), true, nil
	case r >= 0xD800 && r < 0xDC00:
		if i+1 < n && src[i] == '\\' && src[i+1] == 'u' {
			if lo, bad := hex4(src, i+2); bad < 0 && lo >= 0xDC00 && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
				return i, w + utf8.EncodeRune(out[w:], r), false, nil
			}
		}
		return 0, 0, false, sdk.Errorf(sdk.CodeJSONInvalidUTF8, op,
			"escape %s at byte offset %d is a high surrogate without a low surrogate escape after it", src[at:at+6], at)
	case r >= 0xDC00 && r < 0xE000:
		return 0, 0, false, sdk.Errorf(sdk.CodeJSONInvalidUTF8, op,
			"escape %s at byte offset %d is a low surrogate without a high surrogate before it", src[at:at+6], at)
	}
	return i, w + utf8.EncodeRune(out[w:], r), false, nil
}

// hex4 decodes the four hex digits at src[i:]. bad is the offset of the
// first byte that is not a hex digit (len(src) at the end of input), or -1.
func hex4(src []byte, i int) (r rune, bad int) {
	for j := i; j < i+4; j++ {
		if j >= len(src) {
			return 0, j
		}
		v := hexVal[src[j]]
		if v < 0 {
			return 0, j
		}
		r = r<<4 | rune(v)
	}
	return r, -1
}

// AppendString appends the canonical encoding (docs/format.md) of s, quotes
// included, to dst. s must be valid UTF-8; each byte that does not belong
// to a valid sequence is written as U+FFFD, so the result is always valid
// JSON.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	run := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[run:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, ctlEscape[c]...)
			}
			i++
			run = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[run:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			run = i
			continue
		}
		i += size
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// AppendStringArray appends the canonical encoding of ss as a JSON array
// of strings, each written as AppendString writes it, to dst: ["a","b"],
// and [] for none. It is how an error's Meta "callIds" lists call ids
// wherever it is written.
func AppendStringArray(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}

// appendUnescaped appends the value of a canonical string body (quotes
// excluded) to dst.
func appendUnescaped(dst, body []byte) []byte {
	for len(body) > 0 {
		j := bytes.IndexByte(body, '\\')
		if j < 0 {
			return append(dst, body...)
		}
		dst = append(dst, body[:j]...)
		c, size := canonEscape(body[j:])
		dst = append(dst, c)
		body = body[j+size:]
	}
	return dst
}

// canonEscape decodes the canonical escape at the start of e: one of
// \" \\ \b \t \n \f \r \u00xx, each standing for a single byte.
func canonEscape(e []byte) (c byte, size int) {
	switch e[1] {
	case 'b':
		return '\b', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'f':
		return '\f', 2
	case 'r':
		return '\r', 2
	case 'u':
		return byte(hexVal[e[4]])<<4 | byte(hexVal[e[5]]), 6
	}
	return e[1], 2 // '"' or '\\'
}

// bodyEqual reports whether the canonical string body decodes to s.
func bodyEqual(body []byte, s string) bool {
	for len(body) > 0 {
		j := bytes.IndexByte(body, '\\')
		if j < 0 {
			return string(body) == s
		}
		if len(s) <= j || string(body[:j]) != s[:j] {
			return false
		}
		c, size := canonEscape(body[j:])
		if s[j] != c {
			return false
		}
		body, s = body[j+size:], s[j+1:]
	}
	return s == ""
}
