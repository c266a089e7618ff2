package jsonv

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

// Options tunes Parse.
type Options struct {
	// MaxDepth is the deepest allowed nesting of the limited value (see
	// Enclosing); its outermost container is depth 1. 0 (or any value below
	// 1) means sdk.MaxJSONDepth.
	MaxDepth int
	// Enclosing is how many container levels of the parsed document sit
	// around the value MaxDepth limits: 0 when the document is that value
	// (event data parsed alone), 1 for an envelope or input line around
	// data, 2 for an array of envelopes. The document may nest MaxDepth +
	// Enclosing deep, and JSON_TOO_DEEP names MaxDepth, the limit of the
	// value, with the pointer of its first level too deep. Below 0 means 0.
	Enclosing int
}

// Doc is one parsed, validated JSON value and its canonical encoding. A Doc is
// immutable and safe for concurrent reads.
type Doc struct {
	buf  []byte // canonical encoding; for AppendParse, the caller's prefix too
	tape []node // one node per value, document order
}

// Root returns the document's value.
func (d *Doc) Root() Value {
	if d == nil || len(d.tape) == 0 {
		return Value{}
	}
	return Value{d: d, i: 0}
}

// node is one value on the tape. See the package doc, section Layout.
type node struct {
	start uint32 // canonical encoding is buf[start:end]
	end   uint32
	// next is the tape index just past this value's subtree. While a
	// container is being parsed it holds the index of the enclosing open
	// container instead (noParent at the top), which is the parse stack.
	next uint32
	// meta is kind (bits 0–2) | flags (bits 3–7) | count << countShift,
	// count being the number of elements or members of a container,
	// saturating at countMax.
	meta uint32
}

const (
	kindMask   = 7
	flagTrue   = 1 << 3 // Bool: true
	flagEsc    = 1 << 4 // String: the canonical encoding contains a backslash
	flagInt    = 1 << 5 // Number: integer form (no '.', no exponent)
	countShift = 8
	countMax   = 1<<(32-countShift) - 1
	countOne   = 1 << countShift

	noParent = ^uint32(0)
	// maxBuf bounds len(dst)+len(src) so that every offset and tape index
	// fits a uint32 and stays below noParent.
	maxBuf = 1<<32 - 2
)

func (n *node) kind() Kind { return Kind(n.meta & kindMask) }

// count returns the container's element or member count, or countMax when
// it saturated.
func (n *node) count() int { return int(n.meta >> countShift) }

// addChild counts one more element or member, saturating at countMax.
func (n *node) addChild() {
	if n.meta>>countShift < countMax {
		n.meta += countOne
	}
}
