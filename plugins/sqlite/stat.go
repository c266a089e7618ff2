package sqlite

import (
	"context"
	"database/sql"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Stat describes a stored session from its sessions row: header,
// revision, format version and EventCount = next_seq, once the count and
// seq range of its rows (from the primary key's index, no event is read)
// show that they match next_seq; a session whose rows do not is damaged
// and its Stat an error (see checkRows). SizeBytes is -1: the schema keeps
// no size, and summing the rows would read every event. LastActivity is
// the time of the last event (the envelope's), or the creation time
// without events.
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
	var r sessionRow
	var rs rowStats
	var last int64
	err = st.stmts.stat.QueryRowContext(ctx, id).Scan(&r.formatVersion, &r.header, &r.nextSeq, &r.incarnation, &r.revision, &rs.count, &rs.lo, &rs.hi, &last)
	if err == sql.ErrNoRows {
		return sdk.Stat{}, handles.NotFound(op, id)
	}
	if err != nil {
		return sdk.Stat{}, st.dbErr(ctx, id, "stat", err)
	}
	h, err := st.header(r, id)
	if err != nil {
		return sdk.Stat{}, err
	}
	if err := st.checkRows(ctx, id, r.nextSeq, rs); err != nil {
		return sdk.Stat{}, err
	}
	return sdk.Stat{Header: h, Revision: st.revision(r), FormatVersion: h.FormatVersion, EventCount: r.nextSeq, SizeBytes: -1,
		LastActivity: max(last, h.CreatedAt)}, nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this Backend. A session whose row does not pass
// the format gate or the header check, or whose rows do not match its
// next_seq (checkRows), yields an entry with Err set; the others carry
// EventCount = next_seq and LastActivity as Stat's. fn runs
// while the backend holds nothing and may call b; an error from fn ends the
// listing and is returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	if err := handles.Ended(ctx, op, "list"); err != nil {
		return err
	}
	st, err := b.store()
	if err != nil {
		return err
	}
	l := handles.NewLister(ctx, op, b.pending.Pending(func(_ string, hd *handle) (sdk.Header, bool) { return hd.header, true }), fn)
	after := ""
	for {
		page, err := st.sessions(ctx, after)
		if err != nil {
			return err
		}
		for _, s := range page {
			e := sdk.ListEntry{ID: s.id, EventCount: -1}
			if h, err := st.header(s.sessionRow, s.id); err != nil {
				e.Err = err
			} else if err := st.checkRows(ctx, s.id, s.nextSeq, s.rows); err != nil {
				e.Err = err
			} else {
				e.Header, e.Revision = h, st.revision(s.sessionRow)
				e.EventCount, e.LastActivity = s.nextSeq, max(s.lastTime, h.CreatedAt)
			}
			if err := l.Stored(e); err != nil {
				return err
			}
		}
		if len(page) < listPage {
			break
		}
		after = page[len(page)-1].id
	}
	return l.Done()
}

// listed is one sessions row with its id and the statistics of its rows.
type listed struct {
	id string
	sessionRow
	rows     rowStats
	lastTime int64 // lastTimeSQL
}

// sessions reads one page of sessions rows with ids after after, in id
// order, each with the statistics of its events rows.
func (s *store) sessions(ctx context.Context, after string) ([]listed, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT s.id, s.format_version, s.header, s.next_seq, s.incarnation, s.revision,
		count(e.seq), coalesce(min(e.seq), -1), coalesce(max(e.seq), -1), `+lastTimeSQL+`
		FROM (SELECT * FROM sessions WHERE id > ? ORDER BY id LIMIT ?) AS s LEFT JOIN events AS e ON e.session_id = s.id
		GROUP BY s.id ORDER BY s.id`, after, listPage)
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	defer rows.Close()
	var page []listed
	for rows.Next() {
		var l listed
		if err := rows.Scan(&l.id, &l.formatVersion, &l.header, &l.nextSeq, &l.incarnation, &l.revision, &l.rows.count, &l.rows.lo, &l.rows.hi, &l.lastTime); err != nil {
			return nil, s.dbErr(ctx, "", "list", err)
		}
		page = append(page, l)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	return page, nil
}
