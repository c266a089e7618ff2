package sqlite

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// maxDecodedData bounds what one compressed data value may expand to: the
// largest MaxEventBytes allowed. A frame claiming more is damage.
const maxDecodedData = sdk.MaxMaxEventBytes

// row is one event as the events table holds it (docs/storage.md).
type row struct {
	seq, time int64
	typ       string
	data      []byte // canonical JSON of the data member
	blob      []byte // the zstd frame stored instead of data; nil for TEXT
	surfaceOp []byte // canonical JSON; nil = NULL
	sources   []byte // canonical JSON; nil = NULL
	ignorable bool
	operation []byte // canonical JSON of the operation member; nil = NULL
}

// dataValue is what the data column is bound to: the frame as a BLOB, or the
// canonical JSON as TEXT.
func (r *row) dataValue() any {
	if r.blob != nil {
		return r.blob
	}
	return string(r.data)
}

func nullText(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func (r *row) ignorableValue() any {
	if r.ignorable {
		return int64(1)
	}
	return nil
}

// parts are r's envelope members.
func (r *row) parts() envelope.Parts {
	return envelope.Parts{Seq: r.seq, Time: r.time, Type: r.typ, Data: r.data, SurfaceOp: r.surfaceOp, Sources: r.sources, Ignorable: r.ignorable, Operation: r.operation}
}

// appendEnvelope appends the canonical envelope of r to dst: the inverse of
// splitEnvelope.
func (r *row) appendEnvelope(dst []byte) []byte {
	p := r.parts()
	return p.Append(dst)
}

func (r *row) envelopeLen() int {
	p := r.parts()
	return p.Len()
}

// splitEnvelope splits one canonical envelope into its columns
// (envelope.Split): anything that is not a canonical envelope is
// ENVELOPE_INVALID. The row's slices point into a fresh buffer.
func splitEnvelope(ev []byte) (row, error) {
	p, err := envelope.Split(op, ev)
	if err != nil {
		return row{}, err
	}
	return row{seq: p.Seq, time: p.Time, typ: p.Type, data: p.Data, surfaceOp: p.SurfaceOp, sources: p.Sources, ignorable: p.Ignorable, operation: p.Operation}, nil
}

// codec compresses and decompresses data values. Both halves are safe for
// concurrent use.
type codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

func newCodec() (*codec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithEncoderCRC(true))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(maxDecodedData))
	if err != nil {
		enc.Close()
		return nil, err
	}
	return &codec{enc: enc, dec: dec}, nil
}

func (c *codec) close() {
	c.enc.Close()
	c.dec.Close()
}

// compress sets r.blob when r.data is at least min bytes and its zstd
// frame is smaller.
func (c *codec) compress(r *row, min int) {
	if len(r.data) < min {
		return
	}
	if frame := c.enc.EncodeAll(r.data, make([]byte, 0, len(r.data)/2)); len(frame) < len(r.data) {
		r.blob = frame
	}
}

// rowError is why a stored row does not decode.
type rowError struct{ reason string }

func (e *rowError) Error() string { return e.reason }

func badRow(format string, args ...any) *rowError {
	return &rowError{reason: fmt.Sprintf(format, args...)}
}

// rawRow is one events row as scanned (rowColumns), before decoding. data
// is a view valid until the next row is scanned.
type rawRow struct {
	seq       int64
	typ       string
	time      int64
	dataType  string // typeof(data): "text", "blob", "integer", "real"
	data      sql.RawBytes
	surfaceOp sql.NullString
	sources   sql.NullString
	ignorable sql.NullInt64
	operation sql.NullString
}

// rowColumns are the columns scanRow reads, in its order.
const rowColumns = "seq, type, time, typeof(data), data, surface_op, source_event_seqs, ignorable, operation"

func scanRow(rows *sql.Rows, raw *rawRow) error {
	return rows.Scan(&raw.seq, &raw.typ, &raw.time, &raw.dataType, &raw.data, &raw.surfaceOp, &raw.sources, &raw.ignorable, &raw.operation)
}

// scratch holds the buffers and the parsers decode reuses from row to row.
type scratch struct {
	json, data []byte
	// parsers holds one parser per size class of the JSON it checks (a
	// factor of 4 each): a Reparser drops a tape that is too large for
	// the document at hand, so one parser over rows of 30 bytes and of
	// 2 KB in turn would allocate a tape for nearly every row.
	parsers [parserClasses]jsonv.Reparser
}

// parserClasses covers JSON up to 4^12 bytes (16 MiB) in its own classes;
// larger documents share the last.
const parserClasses = 13

// parser returns the parser for JSON of n bytes.
func (sc *scratch) parser(n int) *jsonv.Reparser {
	return &sc.parsers[min(bits.Len(uint(n))/2, parserClasses-1)]
}

// decode checks a stored row and returns it as a row whose envelope is
// canonical: type valid UTF-8, time in 0 … MaxSeq, data TEXT canonical JSON
// or a BLOB holding a zstd frame of it (checksum verified), surface_op and
// source_event_seqs NULL or canonical JSON, ignorable NULL or 1, operation
// NULL or the canonical JSON of an operation member (envelope.Operation).
// The row's
// data may point into raw or sc; use it before the next call.
func (c *codec) decode(raw *rawRow, sc *scratch) (row, *rowError) {
	r := row{seq: raw.seq, typ: raw.typ, time: raw.time}
	if !utf8.ValidString(raw.typ) {
		return row{}, badRow("type is not valid UTF-8")
	}
	if raw.time < 0 || raw.time > sdk.MaxSeq {
		return row{}, badRow("time %d is outside 0 … 2^53−1", raw.time)
	}
	switch raw.dataType {
	case "text":
		r.data = raw.data
	case "blob":
		out, err := c.dec.DecodeAll(raw.data, sc.data[:0])
		if err != nil {
			return row{}, badRow("the compressed data does not decode: %v", err)
		}
		sc.data = out[:0]
		r.data = out
	default:
		return row{}, badRow("data holds %s %s, neither TEXT nor a BLOB", raw.dataType, raw.data)
	}
	if err := canonical(r.data, "data", sc); err != nil {
		return row{}, err
	}
	var err *rowError
	if r.surfaceOp, err = optionalJSON(raw.surfaceOp, "surface_op", sc); err != nil {
		return row{}, err
	}
	if r.sources, err = optionalJSON(raw.sources, "source_event_seqs", sc); err != nil {
		return row{}, err
	}
	if raw.ignorable.Valid {
		if raw.ignorable.Int64 != 1 {
			return row{}, badRow("ignorable is %d, neither NULL nor 1", raw.ignorable.Int64)
		}
		r.ignorable = true
	}
	if r.operation, err = optionalJSON(raw.operation, "operation", sc); err != nil {
		return row{}, err
	}
	if r.operation != nil {
		doc, perr := jsonv.Parse(r.operation, jsonv.Options{})
		if perr == nil {
			_, _, perr = envelope.Operation(doc.Root())
		}
		if perr != nil {
			return row{}, badRow("operation: %v", perr)
		}
	}
	return r, nil
}

func optionalJSON(v sql.NullString, column string, sc *scratch) ([]byte, *rowError) {
	if !v.Valid {
		return nil, nil
	}
	b := []byte(v.String)
	return b, canonical(b, column, sc)
}

// canonical requires b to be lossless JSON in canonical form.
func canonical(b []byte, column string, sc *scratch) *rowError {
	buf, _, err := sc.parser(len(b)).AppendParse(sc.json[:0], b, jsonv.Options{})
	sc.json = buf[:0]
	if err != nil {
		return badRow("%s is not lossless JSON: %v", column, err)
	}
	if !bytes.Equal(buf, b) {
		return badRow("%s is not canonical JSON", column)
	}
	return nil
}

// rawLine renders a row that does not decode as one canonical JSON line
// of a torn-row artifact: its columns as stored (TEXT as a string, or as
// base64 when it is not UTF-8; a BLOB as base64) and why it does not
// decode.
func rawLine(raw *rawRow, reason string) []byte {
	b := []byte(`{"undecodable":{"seq":`)
	b = strconv.AppendInt(b, raw.seq, 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendInt(b, raw.time, 10)
	b = append(b, `,"type":`...)
	b = appendText(b, raw.typ)
	b = append(b, `,"data":`...)
	switch raw.dataType {
	case "blob":
		b = append(b, `{"blobBase64":"`...)
		b = base64.StdEncoding.AppendEncode(b, raw.data)
		b = append(b, `"}`...)
	case "text":
		b = appendText(b, string(raw.data))
	default: // a number, rendered by SQLite
		b = append(b, `{"`+raw.dataType+`":`...)
		b = jsonv.AppendString(b, string(raw.data))
		b = append(b, '}')
	}
	for _, col := range [...]struct {
		name string
		v    sql.NullString
	}{{"surfaceOp", raw.surfaceOp}, {"sourceEventSeqs", raw.sources}} {
		b = append(b, `,"`+col.name+`":`...)
		if col.v.Valid {
			b = appendText(b, col.v.String)
		} else {
			b = append(b, "null"...)
		}
	}
	b = append(b, `,"ignorable":`...)
	if raw.ignorable.Valid {
		b = strconv.AppendInt(b, raw.ignorable.Int64, 10)
	} else {
		b = append(b, "null"...)
	}
	if raw.operation.Valid { // a column of schema version 3, named only when set
		b = append(b, `,"operation":`...)
		b = appendText(b, raw.operation.String)
	}
	b = append(b, `},"reason":`...)
	b = appendText(b, reason)
	return append(b, '}')
}

// appendText appends s as a JSON string, or as {"textBase64":…} when s is
// not valid UTF-8, so that the bytes survive.
func appendText(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return jsonv.AppendString(b, s)
	}
	b = append(b, `{"textBase64":"`...)
	b = base64.StdEncoding.AppendEncode(b, []byte(s))
	return append(b, `"}`...)
}
