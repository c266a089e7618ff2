package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. The end is the
// stored next_seq, or for a read handle opened on a torn log the end of the
// valid prefix until the tail has been cut. Every row is checked
// (CORRUPT_LOG naming its seq when it does not hold a canonical envelope
// of that seq). Each chunk is fresh and fn may keep it; fn runs while the
// backend holds no connection.
func (b *Backend) Read(ctx context.Context, handle string, offset sdk.Offset, length int64, fn func(events [][]byte) error) error {
	if err := handles.Ended(ctx, op, "read"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	hd, err := b.handles.Get(handle)
	if err != nil {
		return err
	}
	if err := handles.CheckRead(hd.id, offset, length); err != nil {
		return err
	}
	b.mu.Lock()
	cache, cacheRev := hd.cache, hd.cacheRev
	hd.cache = nil // used by the first Read only
	b.mu.Unlock()
	end, r, err := b.end(ctx, st, hd, true)
	if err != nil || end == 0 {
		return err
	}
	stop := handles.ReadEnd(offset, length, end)
	// The Open scan's envelopes serve the first Read while the revision is
	// the one they were read at: every change of the rows changes it.
	if cache == nil || stop > int64(len(cache)) || st.rev(r) != cacheRev {
		cache = nil
	}
	for seq := int64(offset); seq < stop; {
		if err := handles.Ended(ctx, op, "read"); err != nil {
			return err
		}
		var batch [][]byte
		if cache != nil {
			batch = cache[seq:min(stop, seq+readQueryEvents)]
		} else if batch, err = st.readRows(ctx, hd.id, seq, min(stop, seq+readQueryEvents)); err != nil {
			return err
		}
		for len(batch) > 0 {
			n, size := 0, 0
			for n < len(batch) && n < readChunkEvents && size < readChunkBytes {
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

// end returns how far hd may read, and its session's row: the stored
// next_seq, clamped for a read handle on a torn log while the revision is
// the one it was opened at. With advance it checks that the log did not
// shrink below what hd has seen (LOG_SHRANK) and records the new end. A
// pending create reads nothing.
func (b *Backend) end(ctx context.Context, st *store, hd *handle, advance bool) (int64, sessionRow, error) {
	b.mu.Lock()
	pending := hd.pending != nil
	b.mu.Unlock()
	if pending {
		return 0, sessionRow{}, nil
	}
	r, found, err := st.session(ctx, st.pool, hd.id, false)
	if err != nil {
		return 0, r, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !found {
		return 0, r, hd.view.Gone(op, hd.id)
	}
	end, err := hd.view.End(op, hd.id, r.nextSeq, st.rev(r), advance)
	return end, r, err
}

// readRows reads and checks the events [from, stop), fresh. A missing or
// bad row is CORRUPT_LOG naming its seq: it lies below next_seq, inside
// what was committed.
func (s *store) readRows(ctx context.Context, id string, from, stop int64) ([][]byte, error) {
	out := make([][]byte, 0, stop-from)
	want := from
	err := s.checkedRows(ctx, s.pool, id, "SELECT seq, zstd, envelope FROM "+s.q()+".events WHERE session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq", func(chunk []storedRow) error {
		for _, r := range chunk {
			if r.seq != want {
				return corruptAt(id, want, "the row of event seq %d is missing below next_seq in %s", want, s.where())
			}
			if r.reason != "" {
				return corruptAt(id, r.seq, "the row of event seq %d in %s: %s", r.seq, s.where(), r.reason)
			}
			out = append(out, r.env)
			want++
		}
		return nil
	}, id, from, stop)
	if err != nil {
		return nil, err
	}
	if want < stop {
		return nil, corruptAt(id, want, "the row of event seq %d is missing below next_seq in %s", want, s.where())
	}
	return out, nil
}
