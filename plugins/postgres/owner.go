package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
)

// ownerTimeout bounds one statement on the ownership connection. Those
// statements never wait for a lock (pg_try_advisory_lock), so only a
// broken connection takes this long; the caller's context is not used,
// because cancelling a statement can close the connection and with it
// every claim it holds.
const ownerTimeout = 30 * time.Second

// owners holds a Backend's write claims: session-level advisory locks, all
// on one dedicated connection (the ownership connection) outside the
// pool, so that the number of sessions a host writes is not bounded by
// max_conns. A lock lives as long as that connection: when it dies (the
// server terminated it, the network failed), every claim on it is gone,
// and the handles that held them can never write again (see holds in
// append.go). The next claim opens a new connection.
type owners struct {
	s  *store
	mu sync.Mutex
	oc *ownerConn // nil until the first claim and after a failure
}

// ownerConn is one ownership connection; handles keep the one their claim
// is on.
type ownerConn struct {
	c   *pgx.Conn
	pid uint32 // its server process, which pg_locks names as the holder
}

// current returns the live ownership connection, connecting when there
// is none. o.mu is held.
func (o *owners) current(ctx context.Context) (*ownerConn, error) {
	if o.oc != nil && !o.oc.c.IsClosed() {
		return o.oc, nil
	}
	o.oc = nil
	cc, err := pgx.ParseConfig(o.s.dsn)
	if err != nil {
		return nil, o.s.dbErr(ctx, "", "configuring the ownership connection", err)
	}
	runtimeParams(cc, ownerAppName(o.s.host))
	c, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, o.s.dbErr(ctx, "", "opening the ownership connection", err)
	}
	o.oc = &ownerConn{c: c, pid: c.PgConn().PID()}
	return o.oc, nil
}

// ownerAppName is the application_name of a host's ownership connection,
// as pg_stat_activity shows it.
func ownerAppName(host string) string {
	return appName("logbook owner " + host)
}

// lock tries to take the advisory lock key without waiting. It returns
// the connection holding it, or got false when another connection holds
// it. A connection found dead is replaced once.
func (o *owners) lock(ctx context.Context, key int64) (oc *ownerConn, got bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, o.s.dbErr(ctx, "", "claiming", err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for attempt := 0; ; attempt++ {
		oc, err := o.current(ctx)
		if err != nil {
			return nil, false, err
		}
		qctx, cancel := context.WithTimeout(context.Background(), ownerTimeout)
		err = oc.c.QueryRow(qctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&got)
		cancel()
		if err == nil {
			return oc, got, nil
		}
		o.drop(oc)
		if attempt > 0 {
			return nil, false, o.s.dbErr(ctx, "", "taking the write claim", err)
		}
	}
}

// unlock releases the advisory lock key that oc holds, if oc is still the
// live ownership connection (a dead one holds nothing). When the release
// fails, the connection is closed, which releases it too.
func (o *owners) unlock(oc *ownerConn, key int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.oc != oc || oc.c.IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ownerTimeout)
	defer cancel()
	var released bool
	if err := oc.c.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", key).Scan(&released); err != nil || !released {
		o.drop(oc)
	}
}

// drop closes oc and forgets it. o.mu is held.
func (o *owners) drop(oc *ownerConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = oc.c.Close(ctx)
	if o.oc == oc {
		o.oc = nil
	}
}

// close closes the ownership connection, releasing every claim.
func (o *owners) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.oc != nil {
		o.drop(o.oc)
	}
}

// heldSQL is the condition that the advisory lock ($key as its two
// halves $hi, $lo) is granted to the server process $pid: a statement of
// an append or flush checks it in its own transaction.
func heldSQL(pid, hi, lo string) string {
	return "EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = " + pid +
		" AND classid = " + hi + "::bigint::oid AND objid = " + lo + "::bigint::oid)"
}

// keyHalves splits an advisory lock key as pg_locks shows it.
func keyHalves(key int64) (hi, lo int64) {
	return int64(uint64(key) >> 32), int64(uint64(key) & 0xffffffff)
}

// lostErr is the OWNERSHIP_LOST of a handle whose claim is gone.
func lostErr(id, why string) *sdk.Error {
	return newErr(sdk.CodeOwnershipLost, id, "the write claim on this session is lost: %s; this handle can never write again; open the session again", why)
}
