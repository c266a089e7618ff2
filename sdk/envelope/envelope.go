// Package envelope splits a canonical event envelope (docs/format.md) into
// its members and joins them back, byte for byte. Backends use it to check
// an appended event before they store it and a stored event before they
// return it: an envelope that Split accepts is canonical, and Parts.Append
// renders exactly the bytes Split was given.
package envelope

import (
	"bytes"
	"errors"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// members are the members of a canonical envelope in their order
// (docs/format.md); the first four are required.
var members = [...]string{"seq", "time", "type", "data", "surfaceOp", "sourceEventSeqs", "ignorable", "operation"}

const (
	mSeq = iota
	mTime
	mType
	mData
	mSurfaceOp
	mSources
	mIgnorable
	mOperation
	required = mData + 1
)

// Parts are the members of one canonical envelope. Data, SurfaceOp,
// Sources and Operation hold the canonical JSON of those members;
// SurfaceOp, Sources and Operation are nil when the member is absent.
// Operation, when present, is {"id":…,"count":…} (docs/format.md,
// "Operation ids"), on the first event of an operation's events.
type Parts struct {
	Seq, Time int64
	Type      string
	Data      []byte
	SurfaceOp []byte
	Sources   []byte
	Ignorable bool
	Operation []byte
}

// Split splits one canonical envelope into its parts. The envelope must be
// a JSON object whose members are those of docs/format.md in their order,
// with seq and time integer-form in 0 … MaxSeq, type a string and
// ignorable true, and must be in canonical form, so that Append gives back
// exactly the same bytes. Anything else is ENVELOPE_INVALID with Op op.
// The parts point into a fresh buffer, never into ev.
func Split(op string, ev []byte) (Parts, error) {
	// data sits one level inside the envelope; only its own depth is
	// limited.
	doc, err := jsonv.Parse(ev, jsonv.Options{Enclosing: 1})
	if err != nil {
		return Parts{}, notJSON(op, err)
	}
	p, err := split(op, doc.Root(), doc.Buffer())
	if err != nil {
		return Parts{}, err
	}
	if !bytes.Equal(p.Append(make([]byte, 0, len(ev))), ev) {
		return Parts{}, notCanonical(op)
	}
	return p, nil
}

// A Checker splits one envelope after another as Split does, reusing its
// parser and buffers, so that a check allocates nothing once it has seen
// envelopes of similar sizes. The parts it returns point into the
// envelope it was given. A Checker is not safe for concurrent use; its
// zero value is ready to use.
type Checker struct {
	parser   jsonv.Reparser
	buf, out []byte
}

// Split is the package's Split with the parts pointing into ev.
func (c *Checker) Split(op string, ev []byte) (Parts, error) {
	if cap(c.buf) < len(ev) {
		c.buf = make([]byte, 0, len(ev))
	}
	buf, doc, err := c.parser.AppendParse(c.buf[:0], ev, jsonv.Options{Enclosing: 1})
	if err != nil {
		return Parts{}, notJSON(op, err)
	}
	if !bytes.Equal(buf, ev) {
		return Parts{}, notCanonical(op)
	}
	p, err := split(op, doc.Root(), ev) // the spans of buf are those of ev
	if err != nil {
		return Parts{}, err
	}
	if c.out = p.Append(c.out[:0]); !bytes.Equal(c.out, ev) {
		return Parts{}, notCanonical(op)
	}
	if cap(c.buf) > keepScratch {
		c.buf, c.out = nil, nil // one huge envelope does not pin its size
	}
	return p, nil
}

// keepScratch is the largest buffer a Checker keeps between calls.
const keepScratch = 1 << 20

func notJSON(op string, err error) error {
	return &sdk.Error{Code: sdk.CodeEnvelopeInvalid, Op: op, Detail: "the event is not lossless JSON", Err: err}
}

func notCanonical(op string) error {
	return sdk.Errorf(sdk.CodeEnvelopeInvalid, op, "the event is not in canonical form (no whitespace outside strings, canonical string escapes; see docs/format.md)")
}

// split reads the members of a parsed envelope root whose spans index
// buf, checking their names, order and values.
func split(op string, root jsonv.Value, buf []byte) (Parts, error) {
	var p Parts
	invalid := func(format string, args ...any) (Parts, error) {
		return Parts{}, sdk.Errorf(sdk.CodeEnvelopeInvalid, op, format, args...)
	}
	if root.Kind() != jsonv.Object {
		return invalid("the event is not a JSON object")
	}
	next := 0
	for k, v := range root.Members() {
		m := slices.IndexFunc(members[:], k.StrEqual)
		name := members[max(m, 0)]
		if m < 0 {
			name, _ = k.Str()
			return invalid("member %s is not an envelope member (seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable, operation)", strconv.Quote(name))
		}
		if m < next || (next < required && m != next && root.Get(members[next]).Exists()) {
			return invalid("member %s is out of the canonical order seq, time, type, data, surfaceOp, sourceEventSeqs, ignorable, operation", strconv.Quote(name))
		}
		if next < required && m != next {
			return invalid("member %s is missing", strconv.Quote(members[next]))
		}
		next = m + 1
		start, end := v.Span()
		raw := buf[start:end:end]
		switch m {
		case mSeq, mTime:
			n, ok := v.Int()
			if !ok || n < 0 || n > sdk.MaxSeq {
				return invalid("member %s must be an integer in 0 … 2^53−1; got %s", strconv.Quote(name), raw)
			}
			if m == mSeq {
				p.Seq = n
			} else {
				p.Time = n
			}
		case mType:
			s, ok := v.Str()
			if !ok {
				return invalid(`member "type" must be a string; got %s`, raw)
			}
			p.Type = s
		case mData:
			p.Data = raw
		case mSurfaceOp:
			p.SurfaceOp = raw
		case mSources:
			p.Sources = raw
		case mIgnorable:
			if b, ok := v.Bool(); !ok || !b {
				return invalid(`member "ignorable" must be true when present; got %s`, raw)
			}
			p.Ignorable = true
		case mOperation:
			if _, _, err := Operation(v); err != nil {
				return invalid("%v", err)
			}
			p.Operation = raw
		}
	}
	if next < required {
		return invalid("member %s is missing", strconv.Quote(members[next]))
	}
	return p, nil
}

// Append appends the canonical envelope of p to dst: the inverse of Split.
func (p *Parts) Append(dst []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, p.Seq, 10)
	dst = append(dst, `,"time":`...)
	dst = strconv.AppendInt(dst, p.Time, 10)
	dst = append(dst, `,"type":`...)
	dst = jsonv.AppendString(dst, p.Type)
	dst = append(dst, `,"data":`...)
	dst = append(dst, p.Data...)
	if p.SurfaceOp != nil {
		dst = append(dst, `,"surfaceOp":`...)
		dst = append(dst, p.SurfaceOp...)
	}
	if p.Sources != nil {
		dst = append(dst, `,"sourceEventSeqs":`...)
		dst = append(dst, p.Sources...)
	}
	if p.Ignorable {
		dst = append(dst, `,"ignorable":true`...)
	}
	if p.Operation != nil {
		dst = append(dst, `,"operation":`...)
		dst = append(dst, p.Operation...)
	}
	return append(dst, '}')
}

// Len is an upper bound of the length of p's envelope, for sizing the
// buffer Append writes to.
func (p *Parts) Len() int {
	return 80 + len(p.Type) + len(p.Data) + len(p.SurfaceOp) + len(p.Sources) + len(p.Operation)
}

// OperationMember is the name and colon that open the operation member
// of an envelope, with the comma before it: an envelope holds these bytes
// outside its strings only there (the operation member is the last one).
const OperationMember = `,"operation":`

// Operation reads the value of an envelope's "operation" member
// (docs/format.md, "Operation ids"): an object of exactly "id", 1–128
// bytes of printable ASCII (sdk.ValidateOperationID), then "count", an
// integer in 1 … 2^53−1. Anything else is an error naming the rule.
func Operation(v jsonv.Value) (id string, count int64, err error) {
	bad := func() (string, int64, error) {
		return "", 0, errors.New(`member "operation" must be {"id":<1–128 bytes of printable ASCII>,"count":<integer ≥ 1>}, in that order; got ` + string(v.Bytes()))
	}
	if v.Kind() != jsonv.Object {
		return bad()
	}
	i := 0
	for k, m := range v.Members() {
		switch {
		case i == 0 && k.StrEqual("id"):
			s, ok := m.Str()
			if !ok || sdk.ValidateOperationID(s) != nil {
				return bad()
			}
			id = s
		case i == 1 && k.StrEqual("count"):
			n, ok := m.Int()
			if !ok || n < 1 || n > sdk.MaxSeq {
				return bad()
			}
			count = n
		default:
			return bad()
		}
		i++
	}
	if i != 2 {
		return bad()
	}
	return id, count, nil
}

// AppendOperation appends the canonical operation member of an envelope,
// OperationMember and {"id":id,"count":count}, to dst.
func AppendOperation(dst []byte, id string, count int64) []byte {
	dst = append(dst, OperationMember+`{"id":`...)
	dst = jsonv.AppendString(dst, id)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendInt(dst, count, 10)
	return append(dst, '}')
}
