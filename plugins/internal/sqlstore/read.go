package sqlstore

import (
	"context"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// A chunk handed to a Read or ReadDamaged callback ends after ChunkEvents
// events or once it holds ChunkBytes bytes, whichever comes first; it
// always holds at least one event.
const (
	ChunkEvents = 512
	ChunkBytes  = 1 << 20
)

// ReadRange calls fn with the events [from, stop) in consecutive chunks
// (ChunkEvents, ChunkBytes). fetch(seq, stop) returns the events from seq
// on, at least one and at most stop-seq; ReadRange may hand them on in
// several chunks, which alias what fetch returned. Before each chunk it
// checks ctx (handles.Ended, naming what). An error of fetch or fn is
// returned as is.
func ReadRange(ctx context.Context, op, what string, from, stop int64, fetch func(seq, stop int64) ([][]byte, error), fn func(events [][]byte) error) error {
	for seq := from; seq < stop; {
		if err := handles.Ended(ctx, op, what); err != nil {
			return err
		}
		batch, err := fetch(seq, stop)
		if err != nil {
			return err
		}
		for len(batch) > 0 {
			if err := handles.Ended(ctx, op, what); err != nil {
				return err
			}
			n, size := 0, 0
			for n < len(batch) && n < ChunkEvents && size < ChunkBytes {
				size += len(batch[n])
				n++
			}
			if err := fn(batch[:n:n]); err != nil {
				return err
			}
			batch, seq = batch[n:], seq+int64(n)
		}
	}
	return nil
}

// Stored is what End needs of a session's stored row.
type Stored struct {
	// NextSeq is the stored next_seq.
	NextSeq int64
	// Revision is the session's revision string.
	Revision string
	// Found is false when the session has no row.
	Found bool
}

// End returns how far a handle may read: 0 for a pending create (pending
// true under mu); else the stored next_seq that load reads, clamped by
// the handle's view v while it is on a torn log (handles.View.End, which
// with advance also checks that the log did not shrink and records the new
// end). A session without a row is the view's Gone error. v and pending
// are guarded by mu; load runs while mu is not held.
func End(op, id string, mu sync.Locker, v *handles.View, pending func() bool, load func() (Stored, error), advance bool) (int64, error) {
	mu.Lock()
	p := pending()
	mu.Unlock()
	if p {
		return 0, nil
	}
	s, err := load()
	if err != nil {
		return 0, err
	}
	mu.Lock()
	defer mu.Unlock()
	if !s.Found {
		return 0, v.Gone(op, id)
	}
	return v.End(op, id, s.NextSeq, s.Revision, advance)
}
