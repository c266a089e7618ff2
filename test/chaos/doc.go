// Package chaos is logbook's fault suite. Its test runs a real
// `logbook serve` (the binary built from ./cmd/logbook) with real plugin
// subprocesses over each persistence backend (JSONL with zstd frames, JSONL
// with plain lines, SQLite, PostgreSQL in a schema of the run's own that is
// dropped at its end, memory; the configs are in testdata/), the backends
// side by side, lets several concurrent clients append with flush, and
// injects faults in a seeded random order: next is always one of the kinds
// the backend ran least, of its share of the kinds where it can (the list
// of kinds cut into windows of -chaos.faults, one backend's after the
// other's), so a long run gives every kind its share on every backend and
// the short one spreads the kinds over the backends. PostgreSQL and memory,
// whose storage is like no other's, run every kind that applies to them
// at least once, however few -chaos.faults. Faults of the append path:
//
//   - serve-kill: SIGKILL of serve, then a restart on the same data
//     directory; the clients reconnect.
//   - plugin-kill: SIGKILL of a plugin subprocess of serve.
//   - disk-full: the data directory is a size-limited tmpfs (only as root);
//     a ballast file fills it, then goes.
//   - fsync-eio: strace, attached to the plugins, makes fdatasync and fsync
//     fail with EIO (only where strace is installed).
//   - torn-kill: SIGKILL of serve while a large batch is being appended.
//   - torn-garbage: with serve down, random bytes are appended to JSONL
//     logs, or rows of random bytes are added past next_seq (SQLite,
//     PostgreSQL): inspect must call them a torn tail, and the writers'
//     resume must cut them, keeping them (a torn-*.bin file, a file in
//     <path>.torn/, a torn_rows row).
//   - second-cli: while serve holds the sessions, `logbook append` of one
//     of them and `logbook create` of an id serve just created must be
//     refused.
//   - second-serve: a second serve on the same data directory must be
//     refused a held session and an id the first one just created.
//
// Operation faults: an operation runs, through the CLI or serve's /v1
// routes as a user would, on stored sessions serve does not hold (a pool
// filled by importing a generated export of 2023 events), while the writers
// go on; it is cut at a random moment of its last uncut duration by SIGKILL
// of the CLI's process group (the CLI and its plugins), of the CLI's
// plugins only, or of serve during a /v1 call, by the client dropping its
// /v1 call, or it runs to its end. Then
// its rule is checked, the operation is retried to its end and checked
// again:
//
//   - import of an export of 5,000–8,000 events (several batches; also on
//     a tmpfs filled but for less than the export): the id is absent (not
//     found, not listed) or holds the whole export; the retry succeeds,
//     also after an import that completed.
//   - delete (CLI, DELETE /v1/sessions/{id}): the session is there in full
//     with no delete in its audit, or gone with exactly one.
//   - hold, release-hold (CLI, /v1 routes): the hold state (what
//     `gc --dry-run` keeps as held) and the audit's last hold record agree.
//   - gc (a retention of 1h): every pool session is there in full or gone
//     with its audit record, none held, recent or a fork's parent is gone;
//     after the retry every other old one is gone.
//   - salvage (of a session damaged inside its committed part): the child
//     is absent or holds the valid prefix and its session/salvaged event,
//     and every file in the salvage directory belongs to a stored child.
//   - fork (CLI, /v1 route): the child is absent or holds the prefix and
//     its session/end-seed event.
//   - migrate (to a SQLite, or for the other backends a JSONL, target): each
//     pool session's copy is absent, the copy of the last full migrate, or
//     whole.
//   - compact (POST /compact on a writer's live session, `logbook compact`
//     on a pool session): the session loads, keeps its events and has a
//     valid surface.
//
// A session an operation leaves neither absent nor whole is half-made.
// A kind that means nothing on a backend is left out (the memory backend
// runs only the kinds that neither kill serve or its plugins nor need a
// second process, its operations through /v1, cut only by a dropped call,
// and the verifier reads it from serve; PostgreSQL runs every kind but
// disk-full and fsync-eio, which strike files the database server, not
// the plugin, writes); a kind this machine cannot run (no root for the
// tmpfs, no strace, no PostgreSQL) is logged as skipped, and fails the
// run under CI=true.
//
// A client appends its user messages in batches, each sent as one whole
// turn (turn/start, the messages, turn/end) under the agent-loop protocol
// and as one operation (docs/format.md, "Operation ids"): an operation id
// of its own, no expected seq, then a flush. A large batch (torn-kill) is
// cut into several operations, each well within one backend request, as
// an operation must fit in one. A failed attempt is retried
// as the same operation, so what keeps a retry from storing a batch twice
// is the operation id alone: when an earlier attempt stored it, the retry
// is answered as a replay with the stored envelopes. It counts an event
// acknowledged when an attempt and its flush both succeeded; one
// acknowledged operation in four is sent once more, as a client that lost
// the reply would, and must be a replay of the same envelopes. The log
// holding an operation in part (OPERATION_CONFLICT on the client's own
// retry) breaks the rule that an operation is all or nothing; the client
// then acknowledges the stored part and sends the rest as a new operation,
// in a new turn. After every fault the clients pause and the verifier reads
// every session with `logbook events` (the memory backend's from serve):
// each acknowledged event must be stored exactly once at the seq it was
// acknowledged with, the seqs must be contiguous, no event may be stored
// twice, every log must load, and every operation must be stored at most
// once, with the number of events it was sent with, each acknowledged one
// at its acknowledged seq. A summary table (fault kind × backend: runs,
// acknowledged events, retries answered as replays, lost, duplicated,
// half-made) ends the run; any lost or duplicated event or half-made
// session fails it.
//
// The default run is short (-chaos.faults=10 per backend: about two
// thirds of the kinds on each backend, every kind on two or more, and
// every kind that applies on PostgreSQL and memory);
// `make chaos` runs the long one. Flags (after the package):
//
//	-chaos.faults N     faults per backend
//	-chaos.seed S       the seed (default: from the clock; printed)
//	-chaos.backends L   comma-separated subset of jsonl-zstd,jsonl-none,sqlite,postgres,memory
//	-chaos.clients N    concurrent appending clients per backend
//	-chaos.kinds L      comma-separated subset of the fault kinds (default: all)
//	-chaos.stop-at T    an RFC 3339 time: no fault starts after it; the run
//	                    verifies, stops and prints the table of the faults done
//
// PostgreSQL is the test database of LOGBOOK_TEST_PG_DSN (default
// host=/var/run/postgresql dbname=test).
package chaos
