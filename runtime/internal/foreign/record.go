package foreign

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// TypeSourceLine is the raw record's event type (docs/format.md,
// "source/line").
const TypeSourceLine = events.TypeSourceLine

// Record is one raw record: a source line and, when the importer could not
// read it, why.
type Record struct {
	Line
	// Damage is why the line could not be read, or "".
	Damage string
}

// AppendData appends the canonical source/line payload of r to dst:
// {"line":N,"text":…} (or "bytes":<standard base64> when the line is not
// valid UTF-8), then "newline":false for a last line without a line feed
// and "damage" when set.
func (r Record) AppendData(dst []byte) []byte {
	dst = append(dst, `{"line":`...)
	dst = strconv.AppendInt(dst, int64(r.N), 10)
	if utf8.Valid(r.Text) {
		dst = append(dst, `,"text":`...)
		dst = jsonv.AppendString(dst, string(r.Text))
	} else {
		dst = append(dst, `,"bytes":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, r.Text)
		dst = append(dst, '"')
	}
	if !r.Newline {
		dst = append(dst, `,"newline":false`...)
	}
	if r.Damage != "" {
		dst = append(dst, `,"damage":`...)
		dst = jsonv.AppendString(dst, r.Damage)
	}
	return append(dst, '}')
}

// Input returns r as the source/line event to append.
func (r Record) Input() events.Input {
	return events.Input{Type: TypeSourceLine, Data: r.AppendData(nil)}
}

// DecodeRecord reads a stored source/line payload back (the store checked
// its shape when it was appended). A payload that is not one is
// PAYLOAD_INVALID.
func DecodeRecord(data []byte) (Record, error) {
	var p struct {
		Line    int     `json:"line"`
		Text    *string `json:"text"`
		Bytes   []byte  `json:"bytes"`
		Newline *bool   `json:"newline"`
		Damage  string  `json:"damage"`
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Line < 1 || (p.Text == nil) == (p.Bytes == nil) {
		return Record{}, sdk.Errorf(sdk.CodePayloadInvalid, "import", "not a source/line payload: %.200s", data)
	}
	r := Record{Line: Line{N: p.Line, Text: p.Bytes, Newline: p.Newline == nil || *p.Newline}, Damage: p.Damage}
	if p.Text != nil {
		r.Text = []byte(*p.Text)
	}
	return r, nil
}

// AppendSource appends the source bytes of r to dst: the line, then a
// line feed unless it is a last line without one.
func (r Record) AppendSource(dst []byte) []byte {
	dst = append(dst, r.Text...)
	if r.Newline {
		dst = append(dst, '\n')
	}
	return dst
}

// SplitLines splits file bytes into lines: every "\n" ends one, and bytes
// after the last "\n" are a last line without Newline. The lines share b.
func SplitLines(b []byte) []Line {
	var out []Line
	for n := 1; len(b) > 0; n++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, Line{N: n, Text: b})
			break
		}
		out = append(out, Line{N: n, Text: b[:i:i], Newline: true})
		b = b[i+1:]
	}
	return out
}

// Same reports whether r holds exactly the bytes of l (its number, text
// and line feed).
func (r Record) Same(l Line) bool {
	return r.N == l.N && r.Newline == l.Newline && bytes.Equal(r.Text, l.Text)
}
