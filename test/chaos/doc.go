// Package chaos is logbook's fault suite. Its test runs a real
// `logbook serve` (the binary built from ./cmd/logbook) with real plugin
// subprocesses over each persistence backend (JSONL with zstd frames, JSONL
// with plain lines, SQLite; the configs are in testdata/), lets several
// concurrent clients append with flush, and injects faults in a seeded
// random order:
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
//     logs (JSONL only): inspect must call them a torn tail, and the
//     writers' resume must cut them, keeping them in a torn-*.bin file.
//   - second-cli: while serve holds the sessions, `logbook append` of one
//     of them and `logbook create` of an id serve just created must be
//     refused.
//   - second-serve: a second serve on the same data directory must be
//     refused a held session and an id the first one just created.
//
// A client counts an event acknowledged when an Append with flush that
// carried it returned success (or a retry proved it stored and a flush
// succeeded). After every fault the clients pause and the verifier reads
// every session with `logbook events`: each acknowledged event must be
// stored exactly once at the seq it was acknowledged with, the seqs must be
// contiguous, no event may be stored twice and every log must load. A
// summary table (fault kind × backend: runs, acknowledged events, lost,
// duplicated) ends the run; any lost or duplicated event fails it.
//
// The default run is short (-chaos.faults=12 per backend: every kind
// once, some twice); `make chaos` runs the long one. Flags (after the package):
//
//	-chaos.faults N     faults per backend
//	-chaos.seed S       the seed (default: from the clock; printed)
//	-chaos.backends L   comma-separated subset of jsonl-zstd,jsonl-none,sqlite
//	-chaos.clients N    concurrent appending clients per backend
package chaos
