package service

import (
	"io"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/appendinput"
)

// InputReader reads newline-delimited input one line at a time, as
// `logbook append` and `logbook import` take it: each line at most a limit
// of bytes (sdk.MaxEventMessageBytes of the configured max_event_bytes).
type InputReader struct {
	r *appendinput.Reader
}

// NewInputReader returns a reader of the lines of r, each at most limit
// bytes without its newline.
func NewInputReader(r io.Reader, limit int64) *InputReader {
	return &InputReader{r: appendinput.NewReader(r, limit)}
}

// Next returns the next line without its line ending ("\n" or "\r\n"),
// io.EOF after the last one, EVENT_TOO_LARGE for a line longer than the
// limit (without reading the rest of it) and IO_ERROR for a read error.
func (r *InputReader) Next() ([]byte, error) { return r.r.Next() }

// Line returns the number of the line Next returned last, from 1.
func (r *InputReader) Line() int { return r.r.Line() }

// ParseInput reads one append input written as JSON: an object with
// exactly "type" and "data" and optionally "surfaceOp", "sourceEventSeqs"
// and "ignorable" (docs/format.md). Data is kept as written; the append
// checks everything else.
func ParseInput(line []byte) (events.Input, error) { return appendinput.Parse(line) }
