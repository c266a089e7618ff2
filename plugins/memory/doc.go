// Package memory is logbook's in-memory persistence backend (docs/plugins.md): a
// complete sdk.Persistence with the semantics of a disk backend and nothing
// on disk. The host uses it in tests; the conformance suite
// sdk/persistencetest runs against it like against every other backend.
//
// # Storage model
//
// New returns an instance over a fresh, empty store. Peer returns a second
// instance over the same store, as a second process over the same data
// directory would see it: the instances share the stored sessions and the
// write claims, and each has its own handles and its own unmaterialized
// creates. Nothing survives the store.
//
// A session is its canonical header JSON (sdk/headerjson) plus its events,
// each one canonical envelope kept byte for byte. Events are copied in at
// Append and copied out at Read; no caller buffer is ever aliased, and a
// stored event is never written again.
//
// # Decisions
//
//   - Materialization. Create reserves the id and takes its write claim
//     in every instance of the store before it returns: until the create
//     handle closes, a Create of the id in any instance is
//     SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The session
//     is stored, header and first batch together, at the first Append or
//     Flush of the create handle. Until then Stat and Open(read) report
//     SESSION_NOT_FOUND and only this instance's List shows it (a List
//     also names the unstored creates of its own instance). Closing the create handle
//     first abandons the id: nothing was stored, and any instance can
//     create it again. Create of a stored id is SESSION_ALREADY_EXISTS.
//   - Watch. The backend is an sdk.Watcher: a Watch on any instance of a
//     store sees the appends of every instance, the in-process analogue
//     of hosts that share a database.
//   - Ownership. One write claim per session across all instances of a
//     store (the in-process analogue of flock, docs/storage.md). A second
//     Open(write) is ALREADY_OWNED; Open(read) takes no claim; Close
//     releases it. Ownership never changes a revision.
//   - Identity. Ids are map keys, so IDENTITY_MISMATCH cannot occur; ids
//     are still checked (INVALID_SESSION_ID) at Create, Open and Stat.
//     Create refuses a header that would not read back (HEADER_INVALID
//     wrapping the decoder's error) and a format version other than 0 or
//     sdk.FormatVersion (FORMAT_UNSUPPORTED); 0 means the current version. Open with an
//     access other than read or write is USAGE.
//   - Format gate. The stored header is decoded with headerjson.Decode at
//     every Open, Stat and List, so a stored version the build does not
//     read gives FORMAT_TOO_NEW, FORMAT_UNSUPPORTED or CORRUPT_LOG exactly
//     as on disk (see Hooks.SetStoredFormatVersion).
//   - Migration. An older stored version (v1) is migrated by
//     headerjson.Migrate at Open: a read open serves the migrated header
//     and stores nothing; a write open stores the migrated header in place
//     of the old one, the events as they are (a change: the revision
//     changes). Stat and List report the header as stored.
//   - Envelopes. The backend reads only the seq of each envelope, from its
//     canonical prefix {"seq":N, (docs/format.md member order, docs/format.md encoding). An
//     element without that prefix is ENVELOPE_INVALID naming its batch
//     index; the rest of the envelope is the host's business.
//   - Append. Checks run in this order: the context, HANDLE_CLOSED, READ_ONLY_HANDLE, OWNERSHIP_LOST, INVALID_SEQ (negative
//     firstSeq), ENVELOPE_INVALID, SEQ_NOT_CONTIGUOUS, the compare-and-set
//     (SEQ_CONFLICT naming firstSeq and the stored next seq), and for a
//     pending create SESSION_ALREADY_EXISTS when another instance stored the
//     id first. A rejected batch changes nothing.
//     An empty batch is a compare-and-set probe: it neither stores nor
//     materializes anything.
//   - Read. Chunks hold at most 512 events or about 1 MiB; fn never gets an
//     empty chunk; an error from fn ends the read and is returned as is.
//     Offset past the end reads nothing. Offset or length outside their
//     domain (length may be -1) is INVALID_SEQ.
//   - Flush. A write handle's Flush materializes a pending create; on a
//     read handle Flush is allowed and reports the stored next seq.
//   - Stat. EventCount is exact; SizeBytes counts the stored bytes: the
//     canonical header plus every event.
//   - Revision. "<store>:<generation>", where the store part is random per
//     store and the generation counts the changes of the session
//     (materialization, each non-empty append, a migration stored by a
//     write open, Hooks.SetStoredFormatVersion). An unmaterialized session's revision
//     is "".
//   - Handles. Names are never reused and never name a handle of another
//     instance (sdk/handles keeps the table); an unknown or closed
//     handle is HANDLE_CLOSED (Close of one is a no-op).
//   - Context. Every call but Close fails with IO_ERROR wrapping ctx.Err()
//     when ctx has ended, before changing anything; Read also checks
//     between chunks. Close always runs, so a claim can always be released.
//   - Salvage. The backend is an sdk.SalvageReader. A log marked damaged
//     with Hooks.Damage is CORRUPT_LOG at every Open; ReadDamaged returns
//     its events before the damage and locates the damage in the log's
//     JSONL image (header line, then one line per event), whose lines from
//     the damaged event on are the tail.
//   - Tenants. The backend is an sdk.Tenancy: each tenant has a store of
//     its own (sessions, claims, holds, audit log), shared by every
//     instance of the storage (Peer) and created when first asked for;
//     the Backend New returns is the implicit tenant's. Tenant(name)
//     returns the instance's view of a tenant, the same one on every call,
//     with a handle table of its own, so a handle is HANDLE_CLOSED in any
//     other view. A view's Create and Import refuse a header whose Tenant
//     is not the view's with USAGE, and a stored header naming another
//     tenant reads as CORRUPT_LOG. Tenants names the tenants with at least
//     one stored session.
//   - Errors are *sdk.Error with Op "memory".
//
// # Test hooks
//
// Backend has no fault knobs. HooksOf(b) reaches the stored state as a test
// of the host reaches a disk backend's files: DropOwnership,
// SetStoredFormatVersion and Damage; no production code calls them. Append
// failures, lost replies and slow appends come from wrapping the backend
// with sdk/persistencefault, which works in front of every backend.
//
// Every method is safe for concurrent use.
package memory
