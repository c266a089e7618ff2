package sqlite

import (
	"context"
	"database/sql"
	"strings"
)

// statements are the prepared statements of the hot paths, prepared once
// on the store's one connection; transactions use them through
// tx.StmtContext, which reuses the preparation. Every statement but
// identity and dataVersion takes the tenant as the argument before the
// session id (space).
type statements struct {
	identity      *sql.Stmt // application_id, user_version
	session       *sql.Stmt // one sessions row by id
	insertSession *sql.Stmt
	insertEvent   *sql.Stmt // one row
	insertEvents  *sql.Stmt // insertRows rows
	advance       *sql.Stmt // next_seq and revision after an append
	events        *sql.Stmt // a window of events by seq
	dataVersion   *sql.Stmt // PRAGMA data_version
	stat          *sql.Stmt // session plus the count, lowest and highest seq of its rows, in one snapshot
}

const eventColumns = "seq, type, time, data, surface_op, source_event_seqs, ignorable, operation"

// insertRows is how many rows one execution of insertEvents inserts: one
// statement per row costs a bind-step-reset round of the driver each, which
// dominates an append of small events.
const insertRows = 32

func insertSQL(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO events(tenant, session_id, " + eventColumns + ") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	return b.String()
}

func (st *statements) prepare(ctx context.Context, s *store) error {
	for _, p := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&st.identity, "SELECT a.application_id, u.user_version FROM pragma_application_id AS a, pragma_user_version AS u"},
		{&st.session, "SELECT format_version, header, next_seq, incarnation, revision FROM sessions WHERE tenant = ? AND id = ?"},
		{&st.insertSession, "INSERT INTO sessions(tenant, id, format_version, created_at, header, next_seq, incarnation, revision) VALUES (?, ?, ?, ?, ?, 0, ?, 0)"},
		{&st.insertEvent, insertSQL(1)},
		{&st.insertEvents, insertSQL(insertRows)},
		{&st.advance, "UPDATE sessions SET next_seq = ?, revision = revision + 1 WHERE tenant = ? AND id = ? RETURNING revision"},
		{&st.dataVersion, "PRAGMA data_version"},
		{&st.stat, "SELECT s.format_version, s.header, s.next_seq, s.incarnation, s.revision, count(e.seq), coalesce(min(e.seq), -1), coalesce(max(e.seq), -1), " +
			lastTimeSQL + " FROM sessions AS s LEFT JOIN events AS e ON e.tenant = s.tenant AND e.session_id = s.id WHERE s.tenant = ? AND s.id = ? GROUP BY s.id"},
		{&st.events, "SELECT " + rowColumns + " FROM events WHERE tenant = ? AND session_id = ? AND seq >= ? AND seq < ? ORDER BY seq LIMIT ?"},
	} {
		stmt, err := s.db.PrepareContext(ctx, p.sql)
		if err != nil {
			return s.dbErr(ctx, "", "preparing "+p.sql, err)
		}
		*p.dst = stmt
	}
	return nil
}

// lastTimeSQL selects, for the sessions row s, the time of its last event
// (one lookup by primary key), or its created_at without events: the
// session's LastActivity.
const lastTimeSQL = "coalesce((SELECT l.time FROM events AS l WHERE l.tenant = s.tenant AND l.session_id = s.id AND l.seq = s.next_seq - 1), s.created_at)"

func (st *statements) close() {
	for _, stmt := range []*sql.Stmt{st.identity, st.session, st.insertSession, st.insertEvent, st.insertEvents, st.advance, st.events, st.dataVersion, st.stat} {
		if stmt != nil {
			stmt.Close()
		}
	}
}
