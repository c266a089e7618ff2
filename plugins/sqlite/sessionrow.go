package sqlite

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// sessionRow is one row of the sessions table.
type sessionRow struct {
	formatVersion int64
	header        []byte
	nextSeq       int64
	incarnation   string
	revision      int64
}

// session reads the sessions row of id with stmt (st.stmts.session, or
// its form in a transaction).
func (s space) session(ctx context.Context, stmt *sql.Stmt, id string) (sessionRow, bool, error) {
	var r sessionRow
	err := stmt.QueryRowContext(ctx, s.tenant, id).Scan(&r.formatVersion, &r.header, &r.nextSeq, &r.incarnation, &r.revision)
	if err == sql.ErrNoRows {
		return r, false, nil
	}
	return r, err == nil, err
}

// revision is docs/storage.md's <store_id>:<incarnation>:<revision>.
func (s *store) revision(r sessionRow) string {
	return s.id + ":" + r.incarnation + ":" + strconv.FormatInt(r.revision, 10)
}

// header applies the format gate of docs/format.md to sessions.format_version,
// then decodes the header column (its own version gate, identity and
// shape), whose tenant must be the row's, s's tenant (CORRUPT_LOG).
func (s space) header(r sessionRow, id string) (sdk.Header, error) {
	if _, err := sdk.CheckFormatVersion(id, strconv.FormatInt(r.formatVersion, 10), s.path); err != nil {
		return sdk.Header{}, err
	}
	h, err := headerjson.Decode(r.header, id, s.path)
	if err != nil {
		return sdk.Header{}, err
	}
	return h, handles.StoredTenant(op, h, s.tenant, strconv.Quote(s.path))
}
