package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// ListPage is how many sessions rows one List query reads.
const ListPage = 256

// Stat implements sdk.Persistence.Stat: after ctx, the backend's store
// (open) and the session id are checked, describe says what the store
// holds of id.
func Stat[S any](ctx context.Context, op, id string, open func() (S, error), describe func(st S, ctx context.Context, id string) (Session, error)) (sdk.Stat, error) {
	if err := handles.Ended(ctx, op, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	st, err := open()
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	s, err := describe(st, ctx, id)
	if err != nil {
		return sdk.Stat{}, err
	}
	return s.Stat()
}

// List implements sdk.Persistence.List: fn gets, in id order, every
// stored session and every pending create (pending, as
// handles.Claims.Pending lists them), after ctx and the backend's store
// (open) are checked. The stored ones are read a page at a time: page
// returns the entries of at most ListPage sessions rows with ids after
// after (from the first when first is set), in id order. fn runs while
// page holds nothing; an error of fn ends the listing and is returned as
// is.
func List[S any](ctx context.Context, op string, fn func(sdk.ListEntry) error, open func() (S, error), pending func() []sdk.ListEntry, page func(st S, ctx context.Context, after string, first bool) ([]sdk.ListEntry, error)) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	st, err := open()
	if err != nil {
		return err
	}
	l := handles.NewLister(ctx, op, pending(), fn)
	after, first := "", true
	for {
		entries, err := page(st, ctx, after, first)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := l.Stored(e); err != nil {
				return err
			}
		}
		if len(entries) < ListPage {
			break
		}
		after, first = entries[len(entries)-1].ID, false
	}
	return l.Done()
}

// Session is what a Stat or a List entry says of a stored session.
type Session struct {
	// ID is the session's id.
	ID string
	// Header is its header; unset when Err is.
	Header sdk.Header
	// Err is why the session does not load (the format gate, the header
	// check, rows that do not match next_seq); nil when it loads.
	Err error
	// Revision is its revision string.
	Revision string
	// NextSeq is its stored next_seq, the EventCount.
	NextSeq int64
	// SizeBytes is what its rows store, or -1 when the backend keeps no
	// size.
	SizeBytes int64
	// Activity is the time of its last write in Unix milliseconds, or 0
	// when the backend knows none; the header's creation time when later.
	Activity int64
}

// Entry is the List entry of s: with Err set and EventCount -1 when s
// does not load.
func (s Session) Entry() sdk.ListEntry {
	e := sdk.ListEntry{ID: s.ID, EventCount: -1}
	if s.Err != nil {
		e.Err = s.Err
		return e
	}
	e.Header, e.Revision = s.Header, s.Revision
	e.EventCount, e.LastActivity = s.NextSeq, max(s.Activity, s.Header.CreatedAt)
	return e
}

// Stat is the sdk.Stat of s, or s.Err.
func (s Session) Stat() (sdk.Stat, error) {
	if s.Err != nil {
		return sdk.Stat{}, s.Err
	}
	return sdk.Stat{Header: s.Header, Revision: s.Revision, FormatVersion: s.Header.FormatVersion, EventCount: s.NextSeq,
		SizeBytes: s.SizeBytes, LastActivity: max(s.Activity, s.Header.CreatedAt)}, nil
}
