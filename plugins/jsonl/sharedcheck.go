package jsonl

import (
	"sync"
	"sync/atomic"
)

// sharedPieceBytes is about how many bytes of a run one claim of a
// sharedCheck covers.
const sharedPieceBytes = 32 << 10

// sharedCheck checks a run of lines as envelopes does, cut into pieces of
// about sharedPieceBytes that several goroutines, each with its own
// checker, claim in turn. A goroutine that is slow to get a CPU delays only
// the piece it took, never the whole check: the Append path starts a
// helper before it compresses the batch and joins in once the frame is
// done; a large scanned run is checked on up to maxPieces goroutines.
type sharedCheck struct {
	lines  [][]byte
	first  int64
	cuts   []int // piece p is lines[cuts[p]:cuts[p+1]]
	next   atomic.Int32
	done   sync.WaitGroup
	faults []lineFault // by piece
	ok     []bool      // by piece
}

func newSharedCheck(lines [][]byte, first int64) *sharedCheck {
	s := &sharedCheck{lines: lines, first: first, cuts: []int{0}}
	size := 0
	for i, l := range lines {
		size += len(l) + 1
		if size >= sharedPieceBytes && i+1 < len(lines) {
			s.cuts = append(s.cuts, i+1)
			size = 0
		}
	}
	s.cuts = append(s.cuts, len(lines))
	pieces := len(s.cuts) - 1
	s.faults, s.ok = make([]lineFault, pieces), make([]bool, pieces)
	s.done.Add(pieces)
	return s
}

// run checks pieces with c until none is left to claim. c is touched only
// for a claimed piece, so a goroutine that starts after the check is over
// leaves it alone.
func (s *sharedCheck) run(c *checker) {
	for {
		p := int(s.next.Add(1)) - 1
		if p >= len(s.ok) {
			return
		}
		from, to := s.cuts[p], s.cuts[p+1]
		s.faults[p], s.ok[p] = c.envelopesRun(s.lines[from:to], s.first+int64(from))
		s.faults[p].index += from
		s.done.Done()
	}
}

// result waits for the pieces still being checked and returns the run's
// first bad line, as envelopes does.
func (s *sharedCheck) result() (lineFault, bool) {
	s.done.Wait()
	for p, ok := range s.ok {
		if !ok {
			return s.faults[p], false
		}
	}
	return lineFault{}, true
}
