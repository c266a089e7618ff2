// Package appendinput reads append inputs written as JSON, one per line
// (newline-delimited JSON), as `logbook append` and the /v1 API's append
// take them: a JSON object with exactly "type" and "data" and optionally
// "surfaceOp", "sourceEventSeqs" and "ignorable" (docs/format.md). data is
// passed on as written (member order and number literals kept); the
// session's append pipeline checks everything else.
package appendinput

import (
	"bufio"
	"bytes"
	"io"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// inputMembers names the members of an input line, for messages.
const inputMembers = "type, data and optionally surfaceOp, sourceEventSeqs, ignorable"

// Parse reads one input line: a lossless JSON object
// (JSON_SYNTAX when it is not an object) with exactly type and data and
// optionally surfaceOp, sourceEventSeqs and ignorable (ENVELOPE_INVALID
// otherwise). data is handed on as the bytes written (canonical encoding
// only: member order and number literals are kept); the session's append
// pipeline checks everything else.
func Parse(line []byte) (session.AppendInput, error) {
	var in session.AppendInput
	bad := func(code sdk.Code, format string, args ...any) (session.AppendInput, error) {
		return session.AppendInput{}, sdk.Errorf(code, "append", format, args...)
	}
	// data sits one level inside the line's object; only data's own depth
	// is limited.
	doc, err := jsonv.Parse(line, jsonv.Options{Enclosing: 1})
	if err != nil {
		return in, err
	}
	root := doc.Root()
	if root.Kind() != jsonv.Object {
		return bad(sdk.CodeJSONSyntax, "an input line must be a JSON object with %s", inputMembers)
	}
	var hasType, hasData bool
	for name, v := range root.Members() {
		key, _ := name.Str()
		switch key {
		case "type":
			if in.Type, hasType = v.Str(); !hasType {
				return bad(sdk.CodeEnvelopeInvalid, "member type must be a string; got %s", v.Bytes())
			}
		case "data":
			in.Data, hasData = v.Bytes(), true
		case "surfaceOp":
			if in.SurfaceOp, err = parseSurfaceOp(v); err != nil {
				return session.AppendInput{}, err
			}
		case "sourceEventSeqs":
			if in.SourceEventSeqs, err = parseSources(v); err != nil {
				return session.AppendInput{}, err
			}
		case "ignorable":
			if b, ok := v.Bool(); !ok || !b {
				return bad(sdk.CodeEnvelopeInvalid, "member ignorable must be the literal true (or absent); got %s", v.Bytes())
			}
			in.Ignorable = true
		default:
			return bad(sdk.CodeEnvelopeInvalid, "unknown member %q: an input line has exactly %s (seq and time are assigned by the append)", key, inputMembers)
		}
	}
	switch {
	case !hasType:
		return bad(sdk.CodeEnvelopeInvalid, "missing member type: an input line has exactly %s", inputMembers)
	case !hasData:
		return bad(sdk.CodeEnvelopeInvalid, "missing member data: an input line has exactly %s", inputMembers)
	}
	return in, nil
}

// parseSurfaceOp reads a surfaceOp member: "append" or {"op":"replace",
// "startSeq":Seq,"endSeq":Seq}; anything else is SURFACE_OP_INVALID, the
// code the append pipeline gives it (docs/format.md S2e).
func parseSurfaceOp(v jsonv.Value) (*session.SurfaceOp, error) {
	if v.StrEqual("append") {
		return &session.SurfaceOp{}, nil
	}
	invalid := sdk.Errorf(sdk.CodeSurfaceOpInvalid, "append", `surfaceOp must be "append" or {"op":"replace","startSeq":SEQ,"endSeq":SEQ}; got %s`, v.Bytes())
	if v.Kind() != jsonv.Object || v.Len() != 3 || !v.Get("op").StrEqual("replace") {
		return nil, invalid
	}
	start, ok1 := seqValue(v.Get("startSeq"))
	end, ok2 := seqValue(v.Get("endSeq"))
	if !ok1 || !ok2 {
		return nil, invalid
	}
	return &session.SurfaceOp{Replace: true, StartSeq: start, EndSeq: end}, nil
}

// parseSources reads a sourceEventSeqs member: an array of Seqs, possibly
// empty (which the pipeline rejects as SOURCES_EMPTY); anything else is
// SOURCES_INVALID naming the offending element.
func parseSources(v jsonv.Value) ([]sdk.Seq, error) {
	if v.Kind() != jsonv.Array {
		return nil, sdk.Errorf(sdk.CodeSourcesInvalid, "append", "sourceEventSeqs must be an array of seqs; got %s", v.Bytes())
	}
	seqs := []sdk.Seq{}
	for i, el := range v.Elements() {
		s, ok := seqValue(el)
		if !ok {
			return nil, sdk.Errorf(sdk.CodeSourcesInvalid, "append", "sourceEventSeqs[%d] is %s, not a seq", i, el.Bytes())
		}
		seqs = append(seqs, s)
	}
	return seqs, nil
}

// seqValue reads an integer-form number in the Seq domain.
func seqValue(v jsonv.Value) (sdk.Seq, bool) {
	n, ok := v.Int()
	if !ok || n < 0 || n > sdk.MaxSeq {
		return 0, false
	}
	return sdk.Seq(n), true
}

// Reader reads lines of at most limit bytes (line ending excluded),
// numbering them from 1. Each line is returned as soon as its line ending
// arrives; the last line may lack one.
type Reader struct {
	br    *bufio.Reader
	limit int64
	n     int // the number of the line last returned
}

// NewReader returns a reader of the lines of r, each at most limit bytes.
func NewReader(r io.Reader, limit int64) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Line returns the number of the line Next returned last, from 1.
func (r *Reader) Line() int { return r.n }

// Next returns the next line without its line ending ("\n" or "\r\n"),
// io.EOF after the last one, EVENT_TOO_LARGE for a line longer than the
// limit (without reading the rest of it) and IO_ERROR for a read error.
func (r *Reader) Next() ([]byte, error) {
	r.n++
	var line []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		line = append(line, chunk...)
		if int64(len(bytes.TrimRight(line, "\r\n"))) > r.limit {
			return nil, sdk.Errorf(sdk.CodeEventTooLarge, "logbook", "the line is longer than %d bytes (2 × max_event_bytes + 1 MiB)", r.limit)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, &sdk.Error{Code: sdk.CodeIOError, Op: "logbook", Detail: "reading the input", Err: err}
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
}

// Buffered reports whether a next line may be had without waiting for
// more input: some of it is read already.
func (r *Reader) Buffered() bool { return r.br.Buffered() > 0 }
