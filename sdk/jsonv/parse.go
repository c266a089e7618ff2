package jsonv

import (
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Parse validates src against rules J2–J9 of docs/format.md in one pass and returns
// the document. The canonical encoding (docs/format.md) goes to a fresh buffer;
// the Doc never aliases src. Errors are *sdk.Error with Op "json" and a
// JSON_* code; the first violation in document order wins. (The one
// exception: an input of 4 GiB or more, beyond anything rule J1 admits, is
// refused with EVENT_TOO_LARGE.)
func Parse(src []byte, opt Options) (*Doc, error) {
	_, d, err := parse(nil, src, opt, true, nil)
	return d, err
}

// AppendParse is Parse writing the canonical encoding to dst[len(dst):]. The
// canonical encoding is never longer than src, so when cap(dst)-len(dst) ≥
// len(src) no reallocation happens and the caller may keep appending to the
// returned buffer within its capacity: the Doc keeps referring to the same
// backing array, and spans (Value.Span) are offsets into it.
//
// dst's spare capacity must not overlap src. On error buf is dst (same
// length), though bytes of dst's spare capacity may have been overwritten;
// on success the bytes past len(buf) are unspecified.
func AppendParse(dst, src []byte, opt Options) (buf []byte, doc *Doc, err error) {
	return parse(dst, src, opt, false, nil)
}

// A Reparser parses one document after another as AppendParse does, into
// one Doc whose tape it keeps: while documents are of similar sizes, a
// parse allocates nothing (a tape much larger than the next document needs
// is let go). The Doc a call returns is valid only until the next call. A
// Reparser is not safe for concurrent use; its zero value is ready to use.
type Reparser struct{ doc Doc }

// AppendParse is the package's AppendParse, returning r's Doc.
func (r *Reparser) AppendParse(dst, src []byte, opt Options) (buf []byte, doc *Doc, err error) {
	return parse(dst, src, opt, false, &r.doc)
}

// parse is the scanner: one loop over src, no recursion. Scalars are
// scanned by helpers; containers push a tape node whose next field links to
// the enclosing open container until it is closed. With own, the buffer is
// the Doc's alone and is trimmed when the canonical encoding came out much
// shorter than src. With reuse, the document goes to that Doc, on its tape.
func parse(dst, src []byte, opt Options, own bool, reuse *Doc) ([]byte, *Doc, error) {
	valueDepth := opt.MaxDepth
	if valueDepth <= 0 {
		valueDepth = sdk.MaxJSONDepth
	}
	maxDepth := valueDepth + max(opt.Enclosing, 0)
	base, n := len(dst), len(src)
	if uint64(base)+uint64(n) > maxBuf {
		return dst, nil, sdk.Errorf(sdk.CodeEventTooLarge, op,
			"input of %d bytes after %d buffered bytes exceeds the %d-byte limit of jsonv offsets", n, base, uint64(maxBuf))
	}
	var out []byte
	if cap(dst)-base >= n {
		out = dst[:base+n]
	} else {
		out = make([]byte, base+n)
		copy(out, dst)
	}
	var doc *Doc
	var tape []node
	if reuse != nil {
		doc, tape = reuse, reuse.tape[:0]
		if est := tapeEstimate(n); cap(tape) < est || cap(tape) > 4*est+inlineNodes {
			tape = make([]node, 0, est) // a huge tape is not kept for small documents
		}
	} else {
		doc, tape = newDoc(tapeEstimate(n))
	}

	var keys keySets       // hash sets of member names of large open objects
	var filters [32]uint64 // name filters of the open objects, by depth
	w, i := base, 0
	cur := noParent // innermost open container
	curObj := false // tape[cur] is an object
	depth := 0
	needKey := false // a member name comes next

	for {
		if i < n && src[i] <= ' ' {
			i = skipWS(src, i)
		}
		if needKey {
			needKey = false
			if i >= n || src[i] != '"' {
				return dst, nil, syntaxErr(src, i, "expecting a member name")
			}
			ks := w
			ni, nw, esc, err := scanString(src, i+1, out, w)
			if err != nil {
				return dst, nil, err
			}
			k := uint32(len(tape))
			tape = push(tape, node{start: uint32(ks), end: uint32(nw), next: k + 1, meta: uint32(String) | esc})
			tape[cur].addChild()
			// Rule J5. Small objects at shallow depth keep a 64-bit filter
			// of their names; only a filter hit needs the scan.
			m := tape[cur].count()
			if m <= smallObject && depth <= len(filters) {
				bit := uint64(1) << nameHash(out[ks:nw])
				f := &filters[depth-1]
				if m == 1 {
					*f = bit
				} else if *f&bit == 0 {
					*f |= bit
				} else if keys.duplicate(tape, out, cur, k) {
					return dst, nil, duplicateErr(tape, out, cur, k, i)
				}
			} else if m > 1 && keys.duplicate(tape, out, cur, k) {
				return dst, nil, duplicateErr(tape, out, cur, k, i)
			}
			i, w = ni, nw
			if i < n && src[i] <= ' ' {
				i = skipWS(src, i)
			}
			if i >= n || src[i] != ':' {
				return dst, nil, syntaxErr(src, i, "expecting ':' after a member name")
			}
			out[w] = ':'
			w++
			i++
			if i < n && src[i] <= ' ' {
				i = skipWS(src, i)
			}
		}
		if i >= n {
			return dst, nil, syntaxErr(src, i, "expecting a value")
		}
		if cur != noParent && !curObj {
			tape[cur].addChild()
		}
		switch c := src[i]; c {
		case '"':
			ni, nw, esc, err := scanString(src, i+1, out, w)
			if err != nil {
				return dst, nil, err
			}
			k := uint32(len(tape))
			tape = push(tape, node{start: uint32(w), end: uint32(nw), next: k + 1, meta: uint32(String) | esc})
			i, w = ni, nw
		case '{', '[':
			if depth >= maxDepth {
				return dst, nil, sdk.Errorf(sdk.CodeJSONTooDeep, op,
					"nesting deeper than %d at JSON pointer %s (byte offset %d)",
					valueDepth, quotePointer(pointerOf(tape, out, cur, true)), i)
			}
			depth++
			kind := Array
			if c == '{' {
				kind = Object
			}
			tape = push(tape, node{start: uint32(w), next: cur, meta: uint32(kind)})
			cur = uint32(len(tape) - 1)
			curObj = c == '{'
			out[w] = c
			w++
			i++
			if i < n && src[i] <= ' ' {
				i = skipWS(src, i)
			}
			if i >= n || src[i] != c+2 { // '{'+2 == '}', '['+2 == ']'
				needKey = curObj
				continue
			}
			// Empty container: close it here and go on after it.
			out[w] = c + 2
			w++
			i++
			t := &tape[cur]
			t.end = uint32(w)
			cur, t.next = t.next, uint32(len(tape))
			depth--
			curObj = cur != noParent && tape[cur].kind() == Object
		case 't', 'f', 'n':
			lit, meta := "null", uint32(Null)
			if c == 't' {
				lit, meta = "true", uint32(Bool)|flagTrue
			} else if c == 'f' {
				lit, meta = "false", uint32(Bool)
			}
			if n-i < len(lit) || string(src[i:i+len(lit)]) != lit {
				return dst, nil, literalErr(src, i, lit)
			}
			k := uint32(len(tape))
			tape = push(tape, node{start: uint32(w), end: uint32(w + len(lit)), next: k + 1, meta: meta})
			w += copy(out[w:], lit)
			i += len(lit)
		default:
			if c != '-' && c-'0' > 9 {
				return dst, nil, syntaxErr(src, i, "expecting a value")
			}
			end, flags, rule, bad := scanNumber(src, i)
			if bad >= 0 {
				return dst, nil, numberSyntaxErr(src, i, bad)
			}
			if rule != "" {
				return dst, nil, numberRuleErr(rule, src[i:end], pointerOf(tape, out, cur, true), i)
			}
			k := uint32(len(tape))
			nw := w + copy(out[w:], src[i:end])
			tape = push(tape, node{start: uint32(w), end: uint32(nw), next: k + 1, meta: uint32(Number) | flags})
			i, w = end, nw
		}

		// A value is complete: close containers, or find the next value.
		for {
			if i < n && src[i] <= ' ' {
				i = skipWS(src, i)
			}
			if cur == noParent {
				if i < n {
					return dst, nil, trailingErr(src, i)
				}
				buf := out[:w]
				if own && n-w > w/4+256 {
					buf = slices.Clone(buf)
				}
				if reuse == nil && cap(tape) > inlineNodes && cap(tape)-len(tape) > len(tape)/2+64 {
					tape = slices.Clone(tape) // a separate allocation: trim it
				}
				doc.buf, doc.tape = buf, tape
				return buf, doc, nil
			}
			if i >= n {
				if curObj {
					return dst, nil, syntaxErr(src, i, "expecting ',' or '}'")
				}
				return dst, nil, syntaxErr(src, i, "expecting ',' or ']'")
			}
			c := src[i]
			if c == ',' {
				out[w] = ','
				w++
				i++
				needKey = curObj
				break
			}
			if curObj && c == '}' || !curObj && c == ']' {
				out[w] = c
				w++
				i++
				if curObj {
					keys.closed(cur)
				}
				t := &tape[cur]
				t.end = uint32(w)
				cur, t.next = t.next, uint32(len(tape))
				depth--
				curObj = cur != noParent && tape[cur].kind() == Object
				continue
			}
			if curObj {
				return dst, nil, syntaxErr(src, i, "expecting ',' or '}'")
			}
			return dst, nil, syntaxErr(src, i, "expecting ',' or ']'")
		}
	}
}

// skipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipWS(src []byte, i int) int {
	for ; i < len(src); i++ {
		switch src[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return i
		}
	}
	return i
}

// tapeEstimate is the initial tape capacity for n input bytes: about one
// node per 16 bytes, which covers typical event payloads without growing.
// A tape that ends up much shorter is trimmed after the parse.
func tapeEstimate(n int) int { return n/16 + 8 }

// inlineNodes is the largest tape allocated together with its Doc.
const inlineNodes = 256

// newDoc returns a Doc and an empty tape of capacity at least nodes. Up to
// inlineNodes nodes the tape lives in the same allocation as the Doc.
func newDoc(nodes int) (*Doc, []node) {
	switch {
	case nodes <= 16:
		p := new(struct {
			d Doc
			a [16]node
		})
		return &p.d, p.a[:0]
	case nodes <= 40:
		p := new(struct {
			d Doc
			a [40]node
		})
		return &p.d, p.a[:0]
	case nodes <= 72:
		p := new(struct {
			d Doc
			a [72]node
		})
		return &p.d, p.a[:0]
	case nodes <= 136:
		p := new(struct {
			d Doc
			a [136]node
		})
		return &p.d, p.a[:0]
	case nodes <= inlineNodes:
		p := new(struct {
			d Doc
			a [inlineNodes]node
		})
		return &p.d, p.a[:0]
	}
	return new(Doc), make([]node, 0, nodes)
}

// push appends x to the tape, doubling its capacity when full (append alone
// grows large slices by 1.25×, which would copy a big tape many times).
func push(tape []node, x node) []node {
	if len(tape) == cap(tape) {
		t := make([]node, len(tape), 2*cap(tape))
		copy(t, tape)
		tape = t
	}
	return append(tape, x)
}

// nameHash picks one of 64 filter bits for a canonical member name (quotes
// included) from its length and its first and last characters.
func nameHash(name []byte) uint {
	l := len(name)
	return (uint(l)*7 + uint(name[1])*3 + uint(name[l-2])) & 63
}
