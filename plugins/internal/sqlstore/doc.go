// Package sqlstore is the scaffolding the SQL persistence backends
// (plugins/sqlite and plugins/postgres) share: the parts of an
// sdk.Persistence that do not depend on the database, written once.
//
// What it shares:
//
//   - Read: ReadRange cuts the events a backend fetches into the chunks a
//     Read callback gets (ChunkEvents, ChunkBytes) and checks the context
//     before each; End is how far a handle may read (a pending create
//     reads nothing; a read handle on a torn log is clamped by its view).
//   - Open's torn-row scan: Scan wraps rowscan.Scan, refuses a negative
//     seq, and keeps the valid prefix's envelopes (up to KeepBytes) for
//     the first Read of the opened handle.
//   - Stat and List: the checks every call starts with, the paging of
//     List (ListPage rows a query) and the entries (Session).
//   - Watch: the loop that reports a session's growing length.
//   - Salvage: ReadDamaged and the digest of an audit record (Record),
//     over the backend's damage scan.
//   - The delete capability: Delete, SetHold, Held and Audit over the
//     tables sessions, holds and an audit log (Lifecycle).
//   - CopyPrefix and Import: Materialize, the frame of a create stored
//     whole in one transaction that is abandoned on failure.
//   - Tenants: a Dialect is one tenant's view of the database (Tenant),
//     and every statement of the shared code is scoped by it (Scope);
//     Views keeps a backend's views, one per tenant name, Tenant hands
//     them out, and Tenants lists the named tenants (TenantsQuery). sqlstoretest checks that
//     every call of a view reads and writes its tenant's rows only.
//   - Errors: DBErr maps a driver error to an *sdk.Error (a passed-through
//     *sdk.Error, an ended context, the backend's codes, else IO_ERROR);
//     NewErr and CorruptAt build the backend's own.
//
// What each backend supplies: its Dialect (its Op, how its driver's
// errors map to codes and what their causes may show, how a table and a
// placeholder are spelled, a query outside a transaction), and for each
// capability the parts that touch its database: the fetch of a run of
// checked envelopes, the damage scan in one snapshot, the length of a
// session and what wakes a watch (a timer for SQLite, LISTEN/NOTIFY for
// PostgreSQL), its transactions, its audit columns, and its write claims
// (a lock file, an advisory lock). The handle tables, the claims, the
// append path and the schema stay in each backend: they differ.
//
// The package imports no database driver: *sql.Row and *sql.Rows of
// database/sql and pgx's rows are both a Row and a Rows, and a backend
// adapts its transaction type to Tx. Go's internal rule keeps the package
// importable only by the plugins.
package sqlstore
