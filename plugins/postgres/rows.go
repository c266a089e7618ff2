package postgres

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk/envelope"
)

// storedRow is one events row as read, and the outcome of its check.
type storedRow struct {
	seq    int64
	zstd   bool
	stored []byte // as the row holds it
	env    []byte // the envelope when the row checks (may alias stored)
	reason string // why the row does not check; "" when it does
}

// checkChunk is how many rows checkedRows hands over at a time.
const checkChunk = 256

// checkedRows reads the rows of query (seq, zstd, envelope) on the calling
// goroutine and checks them (store.check) on another, so that reading and
// checking overlap; fn gets the checked rows in order, a chunk at a time,
// on the checking goroutine. An error of fn stops the reading and is
// returned.
func (s space) checkedRows(ctx context.Context, q querier, id, query string, fn func([]storedRow) error, args ...any) error {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return s.dbErr(ctx, id, "reading the rows", err)
	}
	defer rows.Close()
	todo := make(chan []storedRow, 4)
	var (
		wg     sync.WaitGroup
		fnErr  error
		failed = make(chan struct{})
	)
	wg.Go(func() {
		var c envelope.Checker
		for chunk := range todo {
			if fnErr != nil {
				continue
			}
			for i := range chunk {
				r := &chunk[i]
				r.env, r.reason = s.check(&c, r.seq, r.zstd, r.stored)
			}
			if fnErr = fn(chunk); fnErr != nil {
				close(failed)
			}
		}
	})
	err = readChunks(rows, todo, failed)
	close(todo)
	wg.Wait()
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return s.dbErr(ctx, id, "reading the rows", err)
	}
	return nil
}

// readChunks sends the rows in chunks of checkChunk until they end or
// failed is closed.
func readChunks(rows pgx.Rows, todo chan<- []storedRow, failed <-chan struct{}) error {
	chunk := make([]storedRow, 0, checkChunk)
	send := func() bool {
		select {
		case todo <- chunk:
		case <-failed:
			return false
		}
		chunk = make([]storedRow, 0, checkChunk)
		return true
	}
	for rows.Next() {
		var r storedRow
		if err := rows.Scan(&r.seq, &r.zstd, &r.stored); err != nil {
			return err
		}
		if chunk = append(chunk, r); len(chunk) == checkChunk && !send() {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(chunk) > 0 {
		send()
	}
	return nil
}
