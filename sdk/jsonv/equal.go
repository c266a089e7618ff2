package jsonv

import (
	"strconv"
	"strings"
)

// Equal reports value-equality (docs/format.md): null/bool/string by value,
// numbers by float64 value, arrays element-wise, objects by equal name sets
// with value-equal members in any order. Two zero Values are equal; a zero
// Value equals nothing else.
func Equal(a, b Value) bool {
	_, differ := compare(a, b)
	return !differ
}

// FirstDifference returns the JSON pointer (RFC 6901, relative to a and b) of
// the first place where a and b are not value-equal, walking a in document
// order (a member missing in b, or present only in b, is a difference at that
// member); ok is false when they are value-equal.
//
// Elements or members present only in b are reported after all of a's
// have matched: at the first extra element's index, or at the first member
// of b, in b's order, whose name a lacks. Kinds that differ, or scalars that
// differ, are reported at the value itself.
func FirstDifference(a, b Value) (pointer string, ok bool) {
	path, differ := compare(a, b)
	if !differ {
		return "", false
	}
	var sb strings.Builder
	for _, s := range path {
		s.appendTo(&sb)
	}
	return sb.String(), true
}

// segment is one step of a path: a member name (name.Exists()) or an
// array index.
type segment struct {
	name Value
	idx  int
}

func (s segment) appendTo(sb *strings.Builder) {
	sb.WriteByte('/')
	if !s.name.Exists() {
		sb.WriteString(strconv.Itoa(s.idx))
		return
	}
	c := s.name.canon()
	sb.Write(appendPointerToken(nil, appendUnescaped(nil, c[1:len(c)-1])))
}

// cmpFrame is an array or object pair being compared.
type cmpFrame struct {
	a, b   Value
	seg    segment // where a and b sit in the parent frame's pair
	next   uint32  // tape index of a's next element or member name
	bnext  uint32  // arrays: tape index of b's next element
	idx    int     // arrays: index of a's next element
	byName map[string]uint32
	// byName indexes b's members (canonical name → value tape index) when b
	// is a large object, so that matching stays linear.
}

// largeObject is the member count above which compare indexes an object's
// members by name instead of scanning them.
const largeObject = 16

// member returns the member of object o (indexed by byName when not nil)
// with canonical name name.
func member(o Value, byName map[string]uint32, name []byte) Value {
	if byName == nil {
		return o.lookup(name)
	}
	if j, ok := byName[string(name)]; ok {
		return Value{o.d, j}
	}
	return Value{}
}

func indexByName(o Value) map[string]uint32 {
	if o.Len() <= largeObject {
		return nil
	}
	m := make(map[string]uint32, o.Len())
	t, buf := o.d.tape, o.d.buf
	for j := o.i + 1; j < t[o.i].next; j = t[j+1].next {
		m[string(buf[t[j].start:t[j].end])] = j + 1
	}
	return m
}

// compare walks a and b together in a's document order, without recursion,
// and stops at the first difference, returning its path from a and b.
func compare(a, b Value) (path []segment, differ bool) {
	var stackBuf [8]cmpFrame
	stack := stackBuf[:0]
	pa, pb, pseg, visit := a, b, segment{}, true
	for {
		if visit {
			visit = false
			ka := pa.Kind()
			if ka != pb.Kind() {
				return pathOf(stack, pseg), true
			}
			switch ka {
			case Array, Object:
				f := cmpFrame{a: pa, b: pb, seg: pseg, next: pa.i + 1, bnext: pb.i + 1}
				if ka == Object {
					f.byName = indexByName(pb)
				}
				stack = append(stack, f)
			default:
				if !scalarEqual(pa, pb) {
					return pathOf(stack, pseg), true
				}
			}
		}
		if len(stack) == 0 {
			return nil, false
		}
		f := &stack[len(stack)-1]
		ta, tb := f.a.d.tape, f.b.d.tape
		aend, bend := ta[f.a.i].next, tb[f.b.i].next
		if f.a.node().kind() == Array {
			if f.next < aend {
				ai, idx := f.next, f.idx
				f.next, f.idx = ta[ai].next, idx+1
				if f.bnext >= bend {
					return pathOf(stack, segment{idx: idx}), true // missing in b
				}
				bi := f.bnext
				f.bnext = tb[bi].next
				pa, pb, pseg, visit = Value{f.a.d, ai}, Value{f.b.d, bi}, segment{idx: idx}, true
				continue
			}
			if f.bnext < bend {
				return pathOf(stack, segment{idx: f.idx}), true // only in b
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if f.next < aend {
			k := f.next
			f.next = ta[k+1].next
			name := Value{f.a.d, k}
			bv := member(f.b, f.byName, name.canon())
			if !bv.Exists() {
				return pathOf(stack, segment{name: name}), true // missing in b
			}
			pa, pb, pseg, visit = Value{f.a.d, k + 1}, bv, segment{name: name}, true
			continue
		}
		// Every member of a matched; names are unique, so b has extra
		// members exactly when it has more.
		if f.b.Len() > f.a.Len() {
			byName := indexByName(f.a)
			for j := f.b.i + 1; j < bend; j = tb[j+1].next {
				name := Value{f.b.d, j}
				if !member(f.a, byName, name.canon()).Exists() {
					return pathOf(stack, segment{name: name}), true // only in b
				}
			}
		}
		stack = stack[:len(stack)-1]
	}
}

// scalarEqual compares two scalars of the same kind.
func scalarEqual(a, b Value) bool {
	switch a.Kind() {
	case Bool:
		return a.node().meta&flagTrue == b.node().meta&flagTrue
	case String:
		// The canonical encoding is injective: equal bytes, equal strings.
		return string(a.canon()) == string(b.canon())
	case Number:
		if string(a.canon()) == string(b.canon()) {
			return true
		}
		fa, _ := a.Float()
		fb, _ := b.Float()
		return fa == fb
	}
	return true // Null, Invalid
}

// pathOf returns the path of a difference at segment last within the
// innermost of the open frames (at a and b themselves when none is open).
func pathOf(stack []cmpFrame, last segment) []segment {
	if len(stack) == 0 {
		return nil
	}
	path := make([]segment, 0, len(stack))
	for _, f := range stack[1:] {
		path = append(path, f.seg)
	}
	return append(path, last)
}
