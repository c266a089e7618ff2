package jsonl

import "strings"

const upperHex = "0123456789ABCDEF"

// EncodeID is enc(id) of docs/storage.md, the name of a session's directory:
// over the id's UTF-8 bytes it keeps a–z, 0–9, '_', '-', and '.' except at
// position 0, and writes every other byte (A–Z, '~', '/', '\', a leading
// '.', any non-ASCII byte) as '~' plus two uppercase hex digits.
//
// The result is injective, free of path separators, never "." or "..",
// and collision-free under ASCII case folding: letters are kept only in
// lowercase and hex digits appear only, in uppercase, right after '~'. An
// 80-byte id encodes to at most 240 bytes.
func EncodeID(id string) string {
	var b strings.Builder
	b.Grow(len(id) + len(id)/4)
	for i := 0; i < len(id); i++ {
		c := id[i]
		if keep(c, i) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('~')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
	return b.String()
}

func keep(c byte, i int) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && i > 0
}

// DecodeID inverts EncodeID. It reports false for a name EncodeID never
// produces (so a stray directory under the root is not taken for a
// session); the decoded id is not checked against docs/architecture.md.
func DecodeID(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); {
		c := name[i]
		if c != '~' {
			if !keep(c, len(out)) {
				return "", false
			}
			out = append(out, c)
			i++
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		hi, lo := unhex(name[i+1]), unhex(name[i+2])
		if hi < 0 || lo < 0 {
			return "", false
		}
		d := byte(hi<<4 | lo)
		if keep(d, len(out)) {
			return "", false // EncodeID would have kept it
		}
		out = append(out, d)
		i += 3
	}
	return string(out), true
}

// unhex decodes one uppercase hex digit, or returns -1.
func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
