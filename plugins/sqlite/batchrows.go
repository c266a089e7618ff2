package sqlite

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/seed-e5e476df/logbook/sdk"
)

// batchRows is an Append batch turned into rows: each event split into its
// columns, checked (a canonical envelope with the next seq) and its data
// compressed. A large batch is prepared in chunks of insertRows on other
// goroutines while the transaction inserts the chunks before, so that
// compression overlaps the SQLite work; a small one is prepared up front.
// A nil *batchRows is an empty batch.
type batchRows struct {
	rows     []row
	parallel bool
	chunks   []chan struct{} // closed once chunk k is prepared (parallel)
	errs     []*sdk.Error    // per chunk (parallel), or the one error
	seen     int             // chunks ready has waited for
	stop     atomic.Bool     // a chunk failed: skip the ones not started
	wg       sync.WaitGroup
}

// prepareRows starts preparing events, the batch of session id that
// starts at firstSeq, compressing data of compressMin bytes or more (none
// when compressMin is 0).
func prepareRows(events [][]byte, firstSeq sdk.Seq, id string, compressMin int, c *codec) *batchRows {
	br := &batchRows{rows: make([]row, len(events))}
	prepare := func(from, to int) *sdk.Error {
		for i := from; i < to; i++ {
			r, err := splitEnvelope(events[i])
			if err != nil {
				return err.(*sdk.Error).WithSession(id).WithIndex(i)
			}
			if want := int64(firstSeq) + int64(i); r.seq != want {
				return newErr(sdk.CodeSeqNotContiguous, id, "batch event %d has seq %d; expected %d (firstSeq %d + %d)", i, r.seq, want, firstSeq, i).WithSeq(r.seq).WithIndex(i)
			}
			if compressMin > 0 {
				c.compress(&r, compressMin)
			}
			br.rows[i] = r
		}
		return nil
	}
	workers := runtime.GOMAXPROCS(0)
	if len(events) < prepareMin || workers < 2 {
		br.errs = []*sdk.Error{prepare(0, len(events))}
		return br
	}
	n := (len(events) + insertRows - 1) / insertRows
	br.parallel = true
	br.chunks, br.errs = make([]chan struct{}, n), make([]*sdk.Error, n)
	for k := range br.chunks {
		br.chunks[k] = make(chan struct{})
	}
	var next atomic.Int64
	for range workers {
		br.wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if !br.stop.Load() {
					if e := prepare(k*insertRows, min((k+1)*insertRows, len(events))); e != nil {
						br.errs[k] = e
						br.stop.Store(true)
					}
				}
				close(br.chunks[k])
			}
		})
	}
	return br
}

// len is the batch's event count.
func (br *batchRows) len() int {
	if br == nil {
		return 0
	}
	return len(br.rows)
}

// ready waits until rows [0, n) are prepared and returns the error of the
// first bad event among them, or nil. Chunks are claimed in order, so a
// chunk skipped after a failure always lies after the failing one.
func (br *batchRows) ready(n int) *sdk.Error {
	if br == nil {
		return nil
	}
	if !br.parallel {
		return br.errs[0]
	}
	for ; br.seen < len(br.chunks) && br.seen*insertRows < n; br.seen++ {
		<-br.chunks[br.seen]
		if e := br.errs[br.seen]; e != nil {
			return e
		}
	}
	for _, e := range br.errs[:br.seen] {
		if e != nil {
			return e
		}
	}
	return nil
}

// firstErr waits for the whole batch and returns the error of its first
// bad event, or nil.
func (br *batchRows) firstErr() *sdk.Error { return br.ready(br.len()) }

// wait waits until no goroutine works on the batch.
func (br *batchRows) wait() {
	if br != nil {
		br.wg.Wait()
	}
}
