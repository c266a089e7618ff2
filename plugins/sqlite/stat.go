package sqlite

import (
	"context"
	"database/sql"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
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
	return sqlstore.Stat(ctx, op, id, b.store, (space).stat)
}

// stat reads the sessions row of id with the statistics of its rows, in
// one snapshot.
func (s space) stat(ctx context.Context, id string) (sqlstore.Session, error) {
	l := listed{id: id}
	err := s.stmts.stat.QueryRowContext(ctx, s.tenant, id).Scan(&l.formatVersion, &l.header, &l.nextSeq, &l.incarnation, &l.revision, &l.rows.count, &l.rows.lo, &l.rows.hi, &l.lastTime)
	if err == sql.ErrNoRows {
		return sqlstore.Session{}, handles.NotFound(op, id)
	}
	if err != nil {
		return sqlstore.Session{}, s.dbErr(ctx, id, "stat", err)
	}
	return s.described(ctx, l), nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this Backend. A session whose row does not pass
// the format gate or the header check, or whose rows do not match its
// next_seq (checkRows), yields an entry with Err set; the others carry
// EventCount = next_seq and LastActivity as Stat's. fn runs
// while the backend holds nothing and may call b; an error from fn ends the
// listing and is returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	return sqlstore.List(ctx, op, fn, b.store, b.pendingEntries, (space).list)
}

// pendingEntries lists b's pending creates.
func (b *Backend) pendingEntries() []sdk.ListEntry {
	return b.pending.Pending(func(_ string, hd *handle) (sdk.Header, bool) { return hd.header, true })
}

// list is one page of List (sqlstore.List): the entries of the sessions
// rows with ids after after.
func (s space) list(ctx context.Context, after string, _ bool) ([]sdk.ListEntry, error) {
	page, err := s.sessions(ctx, after)
	if err != nil {
		return nil, err
	}
	entries := make([]sdk.ListEntry, len(page))
	for i, l := range page {
		entries[i] = s.described(ctx, l).Entry()
	}
	return entries, nil
}

// described is what Stat and List say of the sessions row l: its header
// past the format gate and the header check, and rows that match its
// next_seq (checkRows), or the error of the first that fails. The schema
// keeps no size (SizeBytes -1: summing the rows would read every event).
func (s space) described(ctx context.Context, l listed) sqlstore.Session {
	d := sqlstore.Session{ID: l.id, Revision: s.revision(l.sessionRow), NextSeq: l.nextSeq, SizeBytes: -1, Activity: l.lastTime}
	if d.Header, d.Err = s.header(l.sessionRow, l.id); d.Err == nil {
		d.Err = s.checkRows(ctx, l.id, l.nextSeq, l.rows)
	}
	return d
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
func (s space) sessions(ctx context.Context, after string) ([]listed, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT s.id, s.format_version, s.header, s.next_seq, s.incarnation, s.revision,
		count(e.seq), coalesce(min(e.seq), -1), coalesce(max(e.seq), -1), `+lastTimeSQL+`
		FROM (SELECT * FROM sessions WHERE tenant = ? AND id > ? ORDER BY id LIMIT ?) AS s LEFT JOIN events AS e ON e.tenant = s.tenant AND e.session_id = s.id
		GROUP BY s.id ORDER BY s.id`, s.tenant, after, sqlstore.ListPage)
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	defer rows.Close()
	page, err := sqlstore.Collect(rows, func(row sqlstore.Row) (listed, error) {
		var l listed
		err := row.Scan(&l.id, &l.formatVersion, &l.header, &l.nextSeq, &l.incarnation, &l.revision, &l.rows.count, &l.rows.lo, &l.rows.hi, &l.lastTime)
		return l, err
	})
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	return page, nil
}
