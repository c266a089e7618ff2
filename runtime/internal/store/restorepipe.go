package store

import (
	"context"
	"runtime"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// A stored log is restored in three overlapping stages: the backend's Read
// hands over chunks; each chunk is parsed (session.StoredParser) on its own
// goroutines as soon as it arrives; one goroutine folds the parsed chunks in
// order. Receiving, parsing and folding thus run at once, and the first
// failure stops the read.

// parallelParseMin is the chunk size from which a chunk is parsed on
// several goroutines: below it they cost more than they save.
const parallelParseMin = 256

// restoreQueue bounds the chunks between the read and the fold.
const restoreQueue = 4

// parsedChunk is one chunk of envelopes and, once done is closed, its
// parsed events; errs[k] is envelope k's parse error.
type parsedChunk struct {
	envelopes [][]byte
	events    []session.Event
	errs      []error
	done      chan struct{}
}

// restoreRead runs read, which calls its argument with consecutive chunks
// of stored envelopes, through r's restore pipeline, then finishes r. The
// errors are those of a one-by-one restore of the same envelopes.
//
// The first trusted envelopes are covered by the restorer's checkpoint:
// they are not parsed, the fold takes them as they are.
func restoreRead(ctx context.Context, r *session.Restorer, maxEventBytes int, trusted int, read func(func([][]byte) error) error) (*session.Session, error) {
	queue := make(chan *parsedChunk, restoreQueue)
	folded := make(chan error, 1)
	stop := make(chan struct{}) // closed when the fold fails
	go func() {
		var err error
		for c := range queue {
			<-c.done
			if err == nil {
				if err = foldChunk(r, c); err != nil {
					close(stop)
				}
			}
		}
		folded <- err
	}()
	var parsing sync.WaitGroup
	seen := 0
	rerr := read(func(envelopes [][]byte) error {
		c := &parsedChunk{envelopes: envelopes, done: make(chan struct{})}
		if seen+len(envelopes) <= trusted {
			close(c.done) // no errs: foldChunk hands the envelopes to the restorer as they are
		} else {
			parsing.Go(func() { c.parse(maxEventBytes) })
		}
		seen += len(envelopes)
		select {
		case queue <- c:
			return nil
		case <-stop:
			return context.Canceled // the fold's error is returned below
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(queue)
	ferr := <-folded
	parsing.Wait()
	switch {
	case ferr != nil:
		return nil, ferr
	case rerr != nil:
		return nil, rerr
	}
	return r.Finish()
}

// parse parses the chunk, in contiguous parts on up to GOMAXPROCS
// goroutines when it is large, and closes done.
func (c *parsedChunk) parse(maxEventBytes int) {
	defer close(c.done)
	n := len(c.envelopes)
	c.events, c.errs = make([]session.Event, n), make([]error, n)
	parse := func(from, to int) {
		var p session.StoredParser
		for k := from; k < to; k++ {
			c.events[k], c.errs[k] = p.Parse(c.envelopes[k], maxEventBytes)
		}
	}
	parts := min(runtime.GOMAXPROCS(0), n/(parallelParseMin/2))
	if n < parallelParseMin || parts < 2 {
		parse(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { parse(p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
}

// foldChunk folds a parsed chunk into r. From the first envelope that did
// not parse on, the restorer parses again itself, so the error it reports
// is the one a one-by-one restore reports.
func foldChunk(r *session.Restorer, c *parsedChunk) error {
	good := len(c.envelopes)
	for k, err := range c.errs {
		if err != nil {
			good = k
			break
		}
	}
	if c.events == nil { // covered by the checkpoint: not parsed
		return r.Add(c.envelopes)
	}
	if err := r.AddEvents(c.events[:good]); err != nil {
		return err
	}
	return r.Add(c.envelopes[good:])
}
