// Package jsonl is logbook's JSONL persistence backend (docs/storage.md): one
// append-only file of JSON lines per session, optionally as Zstandard
// frames, behind the sdk.Persistence contract (docs/plugins.md). The logbook
// binary serves it as `logbook plugin jsonl`; cmd/logbook-jsonl is the same
// plugin as a binary of its own. Both serve ServeConfig.
//
// # On-disk format
//
//	<root>/<enc(id)>/session.lock                 flock target; never deleted
//	<root>/<enc(id)>/events.v<N>.jsonl            compression "none"
//	<root>/<enc(id)>/events.v<N>.jsonl.zst        compression "zstd"
//	<root>/<enc(id)>/checkpoint.v1.bin            the host's checkpoint, bound to a log prefix (checkpoint.go)
//	<root>/<enc(id)>/torn-<epoch ms>.bin          bytes cut by a repair (0600)
//	<root>/<enc(id)>/.<name>.<12 hex>.tmp          a durable write in progress (sdk/durable)
//	<root>/.tenants/<tenant>/…                    a named tenant's sessions, laid out as the root (tenant.go)
//
// enc(id) is EncodeID: a–z, 0–9, '_', '-' and a non-leading '.' stay, every
// other byte becomes '~' and two uppercase hex digits. N is the format
// version of the log's header (sdk.FormatVersion, 5, for what this build
// writes; a header naming another version is CORRUPT_LOG): the highest
// present is the log, lower ones are never touched. A log of v1 to v4 is
// migrated in memory by a read open and, by a write open, into events.v5
// beside it (migrate.go, docs/format.md "Format versions"). Directories
// are created 0700, files 0600.
//
// A log is a sequence of lines, each ending in '\n'. Line 1 is the session
// header, exactly sdk/headerjson.Encode:
//
//	{"type":"session","version":5,"id":…,"tenant"?,"createdAt":…,"isSeeded":…,"delegationDepth":…,"cwd"?,…}
//
// "tenant" is the named tenant whose directory holds the log (none for
// the implicit tenant, the root); a header naming another tenant than the
// directory's is CORRUPT_LOG.
//
// Every further line is one event: its canonical envelope (docs/format.md),
// byte for byte as appended, event k on line k+2. Canonical JSON escapes
// every control character, so a raw '\n' only ever ends a line.
//
// With compression "zstd" the file is a concatenation of independent
// Zstandard frames (RFC 8878), each with a content checksum (XXH64): frame
// 1 holds exactly the header line, and every acknowledged Append batch is
// exactly one more frame holding its lines. Each frame decodes to complete
// lines, so `zstd -dc events.v5.jsonl.zst` prints the plain log.
//
// # Units, torn tails and corruption (docs/storage.md)
//
// A unit is a line (none) or a frame (zstd). A unit is good when it is
// complete (a line ends in '\n'; a frame's header and block headers are
// whole, its checksum matches and it decodes to complete lines) and every
// line in it is a canonical envelope with the expected seq. Scanning stops
// advancing at the first unit that is not good (committedEnd); the rest is
// then examined to tell damage inside the committed log (CORRUPT_LOG,
// nothing cut) from a torn tail:
//   - zstd: every acknowledged batch is one checksummed frame, so a decode
//     attempt at every later frame magic 28 B5 2F FD that finds one intact
//     frame (checksum holds, complete lines of valid envelopes) proves the
//     damage committed: CORRUPT_LOG naming the byte offset of the damaged
//     frame and of that intact frame.
//   - none: a power loss during a multi-line write can leave intact lines
//     after a damaged page, so only a later line that is a valid turn/end
//     proves it: CORRUPT_LOG naming both line numbers. A damaged line that
//     ends in CRLF is a converted file, CORRUPT_LOG naming CRLF (a header
//     line ending in CRLF makes the header unit bad).
//
// Otherwise everything from committedEnd on is a torn tail: a batch whose
// write a crash interrupted, never acknowledged. A damaged header unit is
// CORRUPT_LOG. ReadDamaged (salvage) returns the events before committed
// damage and the bytes from it on instead of refusing. The header is
// decoded first of all, so the format gate (FORMAT_TOO_NEW …) and the
// identity check (IDENTITY_MISMATCH) come before any event is decoded.
//
// A read open reports the torn tail (Torn.Bytes, Torn.FromSeq) and changes
// nothing. A write open, holding the lock, copies the torn bytes to
// torn-<epoch ms>.bin (written with sdk/durable: a temp file fsynced and
// linked into place, never replacing a file, its directory fsynced),
// truncates the log to committedEnd, fsyncs it and reports the artifact's
// path. Repair never removes anything the rule does not classify as torn.
//
// # Write path (docs/storage.md)
//
// Create claims the id before it returns: it creates the root and session
// directories (0700, their parents fsynced) and takes the lock, so that no
// other process can create the id or open it for writing meanwhile. A
// directory with a lock and no log is a session that was never stored:
// Stat, List and Open(read) do not see it, and once its creator is gone
// (the kernel drops its flock) the id can be created again. The first
// non-empty Append (or Flush) of a create materializes the session with
// sdk/durable: a temp file created O_EXCL holding the header unit and the
// first batch, fdatasync, link(2) to the final name (an existing log is
// never overwritten: SESSION_ALREADY_EXISTS), fsync of the directory,
// removal of the temp name. Stale temp files are removed at the next write
// open.
//
// An Append validates its batch (ENVELOPE_INVALID, SEQ_NOT_CONTIGUOUS),
// checks the compare-and-set, and makes one write (one frame for zstd,
// from one reused encoder) and one fdatasync. On failure the file is
// truncated back to its previous size and fsynced, and the call is
// IO_ERROR with nothing stored; if that rollback fails too the handle is
// broken and every later call on it is HANDLE_BROKEN (final).
//
// # Ownership, reads, revisions (docs/storage.md)
//
// Write ownership is flock(LOCK_EX|LOCK_NB) on session.lock, taken at a
// write open or by Create, and held until Close; the kernel drops it when
// the process dies. An in-process claim table refuses a second claim in
// one Backend before any file is touched. A lock held elsewhere is
// ALREADY_OWNED at Open(write), also for an id whose create is not stored
// yet, and SESSION_ALREADY_EXISTS at Create. A look never passes for a
// claim: a write open of an id with no log asks whether a create holds it
// with a shared lock dropped at once, which a claim meeting it waits out,
// and a lock held exclusively for an instant is tried again a few times
// (sdk/flockclaim); a Create of a stored id answers from the log it finds
// before it takes the lock.
//
// An open reads the log's header unit before its claim and the rest
// after it (again from the start when a write open finds the log changed
// in between), and the checkpoint (checkpoint.go) with it. The handle
// keeps what the open read: the first Read or ReadFrames serves the
// log's committed bytes as the open read them (for a log of up to 256
// MiB), and ReadCheckpoint the checkpoint the open bound, so a resume
// reads each file once.
//
// A read handle scans the log at its open and, at each later Read, only
// the bytes added since; it rescans from 0 only when the file was replaced
// (dev/ino) or cut below what it had committed, and reports LOG_SHRANK
// when that leaves fewer events than it had shown. A read takes the size at
// its start and reads only below it, so it finishes beside a writer.
//
// The revision is dev:ino:size:mtimeNs:ctimeNs of the log. Stat reads only
// the header unit (EventCount -1: unknown), and so does List.
//
// # Decisions of this backend
//
//   - Envelope validation. Append refuses, and the scanner treats as a bad
//     unit, any event that is not canonical JSON (jsonv.Parse, then the
//     canonical bytes must equal the input) with the members of docs/format.md
//     (seq, time, type, data required; seq and time integers in 0 … 2^53−1;
//     type a string; ignorable only true; no other member). Member order
//     is free. So the backend never stores a line it would later call bad.
//     A batch (or a run of stored lines) is checked with one parse, as the
//     JSON array of its lines, each element required to span exactly its
//     line; only a failing run is rechecked line by line to name the
//     culprit. An Append thus costs a handful of allocations per batch,
//     none per event.
//   - Plain units are lines, not batches: a crash inside a multi-line batch
//     keeps its complete lines, which are valid events (docs/storage.md).
//   - Frames. A frame is bad when it is skippable, needs a dictionary, has
//     no content checksum, a reserved block type, a block over 128 KiB, or
//     a content size its blocks cannot hold; frames are sized by walking
//     the block headers before decoding, which bounds the memory a damaged
//     file can make the decoder take. An incomplete unit is examined like a
//     bad one (nothing follows it in a genuinely torn log, and damaged
//     length fields must not hide a later intact frame).
//   - Torn artifacts are named after the backend's clock; when the name
//     exists the milliseconds are incremented until a free name is found
//     (at most 1000 times).
//     Torn.Artifact is the artifact's absolute path.
//   - Materialization whose directory fsync fails removes the final link
//     again, so failure means nothing stored.
//   - Handles are "<8 hex>-h<n>": random per Backend, so a handle of one
//     plugin process is never valid in a restarted one.
//   - Configure may be called again only while no handle is open. Before
//     Configure, Create, Open, Stat and List are CONFIG_INVALID (and no
//     handle exists for the other calls to use).
//   - A relative root is resolved against the working directory at New or
//     Configure.
//   - Describe reports the configured compression.
//   - Everything else (materialization, handles, the check order of
//     Append, Read chunking, context handling) mirrors plugins/memory.
//
// # Testing
//
// All file access goes through a vfs.FS (plugins/jsonl/vfs; WithFS).
// vfs.OS is the real file system; plugins/jsonl/faultfs is an in-memory
// one, for tests only, that injects ENOSPC, EIO, short writes, fsync failures
// and crashes that keep only synced bytes and synced directory entries.
// Errors are *sdk.Error with Op "jsonl".
package jsonl
