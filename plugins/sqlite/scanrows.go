package sqlite

import (
	"context"
	"database/sql"
	"runtime"
	"sync"
)

// The torn-row scan reads rows on one goroutine and decodes them on
// others: SQLite hands out rows one at a time, while checking a row (zstd,
// canonical JSON) costs about as much again, so the two overlap. Rows go in
// batches, in order; scan takes the batches in the order they were read,
// each once its decoding is done.

// Rows of one batch: enough to make the hand-over cheap, few enough to keep
// the batches in flight small.
const (
	scanBatchRows  = 256
	scanBatchBytes = 1 << 20
	envSlabBytes   = 256 << 10 // a batch's bytes are copied and rendered into slabs of this size
)

// scannedRow is one row as scan needs it: the stored columns (their bytes
// owned by the batch) and the outcome of decoding them.
type scannedRow struct {
	raw rawRow
	env []byte // the canonical envelope when the row decodes
	err *rowError
}

// rowBatch is a run of consecutive rows, decoded by one worker.
type rowBatch struct {
	rows []scannedRow
	done chan struct{} // closed when every row is decoded
}

// rowScan reads the rows of one query and decodes them ahead of the
// consumer. Close it when done, also after an error.
type rowScan struct {
	ordered chan *rowBatch
	stop    chan struct{}
	wg      sync.WaitGroup
	err     error // the read error, valid after ordered is closed
}

// scanRows starts reading rows (rowColumns) and decoding them with c.
func scanRows(rows *sql.Rows, c *codec) *rowScan {
	workers := max(1, min(runtime.GOMAXPROCS(0)-1, 3))
	rs := &rowScan{ordered: make(chan *rowBatch, 2*workers+2), stop: make(chan struct{})}
	work := make(chan *rowBatch, 2*workers+2)
	for range workers {
		rs.wg.Go(func() {
			var sc scratch
			for b := range work {
				var slab []byte
				for i := range b.rows {
					slab = b.rows[i].decode(c, &sc, slab)
				}
				close(b.done)
			}
		})
	}
	rs.wg.Go(func() {
		defer close(rs.ordered)
		defer close(work)
		rs.err = rs.read(rows, work)
	})
	return rs
}

// read batches the rows, copying their bytes, and hands every batch to the
// workers and, in order, to the consumer.
func (rs *rowScan) read(rows *sql.Rows, work chan<- *rowBatch) error {
	b := &rowBatch{rows: make([]scannedRow, 0, scanBatchRows), done: make(chan struct{})}
	var slab []byte
	size := 0 // the bytes of b's rows
	send := func() bool {
		select {
		case rs.ordered <- b:
		case <-rs.stop:
			return false
		}
		work <- b
		b, slab, size = &rowBatch{rows: make([]scannedRow, 0, scanBatchRows), done: make(chan struct{})}, nil, 0
		return true
	}
	for rows.Next() {
		var raw rawRow
		if err := scanRow(rows, &raw); err != nil {
			return err
		}
		if cap(slab)-len(slab) < len(raw.data) {
			slab = make([]byte, 0, max(len(raw.data), envSlabBytes))
		}
		start := len(slab)
		size += len(raw.data)
		slab = append(slab, raw.data...)
		raw.data = slab[start:len(slab):len(slab)]
		b.rows = append(b.rows, scannedRow{raw: raw})
		if (len(b.rows) == scanBatchRows || size >= scanBatchBytes) && !send() {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(b.rows) > 0 {
		send()
	}
	return nil
}

// next returns the next batch once decoded, or nil at the end.
func (rs *rowScan) next(ctx context.Context) (*rowBatch, error) {
	b, ok := <-rs.ordered
	if !ok {
		return nil, rs.err
	}
	select {
	case <-b.done:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// close stops the reader and waits for every goroutine.
func (rs *rowScan) close() {
	close(rs.stop)
	for range rs.ordered { // let the reader finish its hand-over
	}
	rs.wg.Wait()
}

// decode checks the row and, when it decodes, renders its envelope into
// slab (a new one when it is full), which it returns.
func (r *scannedRow) decode(c *codec, sc *scratch, slab []byte) []byte {
	d, err := c.decode(&r.raw, sc)
	if err != nil {
		r.err = err
		return slab
	}
	if n := d.envelopeLen(); cap(slab)-len(slab) < n {
		slab = make([]byte, 0, max(n, envSlabBytes))
	}
	start := len(slab)
	slab = d.appendEnvelope(slab)
	r.env = slab[start:len(slab):len(slab)]
	return slab
}
