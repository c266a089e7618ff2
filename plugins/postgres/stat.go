package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Stat describes a stored session from its sessions row alone, no event
// read: header, revision, format version, EventCount = next_seq and
// SizeBytes = the bytes its header and its events rows store (compressed
// where they are), LastActivity = last_activity (the database's clock at
// the last write).
func (b *Backend) Stat(ctx context.Context, id string) (sdk.Stat, error) {
	return sqlstore.Stat(ctx, op, id, b.store, (space).stat)
}

// stat reads the sessions row of id.
func (s space) stat(ctx context.Context, id string) (sqlstore.Session, error) {
	r, found, err := s.session(ctx, s.pool, id, false)
	if err != nil {
		return sqlstore.Session{}, err
	}
	if !found {
		return sqlstore.Session{}, handles.NotFound(op, id)
	}
	return s.described(listed{id: id, sessionRow: r}), nil
}

// List calls fn, in id order, for every stored session and every
// unmaterialized create of this Backend, reading the sessions table a
// page at a time (one query per sqlstore.ListPage sessions, none per
// session). A session whose row does not pass the format gate or the
// header check yields an entry with Err set; the others carry EventCount
// = next_seq and LastActivity as Stat's. fn runs while the backend holds
// no connection and may call b; an error from fn ends the listing and is
// returned as is.
func (b *Backend) List(ctx context.Context, fn func(sdk.ListEntry) error) error {
	return sqlstore.List(ctx, op, fn, b.store, b.pendingEntries, (space).list)
}

// pendingEntries lists b's pending creates.
func (b *Backend) pendingEntries() []sdk.ListEntry {
	return b.pending.Pending(func(_ string, hd *handle) (sdk.Header, bool) { return hd.header, true })
}

// list is one page of List (sqlstore.List): the entries of the sessions
// rows from the first, or with ids after after.
func (s space) list(ctx context.Context, after string, first bool) ([]sdk.ListEntry, error) {
	page, err := s.sessions(ctx, after, first)
	if err != nil {
		return nil, err
	}
	entries := make([]sdk.ListEntry, len(page))
	for i, l := range page {
		entries[i] = s.described(l).Entry()
	}
	return entries, nil
}

// described is what Stat and List say of the sessions row l: its header
// past the format gate and the header check, or the check's error;
// SizeBytes the bytes its header and its events rows store (compressed
// where they are), Activity last_activity (the database's clock at the
// last write).
func (s space) described(l listed) sqlstore.Session {
	d := sqlstore.Session{ID: l.id, Revision: s.rev(l.sessionRow), NextSeq: l.nextSeq, SizeBytes: l.sizeBytes, Activity: l.activity}
	d.Header, d.Err = s.header(l.sessionRow, l.id)
	return d
}

// listed is one sessions row with its id.
type listed struct {
	id string
	sessionRow
}

// sessions reads one page of sessions rows in id order: from the start,
// or with ids after after.
func (s space) sessions(ctx context.Context, after string, first bool) ([]listed, error) {
	rows, err := s.pool.Query(ctx, "SELECT "+sessionCols+", id FROM "+s.q()+".sessions WHERE tenant = $4 AND ($1 OR id > $2) ORDER BY id LIMIT $3", first, after, sqlstore.ListPage, s.tenant)
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	defer rows.Close()
	page, err := sqlstore.Collect(rows, func(row sqlstore.Row) (listed, error) {
		var l listed
		err := scanSession(row, &l.sessionRow, &l.id)
		return l, err
	})
	if err != nil {
		return nil, s.dbErr(ctx, "", "list", err)
	}
	return page, nil
}
