package sdk

// MaxSeq is the largest value of every sequence type: 2^53−1, the largest
// integer that JSON readers in every language represent exactly.
const MaxSeq = 9007199254740991

// Seq names an existing event, or an inclusive watermark: 0 … MaxSeq.
type Seq int64

// Offset is a gap, a prefix length or a read boundary: 0 … MaxSeq. It may
// equal the event count.
type Offset int64

// Cursor is a Seq, or −1 for "no event yet".
type Cursor int64

// NoEvent is the Cursor before the first event.
const NoEvent Cursor = -1

// NewSeq checks v against the Seq domain; name says which value it is.
func NewSeq(name string, v int64) (Seq, error) {
	if v < 0 || v > MaxSeq {
		return 0, domainError(name, v, "0 … 2^53−1")
	}
	return Seq(v), nil
}

// NewOffset checks v against the Offset domain.
func NewOffset(name string, v int64) (Offset, error) {
	if v < 0 || v > MaxSeq {
		return 0, domainError(name, v, "0 … 2^53−1")
	}
	return Offset(v), nil
}

// NewCursor checks v against the Cursor domain.
func NewCursor(name string, v int64) (Cursor, error) {
	if v < -1 || v > MaxSeq {
		return 0, domainError(name, v, "−1 … 2^53−1")
	}
	return Cursor(v), nil
}

func domainError(name string, v int64, domain string) error {
	return Errorf(CodeInvalidSeq, "seq", "%s = %d is outside the domain %s", name, v, domain)
}
