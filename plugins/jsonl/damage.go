package jsonl

import (
	"bytes"

	"github.com/seed-e5e476df/logbook/sdk"
)

// After the first bad unit of a log the scanner examines the rest to tell
// a torn tail (what a crash during the last write leaves, cut by a write
// open) from damage inside the committed log (refused, nothing cut):
//
//   - zstd: every acknowledged batch is one checksummed frame, so any
//     intact frame after the bad one (found by resynchronizing on the frame
//     magic; its checksum holds and it decodes to complete, valid envelope
//     lines) proves that the bad frame was committed.
//   - none: a power loss during the write of a multi-line batch can leave
//     intact lines after a damaged page, so only a later valid turn/end
//     proves it; and a complete line ending in CRLF is a converted file,
//     never a torn write.

// crlfReason is why a line ending in "\r\n" is bad.
const crlfReason = `the line ends in CRLF ("\r\n") but logbook ends every line with a bare "\n": the file was converted (by an editor, or git's autocrlf), which is not a torn tail; convert its line endings back to LF`

// damage is committed corruption: a bad unit that the rest of the log
// proves was committed.
type damage struct {
	zstd   bool
	off    int64 // byte offset of the bad unit: the end of the valid prefix
	line   int64 // none: its line number (1-based; the header is line 1)
	reason string
	crlf   bool // none: the bad line ends in CRLF
	// later is what proves it committed: the byte offset of the first
	// intact frame after it (zstd), or the line number of the first valid
	// turn/end after it (none, not crlf).
	later int64
	// intact counts the events of the intact frames or lines after it.
	intact int64
}

func (d *damage) error(id, path string) error {
	var e *sdk.Error
	const keep = "keep a copy of the file, then salvage its valid prefix into a new session or restore the file from a backup"
	switch {
	case d.zstd:
		e = sdk.Errorf(sdk.CodeCorruptLog, op, "%s: byte offset %d: %s; the frame at byte offset %d is intact (its checksum holds and it decodes to valid envelopes), so the damage is inside the committed log, not a torn tail, and nothing was cut; %s",
			path, d.off, d.reason, d.later, keep)
	case d.crlf:
		e = sdk.Errorf(sdk.CodeCorruptLog, op, "%s: line %d (byte offset %d): %s", path, d.line, d.off, d.reason)
	default:
		e = sdk.Errorf(sdk.CodeCorruptLog, op, "%s: line %d (byte offset %d): %s; a valid turn/end follows at line %d, so the damage is inside the committed log, not a torn tail, and nothing was cut; %s",
			path, d.line, d.off, d.reason, d.later, keep)
	}
	e.SessionID = id
	return e
}

// laterLines examines a plain log from its first bad line on: rest starts
// with that line, at file offset off, and it is line number lineNo. It
// returns the damage when the bad line is committed, nil for a torn tail.
func (c *checker) laterLines(rest []byte, off, lineNo int64, reason string) *damage {
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		return nil // an incomplete final line
	}
	d := &damage{off: off, line: lineNo, reason: reason}
	if nl > 0 && rest[nl-1] == '\r' {
		d.crlf, d.reason = true, crlfReason
		return d
	}
	n := lineNo + 1
	for q := nl + 1; q < len(rest); n++ {
		nl := bytes.IndexByte(rest[q:], '\n')
		if nl < 0 {
			break // not a line
		}
		if _, te, r := c.envelope(rest[q : q+nl]); r == "" {
			d.intact++
			if te && d.later == 0 {
				d.later = n
			}
		}
		q += nl + 1
	}
	if d.later == 0 {
		return nil
	}
	return d
}

// laterFrames examines a zstd log from its first bad frame on: rest starts
// with that frame, at file offset off. It returns the damage when an
// intact frame follows, nil for a torn tail.
func (c *checker) laterFrames(rest []byte, off int64, reason string) *damage {
	d := &damage{zstd: true, off: off, reason: reason, later: -1}
	for q := 1; q < len(rest); {
		k := bytes.Index(rest[q:], frameMagic)
		if k < 0 {
			break
		}
		at := q + k
		q = at + 1
		n, bound, st, _ := frameBounds(rest[at:])
		if st != unitGood {
			continue
		}
		count, ok := c.intactFrame(rest[at:at+n], bound)
		if !ok {
			continue
		}
		if d.later < 0 {
			d.later = off + int64(at)
		}
		d.intact += count
		q = at + n
	}
	if d.later < 0 {
		return nil
	}
	return d
}

// intactFrame reports whether a structurally complete frame decodes, with
// its checksum, to complete lines that are valid envelopes with seqs
// counting up from its first line's, and how many.
func (c *checker) intactFrame(frame []byte, bound uint64) (int64, bool) {
	out, err := c.decodeFrame(frame, bound)
	if err != nil {
		return 0, false
	}
	_, count, ok := c.selfContained(out)
	return count, ok
}
