package jsonv

// THIS FILE IS THE API CONTRACT (stub). The jsonv implementer replaces the
// bodies (and may split the file); signatures and documented behaviour stay.

import "iter"

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds. Invalid is the zero Value (an absent member or element).
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// DefaultMaxDepth is MaxJSONDepth of SPEC §1.5 (rule J6).
const DefaultMaxDepth = 512

// Options tunes Parse.
type Options struct {
	// MaxDepth is the deepest allowed nesting; the outermost container is
	// depth 1. 0 means DefaultMaxDepth.
	MaxDepth int
}

// Doc is one parsed, validated JSON value and its canonical encoding. A Doc is
// immutable and safe for concurrent reads.
type Doc struct{}

// Parse validates src against rules J2–J9 of SPEC §3.1 in one pass and returns
// the document. The canonical encoding (SPEC §3.2) goes to a fresh buffer;
// the Doc never aliases src. Errors are *sdk.Error with Op "json" and a
// JSON_* code; the first violation in document order wins.
func Parse(src []byte, opt Options) (*Doc, error) { panic("stub") }

// AppendParse is Parse writing the canonical encoding to dst[len(dst):]. The
// canonical encoding is never longer than src, so when cap(dst)-len(dst) ≥
// len(src) no reallocation happens and the caller may keep appending to the
// returned buffer within its capacity: the Doc keeps referring to the same
// backing array, and spans (Value.Span) are offsets into it.
func AppendParse(dst, src []byte, opt Options) (buf []byte, doc *Doc, err error) { panic("stub") }

// Root returns the document's value.
func (d *Doc) Root() Value { panic("stub") }

// Value is a read-only view of one value of a Doc. The zero Value is Invalid
// (Kind() == Invalid), returned for absent members and out-of-range elements;
// every accessor on it reports "not ok" or zero.
type Value struct{}

// Kind returns the value's JSON type.
func (v Value) Kind() Kind { panic("stub") }

// Exists reports whether v is a value (Kind() != Invalid).
func (v Value) Exists() bool { panic("stub") }

// Span returns the byte offsets [start, end) of v's canonical encoding in the
// buffer the Doc was parsed into (Parse: its own buffer; AppendParse: buf).
func (v Value) Span() (start, end int) { panic("stub") }

// AppendRaw appends v's canonical encoding to dst.
func (v Value) AppendRaw(dst []byte) []byte { panic("stub") }

// Bytes returns a fresh copy of v's canonical encoding.
func (v Value) Bytes() []byte { panic("stub") }

// Bool returns a boolean's value.
func (v Value) Bool() (b, ok bool) { panic("stub") }

// Str returns a string's decoded value.
func (v Value) Str() (string, bool) { panic("stub") }

// StrEqual reports whether v is a string equal to s, without allocating.
func (v Value) StrEqual(s string) bool { panic("stub") }

// Literal returns a number's literal exactly as written in the input.
func (v Value) Literal() string { panic("stub") }

// IsIntegerForm reports whether v is a number literal without '.' and
// without exponent.
func (v Value) IsIntegerForm() bool { panic("stub") }

// Int returns an integer-form number's value (always within ±(2^53−1), rule J9).
func (v Value) Int() (int64, bool) { panic("stub") }

// Float returns a number's float64 value.
func (v Value) Float() (float64, bool) { panic("stub") }

// Len returns the number of elements of an array or members of an object, 0
// otherwise.
func (v Value) Len() int { panic("stub") }

// Index returns element i of an array, or the zero Value.
func (v Value) Index(i int) Value { panic("stub") }

// Get returns the member of an object named name, or the zero Value.
func (v Value) Get(name string) Value { panic("stub") }

// Elements iterates an array's elements in order.
func (v Value) Elements() iter.Seq2[int, Value] { panic("stub") }

// Members iterates an object's members in document order; the key is a
// String Value.
func (v Value) Members() iter.Seq2[Value, Value] { panic("stub") }

// Equal reports value-equality (SPEC §3.2): null/bool/string by value,
// numbers by float64 value, arrays element-wise, objects by equal name sets
// with value-equal members in any order.
func Equal(a, b Value) bool { panic("stub") }

// FirstDifference returns the JSON pointer (RFC 6901, relative to a and b) of
// the first place where a and b are not value-equal, walking a in document
// order (a member missing in b, or present only in b, is a difference at that
// member); ok is false when they are value-equal.
func FirstDifference(a, b Value) (pointer string, ok bool) { panic("stub") }

// AppendString appends the canonical encoding (SPEC §3.2) of s, quotes
// included, to dst. s must be valid UTF-8.
func AppendString(dst []byte, s string) []byte { panic("stub") }
