package store

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// View restores session id read-only as its log stands — no closers, no
// marker — or, with at, as it was right after event *at: the prefix
// [0, *at], whose lineage comes from the markers it holds. A session live in
// this store is viewed from its in-memory log, any other from the primary,
// read-only beside a writer; nothing is written. The view restores with the
// store's plugin types and projections, like Open. at past the last event is
// INVALID_BOUNDARY. The Torn it returns is the torn tail the stored log ends
// in — what a write open would cut, left out of the view — and zero for a
// live session.
func (st *Store) View(ctx context.Context, id string, at *sdk.Seq) (*session.Session, sdk.Torn, error) {
	ro := session.RestoreOptions{Source: session.FromStorage, ReadOnly: true, Prefix: at != nil}
	if s, ok := st.Get(id); ok {
		events := s.Events().Slice()
		n, err := viewLength(id, int64(len(events)), at)
		if err != nil {
			return nil, sdk.Torn{}, err
		}
		v, err := session.RestoreEvents(ctx, st.sessionOptions(s.Header(), nil), ro, events[:n])
		return v, sdk.Torn{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, sdk.Torn{}, err
	}
	p, ok := st.primary()
	if !ok {
		return nil, sdk.Torn{}, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "view", SessionID: id, Detail: "no persistence backend is configured"}
	}
	o, err := p.Persistence.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return nil, sdk.Torn{}, err
	}
	b := &backend{name: p.Name, p: p.Persistence, handle: o.Handle}
	defer st.closeBackends([]*backend{b})
	n, err := viewLength(id, int64(o.NextSeq), at)
	if err != nil {
		return nil, sdk.Torn{}, err
	}
	v, _, err := st.restoreLog(ctx, b, o, st.sessionOptions(o.Header, nil), ro, n)
	if err != nil {
		return nil, sdk.Torn{}, err
	}
	return v, o.Torn, nil
}

// viewLength is how many events a view of a log of n events holds: all of
// them, or the prefix up to and including *at.
func viewLength(id string, n int64, at *sdk.Seq) (int64, error) {
	if at == nil {
		return n, nil
	}
	if int64(*at) >= n {
		last := "none"
		if n > 0 {
			last = strconv.FormatInt(n-1, 10)
		}
		return 0, sdk.Errorf(sdk.CodeInvalidBoundary, "view", "seq %d is past the end of the log (last seq %s)", *at, last).WithSession(id).WithSeq(int64(*at))
	}
	return int64(*at) + 1, nil
}
