// Package sqlite is logbook's SQLite persistence backend (docs/plugins.md, docs/storage.md):
// a complete sdk.Persistence over one database file, through
// modernc.org/sqlite (pure Go) and database/sql. The logbook binary serves
// it as `logbook plugin sqlite` (ServeConfig); cmd/logbook-sqlite is the
// same plugin as a binary of its own.
//
// # On-disk format
//
// The database is identified by PRAGMA application_id = 1280264002
// (0x4C4F4742, "LOGB") and PRAGMA user_version = 4, and holds exactly the
// schema of docs/storage.md:
//
//	store_state(singleton = 1, store_id)          one row; store_id is a random UUID
//	sessions(tenant, id, format_version, created_at, header, next_seq, incarnation, revision)
//	events(tenant, session_id, seq, type, time, data, surface_op, source_event_seqs, ignorable, operation)
//	audit(id, tenant, time_us, op, session_id, events, digest, reason, actor)   the audit log (version 2)
//	holds(tenant, session_id)                     sessions under a legal hold (version 2)
//
// tenant (version 4) is empty for the implicit tenant and the tenant's name
// otherwise, first in every key: a Backend is one tenant's view, and
// Tenant returns the others' (sdk.Tenancy; space.go).
//
// All tables are STRICT. A session row holds the canonical header
// JSON (sdk/headerjson, the JSONL header line), its logbook format version
// (1), next_seq (the committed event count), a random incarnation UUID made
// when the session was stored, and a revision counter. One events row per
// event: an envelope (docs/format.md) split into its members. type and time are
// columns; data is the canonical JSON of the data member as TEXT, or, when
// it is compress_min_bytes (default 256) or more and compress_data is on,
// a zstd frame of it
// (level 3, content checksum) stored as a BLOB when the frame is smaller;
// surface_op and source_event_seqs hold the canonical JSON of those members
// or NULL; ignorable is 1 or NULL; operation holds the canonical JSON of
// the operation member (version 3) or NULL. Reading reassembles the envelope in the
// member order of docs/format.md, byte-equal to the one appended: Append accepts
// only envelopes that reassemble to exactly their own bytes (canonical JSON,
// members in order, nothing else), and refuses the rest as
// ENVELOPE_INVALID.
//
// Beside the database file:
//
//	<path>.locks/<enc(id)>.lock               flock target of the write claim (0700 dir, 0600 files, never deleted)
//	<path>.torn/<enc(id)>.<epoch ms>.jsonl    rows a write open cut (0700 dir, 0600 files)
//	<path>.locks/<tenant>/, <path>.torn/<tenant>/   the same for a named tenant's sessions
//
// enc(id) is the file-name encoding of docs/storage.md; a torn-row file's
// name is shortened with a hash when it would pass 255 bytes
// (durable.FitName, artifactName).
//
// # Opening
//
// The file-safety rules of docs/storage.md come first, each refusal a
// CONFIG_INVALID that says how to fix it: the parent directory is not group-
// or world-writable; the database (and an existing -wal, -shm or -journal
// file) is a regular file, not a symlink, owned by this user, without group
// or other permission bits; a missing directory of the database is created
// with mode 0700 (with its missing ancestors, each parent synced), as the
// JSONL backend creates its root; a new database is created with O_EXCL,
// mode 0600, and its directory synced. The connection is opened with
// busy_timeout, trusted_schema = OFF, foreign_keys = ON and synchronous =
// FULL, each read back. Inside BEGIN IMMEDIATE a pristine database
// (application_id 0, user_version 0, no schema objects) gets the schema, a
// store id and its identity pragmas; any other database must have
// application_id 1280264002, user_version 4 (or 1, 2 or 3, migrated in
// that transaction: the tables and columns of versions 2 and 3, then the
// tables keyed by session rebuilt with their tenant column) and
// schema objects equal to the
// reference DDL (compared after normalizing whitespace, comments and case;
// SQLite's statistics tables are ignored), or Open fails with
// SCHEMA_MISMATCH naming what it found. Only then is journal_mode set (wal
// by default; memory for ":memory:") and read back, so a foreign database
// is never converted. A file that is not an SQLite database is
// SCHEMA_MISMATCH too.
//
// # Operations
//
//   - Append: one BEGIN IMMEDIATE transaction per batch with prepared
//     statements (32 rows per INSERT): application_id and user_version
//     re-checked; a pending create is stored (a new incarnation, next_seq
//     0, revision 0); firstSeq compared with next_seq (SEQ_CONFLICT naming
//     both); the rows inserted; next_seq and revision + 1 written; COMMIT.
//     Any error rolls back, so a rejected batch changes nothing. SQLITE_BUSY
//     after busy_timeout is BACKEND_BUSY (retryable). Normal appends never
//     update or delete a row; the (tenant, session_id, seq) primary key makes a
//     second row for a seq impossible, and a row some other writer left
//     past next_seq is reported as SEQ_CONFLICT.
//   - Read: rows offset ≤ seq < min(offset+length, end) by seq, in chunks
//     of at most 512 events or about 1 MiB, each row decoded and checked
//     (a BLOB's checksum and JSON); a missing or undecodable row below
//     next_seq is CORRUPT_LOG naming its seq. end is next_seq; for a read
//     handle opened on a torn log it is the end of the valid prefix until a
//     write open has cut the tail (seen as a new revision). A read never
//     shows fewer events than an earlier one on the handle (LOG_SHRANK).
//   - Stat: header, revision, format version, EventCount = next_seq, and
//     SizeBytes -1: the schema keeps no size, and summing would read every
//     row.
//   - List: every sessions row in id order, then this Backend's pending
//     creates; a row failing the format gate or the header check is listed
//     with Err.
//   - Revision: <store_id>:<incarnation>:<revision>. It changes with every
//     stored change (materialization, each non-empty append, a cut) and with
//     nothing else; ownership never touches it.
//   - Format gate (docs/format.md): sessions.format_version first, then the
//     header's own version member (headerjson.Decode), before any event is
//     decoded.
//
// # Ownership
//
// Write ownership (docs/storage.md) is an in-process claim table shared by
// every Backend over the database, plus a non-blocking flock on the
// session's lock file, taken at Open(write) or by Create before it returns,
// and held until Close. Held elsewhere: ALREADY_OWNED at Open(write) (also
// for an id whose create is not stored yet), and SESSION_ALREADY_EXISTS at
// Create. A look never passes for a claim: a write open of an id with no
// row asks whether a create holds it with a shared flock dropped at once,
// which a claim meeting it waits out, and a flock held exclusively for an
// instant is tried again a few times (sdk/flockclaim); a Create of a stored
// id answers from the row it finds before it takes the claim.
// Before each append the backend
// checks that it still holds the claim and that the lock file it locked is
// still the one at that path; otherwise OWNERSHIP_LOST. A session row whose
// incarnation changed under a write handle is OWNERSHIP_LOST too.
//
// # Torn rows (docs/storage.md)
//
// Open scans the session's rows in seq order, rows as the units of docs/storage.md.
// Rows with seq ≥ next_seq are torn. Below next_seq the first missing row
// (a seq gap) or row that does not decode starts a torn tail, unless a
// later row below next_seq decodes (every row is checked on its own, so
// one intact row after the damage proves it committed): then it is
// CORRUPT_LOG naming the seq, the reason and the intact row, and nothing
// is changed; ReadDamaged (salvage) returns the rows before it and the
// rows from it on instead. Stat and List compare the count and seq range
// of a session's rows with next_seq and report a mismatch as an error,
// never next_seq as the count. A read open reports the tail
// (Torn.Bytes, FromSeq) and reads the prefix; a write open writes the torn
// rows as canonical JSON lines to <path>.torn/… (sdk/durable: a temporary
// file fsynced and linked into place, never replacing a file, then a
// directory fsync), then deletes them and sets next_seq in one BEGIN IMMEDIATE
// transaction. A line is the row's envelope when it decodes,
// {"undecodable":{…columns…},"reason":…} when it does not, and
// {"missing":{"fromSeq":a,"toSeq":b}} for absent rows; Torn.Bytes is the
// size of those lines with their newlines, the same for a read open and
// the write open that cuts.
//
// # Decisions of this backend
//
//   - Process model: one *sql.DB per database file per process (keyed by
//     device and inode, so two paths to one file share it), with one
//     connection (see store). Backends configured with one file must agree
//     on journal_mode and busy_timeout (CONFIG_INVALID otherwise); each has
//     its own compress_data and compress_min_bytes, which only decide how
//     it writes: every Backend reads TEXT and BLOB rows alike, whatever
//     threshold wrote them.
//   - Materialization, handles, Read chunking, the context rule and the
//     order of checks mirror plugins/memory: Create claims the id in every
//     process; the session is stored at the first Append or Flush; Close
//     of an unstored create abandons it; an empty batch is a compare-and-set
//     probe; handle names are never reused; every call but Close fails with
//     IO_ERROR wrapping ctx.Err() when ctx has ended.
//   - ":memory:" is a private database per Open; Peer shares it. It takes no
//     flock, and its torn rows go to a temporary directory.
//   - Config keys are the snake_case keys of the HCL block: path,
//     journal_mode, busy_timeout (milliseconds), compress_data,
//     compress_min_bytes (bytes, 64 … 1048576); unknown keys
//     are CONFIG_INVALID. Calls before Configure are CONFIG_INVALID.
//   - Errors are *sdk.Error with Op "sqlite". Other SQLite failures are
//     IO_ERROR (retryable), SQLITE_CORRUPT is CORRUPT_LOG, SQLITE_NOTADB is
//     SCHEMA_MISMATCH.
//
// Every method of Backend is safe for concurrent use.
package sqlite
