package postgres

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// sessionRow is one row of the sessions table.
type sessionRow struct {
	header      []byte
	nextSeq     int64
	incarnation string
	revision    int64
	sizeBytes   int64
	epoch       int64
	host        string
	activity    int64 // last_activity in Unix milliseconds
}

// sessionCols are the columns scanSession reads, in its order.
const sessionCols = "header, next_seq, incarnation, revision, size_bytes, owner_epoch, owner_host, (extract(epoch FROM last_activity) * 1000)::bigint"

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func scanSession(row pgx.Row, r *sessionRow, extra ...any) error {
	return row.Scan(append([]any{&r.header, &r.nextSeq, &r.incarnation, &r.revision, &r.sizeBytes, &r.epoch, &r.host, &r.activity}, extra...)...)
}

// session reads the sessions row of id.
func (s space) session(ctx context.Context, q querier, id string, lock bool) (sessionRow, bool, error) {
	var r sessionRow
	sql := "SELECT " + sessionCols + " FROM " + s.q() + ".sessions WHERE tenant = $2 AND id = $1"
	if lock {
		sql += " FOR UPDATE"
	}
	err := scanSession(q.QueryRow(ctx, sql, id, s.tenant), &r)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, s.dbErr(ctx, id, "reading the session", err)
	}
	return r, true, nil
}

// header decodes a sessions row's header: the format gate of
// docs/format.md first, then identity and shape; its tenant must be the
// row's, s's tenant (CORRUPT_LOG).
func (s space) header(r sessionRow, id string) (sdk.Header, error) {
	h, err := headerjson.Decode(r.header, id, s.where())
	if err != nil {
		return sdk.Header{}, err
	}
	return h, handles.StoredTenant(op, h, s.tenant, s.where())
}

func (s *store) rev(r sessionRow) string { return s.revision(r.incarnation, r.revision) }

// ownerOf describes who holds the write claim on id, for ALREADY_OWNED:
// the host the sessions row names, or that the session is being created.
func (s space) ownerOf(ctx context.Context, id string) string {
	var host string
	var epoch int64
	err := s.pool.QueryRow(ctx, "SELECT owner_host, owner_epoch FROM "+s.q()+".sessions WHERE tenant = $2 AND id = $1", id, s.tenant).Scan(&host, &epoch)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "another host is creating it (it is not stored yet)"
	case err != nil:
		return "another host holds its advisory lock"
	}
	return "host " + strconv.Quote(host) + " holds it (owner epoch " + strconv.FormatInt(epoch, 10) + ")"
}
