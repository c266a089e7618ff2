package transfer

import (
	"bytes"
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// ReadChunk is how many events one Read of a copy or a comparison asks for.
const ReadChunk = 1024

// Stored is a session opened on one backend: read-only by OpenStored, for
// write by a copy. It is not safe for concurrent use.
type Stored struct {
	p sdk.Persistence
	o sdk.Opened
}

// OpenStored opens session id read-only on p. The session id is checked
// first (SESSION_ID_INVALID); a session p does not hold is
// SESSION_NOT_FOUND. Close releases the handle.
func OpenStored(ctx context.Context, p sdk.Persistence, id string) (*Stored, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, err
	}
	o, err := p.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return nil, err
	}
	return &Stored{p: p, o: o}, nil
}

// Close releases the handle. A read handle holds nothing worth an error, so
// a failure to close it is ignored.
func (l *Stored) Close() { _ = l.p.Close(context.Background(), l.o.Handle) }

// Header returns the stored session header.
func (l *Stored) Header() sdk.Header { return l.o.Header }

// Len returns the number of valid stored events at open.
func (l *Stored) Len() int64 { return int64(l.o.NextSeq) }

// Torn returns the torn tail the open found: what a write open would cut
// (read-only) or what it cut (write).
func (l *Stored) Torn() sdk.Torn { return l.o.Torn }

// Read calls fn with the envelopes [from, to) in consecutive chunks, which
// fn may keep; nothing when to ≤ from.
func (l *Stored) Read(ctx context.Context, from, to int64, fn func([][]byte) error) error {
	if to <= from {
		return nil
	}
	return l.p.Read(ctx, l.o.Handle, sdk.Offset(from), to-from, fn)
}

// ReadAll returns the envelopes [from, to).
func (l *Stored) ReadAll(ctx context.Context, from, to int64) ([][]byte, error) {
	var out [][]byte
	err := l.Read(ctx, from, to, func(c [][]byte) error {
		out = append(out, c...)
		return nil
	})
	return out, err
}

// List returns the entries of the sessions stored on p, in p's order; a
// session p cannot read is an entry with Err.
func List(ctx context.Context, p sdk.Persistence) ([]sdk.ListEntry, error) {
	var out []sdk.ListEntry
	err := p.List(ctx, func(e sdk.ListEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// firstDifference compares the envelopes [0, n) of two stored logs chunk
// by chunk and returns the first seq where they are not byte-equal, or -1.
func firstDifference(ctx context.Context, x, y *Stored, n int64) (int64, error) {
	for off := int64(0); off < n; off += ReadChunk {
		end := min(off+ReadChunk, n)
		xs, err := x.ReadAll(ctx, off, end)
		if err != nil {
			return -1, err
		}
		ys, err := y.ReadAll(ctx, off, end)
		if err != nil {
			return -1, err
		}
		for i := range xs {
			if i >= len(ys) || !bytes.Equal(xs[i], ys[i]) {
				return off + int64(i), nil
			}
		}
	}
	return -1, nil
}
