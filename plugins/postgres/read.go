package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
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
	fetch := func(seq, stop int64) ([][]byte, error) { return st.fetch(ctx, hd.id, seq, stop) }
	// The Open scan's envelopes serve the first Read while the revision is
	// the one they were read at: every change of the rows changes it.
	if cache != nil && stop <= int64(len(cache)) && st.rev(r) == cacheRev {
		fetch = func(seq, stop int64) ([][]byte, error) { return cache[seq:stop], nil }
	}
	return sqlstore.ReadRange(ctx, op, "read", int64(offset), stop, fetch, fn)
}

// end returns how far hd may read, and its session's row
// (sqlstore.End).
func (b *Backend) end(ctx context.Context, st space, hd *handle, advance bool) (int64, sessionRow, error) {
	var r sessionRow
	end, err := sqlstore.End(op, hd.id, &b.mu, &hd.view, func() bool { return hd.pending != nil }, func() (sqlstore.Stored, error) {
		var found bool
		var err error
		r, found, err = st.session(ctx, st.pool, hd.id, false)
		return sqlstore.Stored{NextSeq: r.nextSeq, Revision: st.rev(r), Found: found}, err
	}, advance)
	return end, r, err
}

// fetch reads and checks the events from seq on, up to readQueryEvents of
// them and not past stop (readRows).
func (s space) fetch(ctx context.Context, id string, seq, stop int64) ([][]byte, error) {
	return s.readRows(ctx, id, seq, min(stop, seq+readQueryEvents))
}

// readRows reads and checks the events [from, stop), fresh. A missing or
// bad row is CORRUPT_LOG naming its seq: it lies below next_seq, inside
// what was committed.
func (s space) readRows(ctx context.Context, id string, from, stop int64) ([][]byte, error) {
	out := make([][]byte, 0, stop-from)
	want := from
	err := s.checkedRows(ctx, s.pool, id, "SELECT seq, zstd, envelope FROM "+s.q()+".events WHERE tenant = $4 AND session_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq", func(chunk []storedRow) error {
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
	}, id, from, stop, s.tenant)
	if err != nil {
		return nil, err
	}
	if want < stop {
		return nil, corruptAt(id, want, "the row of event seq %d is missing below next_seq in %s", want, s.where())
	}
	return out, nil
}
