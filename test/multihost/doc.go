// Package multihost tests several `logbook serve` hosts sharing one
// PostgreSQL database (plugins/postgres): real serve processes with their
// real plugin subprocesses, a real database, real SIGKILLs.
//
//   - A session live on one host is ALREADY_OWNED on another, naming the
//     owner host.
//   - A client of either host follows a session that one of them writes
//     (the persistence Watch capability, LISTEN/NOTIFY).
//   - Failover: while clients append with flush and an expected seq, the
//     host that holds their sessions is killed with SIGKILL, and the
//     clients resume the sessions on another host. Every round checks that
//     each event a client saw acknowledged is stored exactly once at its
//     seq, that the resume closed the interrupted turn, and how long the
//     take-over took (kill → the other host's open succeeds).
//   - Operation ids: host A appends under operation ids and dies by
//     SIGKILL; on host B, which takes the session over, the retries are
//     replays with A's envelopes and other events under a held id are
//     OPERATION_CONFLICT.
//   - Fencing: the database terminates a host's ownership connection while
//     the host stays up; its next append is OWNERSHIP_LOST, another host
//     takes the session over, and the fenced host never writes again.
//
// The tests need the database of internal/pgtest (LOGBOOK_TEST_PG_DSN);
// under CI=true a missing one fails them. Each test works in a schema of
// its own and drops it.
package multihost
