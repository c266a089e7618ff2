package jsonl

import (
	"sync"
	"sync/atomic"

	"github.com/seed-e5e476df/logbook/sdk"
)

// sharedPieceBytes is about how many bytes of a batch one claim of a
// sharedCheck covers.
const sharedPieceBytes = 32 << 10

// sharedCheck is the check of an Append batch split into pieces of about
// sharedPieceBytes that two goroutines claim in turn: a helper started
// before the batch is compressed, and the Append's own goroutine once the
// frame is done. A helper that is slow to get a CPU then delays only the
// piece it took, never the whole check.
type sharedCheck struct {
	events [][]byte
	first  int64
	cuts   []int // piece p is events[cuts[p]:cuts[p+1]]
	next   atomic.Int32
	done   sync.WaitGroup
	faults []lineFault // by piece
	ok     []bool      // by piece
}

func newSharedCheck(firstSeq sdk.Seq, events [][]byte) *sharedCheck {
	s := &sharedCheck{events: events, first: int64(firstSeq), cuts: []int{0}}
	size := 0
	for i, ev := range events {
		size += len(ev) + 1
		if size >= sharedPieceBytes && i+1 < len(events) {
			s.cuts = append(s.cuts, i+1)
			size = 0
		}
	}
	s.cuts = append(s.cuts, len(events))
	pieces := len(s.cuts) - 1
	s.faults, s.ok = make([]lineFault, pieces), make([]bool, pieces)
	s.done.Add(pieces)
	return s
}

// run checks pieces with c until none is left to claim.
func (s *sharedCheck) run(c *checker) {
	for {
		p := int(s.next.Add(1)) - 1
		if p >= len(s.ok) {
			return
		}
		from, to := s.cuts[p], s.cuts[p+1]
		s.faults[p], s.ok[p] = c.envelopesRun(s.events[from:to], s.first+int64(from))
		s.faults[p].index += from
		s.done.Done()
	}
}

// result waits for the pieces still being checked and returns the check's
// error (checkBatch's): that of the first bad line.
func (s *sharedCheck) result() *sdk.Error {
	s.done.Wait()
	for p, ok := range s.ok {
		if !ok {
			return batchFault(sdk.Seq(s.first), s.faults[p])
		}
	}
	return nil
}
