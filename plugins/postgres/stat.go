package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Stat describes a stored session from its sessions row alone, no event
// read: header, revision, format version, EventCount = next_seq and
// SizeBytes = the bytes its header and its events rows store (compressed
// where they are), LastActivity = last_activity (the database's clock at
// the last write).
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	if err := handles.Ended(ctx, op, "stat"); err != nil {
		return sdk.Stat{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.Stat{}, err
	}
	r, found, err := st.session(ctx, st.pool, id, false)
	if err != nil {
		return sdk.Stat{}, err
	}
	if !found {
		return sdk.Stat{}, handles.NotFound(op, id)
	}
	h, err := st.header(r, id)
	if err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: h, Revision: st.rev(r), FormatVersion: h.FormatVersion, EventCount: r.nextSeq, SizeBytes: r.sizeBytes,
		LastActivity: max(r.activity, h.CreatedAt)}, nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this Backend, reading the sessions table a
// page at a time (one query per listPage sessions, none per session). A
// session whose row does not pass the format gate or the header check
// yields an entry with Err set; the others carry EventCount = next_seq and
// LastActivity as Stat's. fn runs while the backend holds no
// connection and may call b; an error from fn ends the listing and is
// returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	l := handles.NewLister(ctx, op, b.pending.Pending(func(_ string, hd *handle) (sdk.Header, bool) { return hd.header, true }), fn)
	after, first := "", true
	for {
		page, err := st.sessions(ctx, after, first)
		if err != nil {
			return err
		}
		for _, s := range page {
			e := sdk.ListEntry{ID: s.id, EventCount: -1}
			if h, err := st.header(s.sessionRow, s.id); err != nil {
				e.Err = err
			} else {
				e.Header, e.Revision = h, st.rev(s.sessionRow)
				e.EventCount, e.LastActivity = s.nextSeq, max(s.activity, h.CreatedAt)
			}
			if err := l.Stored(e); err != nil {
				return err
			}
		}
		if len(page) < listPage {
			break
		}
		after, first = page[len(page)-1].id, false
	}
	return l.Done()
}

// listed is one sessions row with its id.
type listed struct {
	id string
	sessionRow
}

// sessions reads one page of sessions rows in id order: from the start,
// or with ids after after.
func (s *store) sessions(ctx context.Context, after string, first bool) ([]listed, error) {
	rows, err := s.pool.Query(ctx, "SELECT id, "+sessionCols+" FROM "+s.q()+".sessions WHERE $1 OR id > $2 ORDER BY id LIMIT $3", first, after, listPage)
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	defer rows.Close()
	var page []listed
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.id, &l.header, &l.nextSeq, &l.incarnation, &l.revision, &l.sizeBytes, &l.epoch, &l.host, &l.activity); err != nil {
			return nil, s.dbErr(ctx, "", "list", err)
		}
		page = append(page, l)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	return page, nil
}
