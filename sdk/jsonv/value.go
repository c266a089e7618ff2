package jsonv

import (
	"bytes"
	"iter"
)

// Value is a read-only view of one value of a Doc. The zero Value is Invalid
// (Kind() == Invalid), returned for absent members and out-of-range elements;
// every accessor on it reports "not ok" or zero.
//
// A Value is two words and is passed by value; it stays valid as long as
// its Doc (and, for AppendParse, the buffer's canonical bytes) is.
type Value struct {
	d *Doc
	i uint32 // tape index
}

func (v Value) node() *node { return &v.d.tape[v.i] }

// canon returns v's canonical encoding; v must be valid.
func (v Value) canon() []byte {
	n := v.node()
	return v.d.buf[n.start:n.end]
}

// Kind returns the value's JSON type.
func (v Value) Kind() Kind {
	if v.d == nil {
		return Invalid
	}
	return v.node().kind()
}

// Exists reports whether v is a value (Kind() != Invalid).
func (v Value) Exists() bool { return v.d != nil }

// Span returns the byte offsets [start, end) of v's canonical encoding in the
// buffer the Doc was parsed into (Parse: its own buffer; AppendParse: buf).
func (v Value) Span() (start, end int) {
	if v.d == nil {
		return 0, 0
	}
	n := v.node()
	return int(n.start), int(n.end)
}

// AppendRaw appends v's canonical encoding to dst.
func (v Value) AppendRaw(dst []byte) []byte {
	if v.d == nil {
		return dst
	}
	return append(dst, v.canon()...)
}

// Bytes returns a fresh copy of v's canonical encoding (nil for the zero
// Value).
func (v Value) Bytes() []byte {
	if v.d == nil {
		return nil
	}
	return append([]byte(nil), v.canon()...)
}

// Bool returns a boolean's value.
func (v Value) Bool() (b, ok bool) {
	if v.Kind() != Bool {
		return false, false
	}
	return v.node().meta&flagTrue != 0, true
}

// Str returns a string's decoded value.
func (v Value) Str() (string, bool) {
	if v.Kind() != String {
		return "", false
	}
	c := v.canon()
	body := c[1 : len(c)-1]
	if v.node().meta&flagEsc == 0 {
		return string(body), true
	}
	return string(appendUnescaped(make([]byte, 0, len(body)), body)), true
}

// StrEqual reports whether v is a string equal to s, without allocating.
func (v Value) StrEqual(s string) bool {
	if v.Kind() != String {
		return false
	}
	c := v.canon()
	body := c[1 : len(c)-1]
	if v.node().meta&flagEsc == 0 {
		return string(body) == s
	}
	return bodyEqual(body, s)
}

// RawEqual reports whether v's canonical encoding is raw, without
// allocating. Canonical encodings are unique, so for two strings it is
// StrEqual on their decoded values; raw is typically a view kept from an
// earlier parse's canonical bytes. The zero Value equals nothing.
func (v Value) RawEqual(raw []byte) bool {
	return v.d != nil && bytes.Equal(v.canon(), raw)
}

// Literal returns a number's literal exactly as written in the input ("" for
// any other kind).
func (v Value) Literal() string {
	if v.Kind() != Number {
		return ""
	}
	return string(v.canon())
}

// IsIntegerForm reports whether v is a number literal without '.' and
// without exponent.
func (v Value) IsIntegerForm() bool {
	return v.Kind() == Number && v.node().meta&flagInt != 0
}

// Int returns an integer-form number's value (always within ±(2^53−1), rule J9).
// It reports false for any other value, including numbers such as 1.0 or
// 1e3.
func (v Value) Int() (int64, bool) {
	if !v.IsIntegerForm() {
		return 0, false
	}
	return parseInt(v.canon()), true
}

// Float returns a number's float64 value.
func (v Value) Float() (float64, bool) {
	if v.Kind() != Number {
		return 0, false
	}
	if v.node().meta&flagInt != 0 {
		// At most 16 digits and at most 2^53−1: exact.
		return float64(parseInt(v.canon())), true
	}
	return parseFloat(v.canon()), true
}

// Len returns the number of elements of an array or members of an object, 0
// otherwise.
func (v Value) Len() int {
	k := v.Kind()
	if k != Array && k != Object {
		return 0
	}
	n := v.node()
	if c := n.count(); c < countMax {
		return c
	}
	c := 0
	for j := v.i + 1; j < n.next; j = v.d.tape[j].next {
		c++
	}
	if k == Object {
		c /= 2
	}
	return c
}

// Index returns element i of an array, or the zero Value. It takes constant
// time when no element is an array or object, and otherwise walks the
// elements before i; use Elements to visit them all.
func (v Value) Index(i int) Value {
	if v.Kind() != Array || i < 0 {
		return Value{}
	}
	n := v.node()
	c := n.count()
	if c < countMax {
		if i >= c {
			return Value{}
		}
		if int(n.next-v.i-1) == c { // every element is one node
			return Value{v.d, v.i + 1 + uint32(i)}
		}
	}
	for j := v.i + 1; j < n.next; j = v.d.tape[j].next {
		if i == 0 {
			return Value{v.d, j}
		}
		i--
	}
	return Value{}
}

// Get returns the member of an object named name, or the zero Value. It
// compares names without allocating and walks the members in order.
func (v Value) Get(name string) Value {
	if v.Kind() != Object {
		return Value{}
	}
	t, buf := v.d.tape, v.d.buf
	for j := v.i + 1; j < t[v.i].next; j = t[j+1].next {
		k := &t[j]
		body := buf[k.start+1 : k.end-1]
		if k.meta&flagEsc == 0 {
			if string(body) == name {
				return Value{v.d, j + 1}
			}
		} else if bodyEqual(body, name) {
			return Value{v.d, j + 1}
		}
	}
	return Value{}
}

// Elements iterates an array's elements in order (nothing for any other
// kind).
func (v Value) Elements() iter.Seq2[int, Value] {
	return func(yield func(int, Value) bool) {
		if v.Kind() != Array {
			return
		}
		t := v.d.tape
		for j, i := v.i+1, 0; j < t[v.i].next; j, i = t[j].next, i+1 {
			if !yield(i, Value{v.d, j}) {
				return
			}
		}
	}
}

// Members iterates an object's members in document order; the key is a
// String Value (nothing for any other kind).
func (v Value) Members() iter.Seq2[Value, Value] {
	return func(yield func(Value, Value) bool) {
		if v.Kind() != Object {
			return
		}
		t := v.d.tape
		for j := v.i + 1; j < t[v.i].next; j = t[j+1].next {
			if !yield(Value{v.d, j}, Value{v.d, j + 1}) {
				return
			}
		}
	}
}

// lookup returns the member of object v whose canonical name is name.
func (v Value) lookup(name []byte) Value {
	t, buf := v.d.tape, v.d.buf
	for j := v.i + 1; j < t[v.i].next; j = t[j+1].next {
		if string(buf[t[j].start:t[j].end]) == string(name) {
			return Value{v.d, j + 1}
		}
	}
	return Value{}
}
