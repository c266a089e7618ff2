package sqlite

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Read calls fn with consecutive chunks of the events [offset,
// min(offset+length, end)); length -1 reads to the end. The end is the
// stored next_seq, or for a read handle opened on a torn log the end of the
// valid prefix until the tail has been cut. Each chunk is fresh and fn may
// keep it; fn runs while the backend holds nothing.
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
	cache, cacheRev, cacheData := hd.cache, hd.cacheRev, hd.cacheData
	hd.cache = nil // used by the first Read only
	b.mu.Unlock()
	end, r, err := b.end(ctx, st, hd, true)
	if err != nil || end == 0 {
		return err
	}
	stop := handles.ReadEnd(offset, length, end)
	fetch := func(seq, stop int64) ([][]byte, error) { return st.readChunk(ctx, hd.id, seq, stop) }
	if cache != nil && stop <= int64(len(cache)) && st.revision(r) == cacheRev {
		// The rows are those the Open scan decoded when this connection
		// has not appended to or cut the session since (same revision),
		// and no other connection has committed anything (same
		// data_version).
		var dv int64
		if err := st.stmts.dataVersion.QueryRowContext(ctx).Scan(&dv); err == nil && dv == cacheData {
			fetch = func(seq, stop int64) ([][]byte, error) { return cache[seq:stop], nil }
		}
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
		if r, found, err = st.session(ctx, st.stmts.session, hd.id); err != nil {
			return sqlstore.Stored{}, st.dbErr(ctx, hd.id, "reading the session", err)
		}
		return sqlstore.Stored{NextSeq: r.nextSeq, Revision: st.revision(r), Found: found}, nil
	}, advance)
	return end, r, err
}

// readChunk reads the events [from, min(stop, from+sqlstore.ChunkEvents))
// up to about sqlstore.ChunkBytes and returns their envelopes, fresh. A missing or
// undecodable row is CORRUPT_LOG naming its seq: it lies below next_seq,
// inside what was committed.
func (s space) readChunk(ctx context.Context, id string, from, stop int64) ([][]byte, error) {
	rows, err := s.stmts.events.QueryContext(ctx, s.tenant, id, from, stop, sqlstore.ChunkEvents)
	if err != nil {
		return nil, s.dbErr(ctx, id, "read", err)
	}
	defer rows.Close()
	var (
		out  [][]byte
		size int
		raw  rawRow
		sc   scratch
	)
	want := from
	for size < sqlstore.ChunkBytes && rows.Next() {
		if err := scanRow(rows, &raw); err != nil {
			return nil, s.dbErr(ctx, id, "read", err)
		}
		if raw.seq != want {
			return nil, corruptAt(id, want, "the row of event %d is missing below next_seq", want)
		}
		r, rerr := s.codec.decode(&raw, &sc)
		if rerr != nil {
			return nil, corruptAt(id, want, "the row of event %d does not decode: %s", want, rerr.reason)
		}
		ev := r.appendEnvelope(make([]byte, 0, r.envelopeLen()))
		out = append(out, ev[:len(ev):len(ev)])
		size += len(ev)
		want++
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, id, "read", err)
	}
	if len(out) == 0 {
		return nil, corruptAt(id, want, "the row of event %d is missing below next_seq", want)
	}
	return out, nil
}
