// Package persistencetest is the conformance suite of the logbook
// persistence contract (docs/plugins.md): one behaviour suite that every backend
// runs, in process and as a real plugin subprocess, the way nats-server runs
// one suite against every JetStream store.
//
// A backend's test calls Run with a Harness whose New returns a fresh,
// empty instance. Whatever sits between the suite and the storage — a
// direct call, go-plugin's in-memory gRPC connection, a plugin subprocess —
// is the harness's business: the suite sees only sdk.Persistence.
//
//	func TestConformance(t *testing.T) {
//		persistencetest.Run(t, persistencetest.Harness{
//			New:      func(t *testing.T) sdk.Persistence { return mybackend.New(t.TempDir()) },
//			Declared: mybackend.ServeConfig("test").Info.Capabilities,
//		})
//	}
//
// # What it checks
//
// Subtests are grouped by rule and named after it; a failure names the
// rule, the code expected and the offending values. Each subtest starts from
// its own New instance.
//
//	Capabilities every capability the backend declares (Declared) its type
//	             (Served) implements, and every one it implements it declares
//	Describe     name and format version
//	Create       write handle at seq 0; header stored as given; materialization on
//	             the first Append or Flush (before that: listed in this instance,
//	             SESSION_NOT_FOUND for Stat and Open(read), ALREADY_OWNED for
//	             Open(write)); Close abandons an unmaterialized create;
//	             SESSION_ALREADY_EXISTS; INVALID_SESSION_ID
//	Open         header, next seq, revision, no torn tail; SESSION_NOT_FOUND;
//	             INVALID_SESSION_ID; handle names never reused
//	RoundTrip    byte-equal envelopes, 1 MiB events, 10 000 events read in
//	             windows; no aliasing of caller or reply buffers
//	CAS          SEQ_CONFLICT naming firstSeq and the stored next seq, storage
//	             unchanged; SEQ_NOT_CONTIGUOUS; ENVELOPE_INVALID
//	Ownership    ALREADY_OWNED; reads beside a writer; Close releases the claim
//	             and is idempotent; HANDLE_CLOSED; READ_ONLY_HANDLE
//	Freshness    Read, Stat, List and Flush show every acknowledged prefix
//	Revision     changes on every append; equal across Open, Append, Flush, Stat
//	             and List while nothing changes; reads, rejected appends and
//	             ownership changes leave it alone
//	Read         offset/length windows, -1, past the end; INVALID_SEQ; fn errors
//	Stat, List   counts; SESSION_NOT_FOUND; entries once each; fn errors;
//	             LastActivity never before createdAt, never back after an append
//	Context      an ended context fails every call but Close and changes nothing
//	Concurrency  appenders on different sessions beside readers (run with -race);
//	             racing appends, write opens and creates have one winner
//	Instances    (Reopen) visibility, single writer, the claim a Create takes
//	             before it returns, and create races across two instances over
//	             one storage
//	FormatGate   (SetFormatVersion) FORMAT_TOO_NEW, FORMAT_UNSUPPORTED, CORRUPT_LOG,
//	             and (with Corrupt) the gate runs before any event is decoded
//	Migration    (SetFormatVersion "1") a v1 session reads as the current version
//	             and a read open stores nothing; a write open stores the current
//	             version with the same events and resumes; a lenient header
//	             round-trips; a v1 header naming a protocol is CORRUPT_LOG
//	TornTail     (Tear) read opens report the cut and change nothing; write opens
//	             cut, keep an artifact and go on; LOG_SHRANK under a read handle
//	Corruption   (Corrupt) damage before a later turn/end is CORRUPT_LOG, never
//	             absence; without one it is a torn tail
//	CopyPrefix   (copy-prefix) the child holds exactly the prefix at
//	             every boundary, beside the source's open writer or not, takes
//	             appends through its write handle and holds the claim;
//	             SESSION_ALREADY_EXISTS first, SESSION_NOT_FOUND,
//	             INVALID_BOUNDARY, and nothing created on failure
//	Watch        (watch) the first report waits for `from`, then
//	             every growth is reported, increasing; a second instance
//	             (Reopen) sees the first's appends; fn's error and the
//	             context end the watch; SESSION_NOT_FOUND
//	ReadFrames   (read-frames) the handed-over frames, decoded by
//	             sdk/frames, are exactly what Read returns for every range,
//	             or the log is not framed and nothing is handed over
//	Delete       (delete) Delete removes the log, its checkpoint and
//	             torn-tail artifacts, also of a CORRUPT_LOG session, after an
//	             audit record with the stored length and a SHA-256 digest; the id
//	             can be created again and a fork child still loads; ALREADY_OWNED
//	             (a writer here or in another instance, a pending create),
//	             SESSION_NOT_FOUND, SESSION_HELD until SetHold releases it, USAGE,
//	             and a refused delete writes no record and changes nothing
//	Import       (import) the session appears whole or not at all
//	Checkpoint   (checkpoint) none until one is written, then exactly it,
//	             through every handle; a stale one covers only its own
//	             prefix; INVALID_BOUNDARY past the durable log; none through
//	             a read handle; never another session's (same events, a
//	             CopyPrefix child, an id deleted and created again); none
//	             once the log is rewritten (Rewrite) or cut (Tear) under it,
//	             also when written again to the same length; and the
//	             checkpoint calls change nothing
//	SalvageReader (sdk.SalvageReader) an intact log is every event and no
//	             damage, without a claim; a torn tail (Tear) is no damage but
//	             the committed events; a damaged middle (Corrupt) is the
//	             prefix before it, located, with the intact events after it
//	             counted and the tail kept; damage no later turn/end proves
//	             follows IntactUnitsProveDamage; SESSION_NOT_FOUND (also a
//	             pending create), INVALID_SESSION_ID, fn's error; nothing
//	             changes
//	Tenancy      (tenants) the same id in the implicit tenant and in tenants b
//	             and c is three sessions with their own events, headers
//	             naming their tenant; List, Stat, Open, Delete, holds, the
//	             audit log, Watch, CopyPrefix, ReadDamaged and Import of a
//	             view see and touch only its tenant's sessions; a header of
//	             another tenant is USAGE and claims nothing; a handle is
//	             HANDLE_CLOSED in every other view; TENANT_INVALID; Tenants
//	             lists b and c in order, never the implicit tenant nor one
//	             with only a pending create; another instance (Reopen)
//	             keeps them apart. RunTenancy runs this group alone.
//
// Every expected failure is checked with errors.Is against its code, for
// an *sdk.Error, and for the offending values in its message (RequireCode).
// Every rejected write is also checked to leave the stored events, the
// event count and the revision unchanged.
//
// # Skips
//
// A subtest skips for one of two reasons only: the Harness hook it needs
// (Reopen, Tear, Corrupt, SetFormatVersion, Rewrite) is nil, or the backend
// neither declares nor implements the optional capability its group
// checks; the skip message names which. The suite judges what a backend
// does, not only what it declares: a capability its type implements but
// it does not declare, or one it declares but does not implement, fails
// the Capabilities group and the capability's own group instead of
// skipping. Salvage (sdk.SalvageReader) has no name in sdk.Info; its
// group runs when the type implements it. Nothing else skips, so a
// backend that sets every hook its storage allows runs the whole suite.
// The in-memory backend (plugins/memory) sets Reopen, SetFormatVersion and
// Corrupt (its Damage hook) but has no bytes to tear; the TornTail group
// runs against the disk backends.
//
// # Contract decisions the suite pins
//
// Where docs/plugins.md leaves room, the suite pins the choice every first-party
// backend makes, so the host can rely on it:
//
//   - Stat and Open(read) of an unmaterialized create are SESSION_NOT_FOUND;
//     only List in the creating instance shows it. Its write claim is taken
//     by Create itself, in every instance over the storage: a second Create
//     is SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED until the
//     handle closes. Closing it abandons the id, which can then be created
//     again, in any instance.
//   - Read past the end returns no events and no error; an offset below 0
//     or a length below -1 is INVALID_SEQ; an error returned by fn ends the
//     read and comes back unchanged (errors.Is).
//   - An element that is not an envelope with an integer seq is
//     ENVELOPE_INVALID naming its batch index.
//   - Handle names are never reused; calls on a closed handle are
//     HANDLE_CLOSED naming it; Close twice is fine.
//   - Revisions: any change makes a revision never seen before, and while
//     nothing changes every call reports the same revision.
//   - An ended context makes every call but Close fail with an *sdk.Error
//     that wraps the context error or carries a retryable code (what a gRPC
//     client reports), and changes nothing.
//
// The test envelopes are canonical JSON built by hand (Envelope, Batch):
// this package imports only sdk, so plugins can import it without pulling
// in the host.
package persistencetest
