package sqlstore

import (
	"github.com/seed-e5e476df/logbook/sdk/rowscan"
)

// KeepBytes bounds the envelopes a Scan keeps for the first Read of the
// handle an Open makes.
const KeepBytes = 256 << 20

// Scan is a torn-row scan of one session's rows (rowscan.Scan), which
// also keeps the envelopes of the valid prefix when asked to, so that the
// first Read of an opened handle need not check the rows again.
type Scan struct {
	*rowscan.Scan
	// Events are the envelopes of the valid prefix [0, End) when the scan
	// was asked to keep them and they fit in KeepBytes; else nil.
	Events [][]byte

	op, id string
	kept   int64
}

// NewScan starts the scan of the rows of session id, whose stored
// next_seq is nextSeq, for the backend op; keep asks for Events.
func NewScan(op, id string, nextSeq int64, keep bool) *Scan {
	s := &Scan{Scan: rowscan.New(nextSeq), op: op, id: id}
	if keep && nextSeq > 0 {
		s.Events = make([][]byte, 0, min(nextSeq, 1<<20))
	}
	return s
}

// Row takes the next row in seq order: env is its envelope when it
// checks, else reason says why not and line renders it for an artifact
// (rowscan.Scan.Row). A negative seq is CORRUPT_LOG: logbook never writes
// one.
func (s *Scan) Row(seq int64, env []byte, reason string, line func() []byte) error {
	if seq < 0 {
		return CorruptAt(s.op, s.id, seq, "a row has the negative seq %d; the database was written by something other than logbook", seq)
	}
	if s.Scan.Row(seq, env, reason, line) && s.Events != nil {
		if s.kept += int64(len(env)); s.kept > KeepBytes {
			s.Events = nil
		} else {
			s.Events = append(s.Events, env)
		}
	}
	return nil
}
