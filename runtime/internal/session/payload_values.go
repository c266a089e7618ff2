package session

import (
	"strconv"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

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
