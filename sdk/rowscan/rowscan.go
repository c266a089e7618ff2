// Package rowscan applies the torn-tail rules of docs/storage.md to a
// backend that stores one row per event (SQLite, PostgreSQL): fed a
// session's rows in seq order, a Scan tells the valid prefix from a torn
// tail and from committed damage, and renders what a write open cuts as
// JSON lines for its artifact.
//
// Rows are the units: rows at or past next_seq are torn; below next_seq
// the first row that is missing (a seq gap) or does not check starts a
// torn tail, unless a later row below next_seq checks, which makes the
// damage committed corruption (Corrupt).
package rowscan

import (
	"fmt"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Scan is one pass over a session's rows. Its fields are valid after
// Finish.
type Scan struct {
	nextSeq int64
	want    int64 // the seq the next row should have

	// End is the length of the valid, committed prefix.
	End int64
	// Torn is zero when nothing is torn; Bytes counts Lines with their
	// newlines. The caller sets Artifact when it keeps them.
	Torn sdk.Torn
	// Lines are the rows from End on as artifact lines, without newlines.
	Lines [][]byte
	// Rows counts the stored rows Lines holds (a gap's line is none).
	Rows int64
	// Bad is the first damaged row below next_seq (-1 when none), Reason
	// why it is damaged.
	Bad    int64
	Reason string
	// IntactAt is the first row after Bad, below next_seq, that checks (-1
	// when none); Intact counts all of them.
	IntactAt, Intact int64
}

// New starts a scan of a session whose sessions row says nextSeq.
func New(nextSeq int64) *Scan { return &Scan{nextSeq: nextSeq, Bad: -1, IntactAt: -1} }

// Row takes the next row, in seq order: env is its envelope when it
// checks (reason ""), line renders it as an artifact line when it does
// not. Row reports whether the row belongs to the valid prefix.
func (s *Scan) Row(seq int64, env []byte, reason string, line func() []byte) bool {
	if seq > s.want && s.want < s.nextSeq {
		s.missing(s.want, min(seq, s.nextSeq)-1)
	}
	s.want = seq + 1
	if s.Bad < 0 && seq < s.nextSeq {
		if reason == "" {
			return true
		}
		s.Bad, s.Reason = seq, reason
	}
	s.Rows++
	if reason != "" {
		s.add(line())
		return false
	}
	if s.Bad >= 0 && seq < s.nextSeq {
		if s.IntactAt < 0 {
			s.IntactAt = seq
		}
		s.Intact++
	}
	s.add(env)
	return false
}

// Finish ends the scan after the last row.
func (s *Scan) Finish() {
	if s.want < s.nextSeq {
		s.missing(s.want, s.nextSeq-1)
	}
	s.End = s.nextSeq
	if s.Bad >= 0 {
		s.End = s.Bad
	}
	if len(s.Lines) > 0 {
		s.Torn.FromSeq = sdk.Seq(s.End)
	}
}

func (s *Scan) add(line []byte) {
	s.Lines = append(s.Lines, line)
	s.Torn.Bytes += int64(len(line)) + 1
}

// missing records seqs [from, to] absent below next_seq.
func (s *Scan) missing(from, to int64) {
	s.add(MissingLine(from, to))
	if s.Bad < 0 {
		s.Bad, s.Reason = from, fmt.Sprintf("the rows of events %d … %d are missing", from, to)
	}
}

// CommittedDamage reports a damaged row with an intact row after it.
func (s *Scan) CommittedDamage() bool { return s.Bad >= 0 && s.IntactAt >= 0 }

// Corrupt is the CORRUPT_LOG (op, session id, the bad seq) of committed
// damage, naming where the session is stored; nil when the scan found a
// torn tail or nothing.
func (s *Scan) Corrupt(op, id, where string) error {
	if !s.CommittedDamage() {
		return nil
	}
	return sdk.Errorf(sdk.CodeCorruptLog, op, "event %d in %s: %s, but the later event %d is intact (it checks as a valid envelope), so the damage is inside the committed log, not a torn tail, and nothing was cut; keep a copy of the database, then salvage the valid prefix into a new session (logbook salvage) or restore the database from a backup",
		s.Bad, where, s.Reason, s.IntactAt).WithSession(id).WithSeq(s.Bad)
}

// Artifact is the lines, each followed by a newline: what a write open
// keeps of the rows it cuts.
func (s *Scan) Artifact() []byte {
	var b []byte
	for _, l := range s.Lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// MissingLine renders seqs [from, to] absent below next_seq as one
// artifact line: {"missing":{"fromSeq":from,"toSeq":to}}.
func MissingLine(from, to int64) []byte {
	b := []byte(`{"missing":{"fromSeq":`)
	b = strconv.AppendInt(b, from, 10)
	b = append(b, `,"toSeq":`...)
	b = strconv.AppendInt(b, to, 10)
	return append(b, "}}"...)
}
