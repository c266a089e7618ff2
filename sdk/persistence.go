package sdk

import (
	"context"
	"time"
	"unicode/utf8"
)

// Access is the mode of Persistence.Open.
type Access int

// The access modes.
const (
	AccessRead  Access = 1 // no claim; works beside a writer
	AccessWrite Access = 2 // atomic single-writer claim
)

// Description is what Persistence.Describe returns.
type Description struct {
	Name          string
	FormatVersion int
	Compression   string // "" when the backend has none
}

// Torn is what a write open cut (or, for a read open, what it would cut).
type Torn struct {
	Bytes    int64
	FromSeq  Seq
	Artifact string // where the cut bytes were kept; "" for a read open
}

// Opened is the reply of Persistence.Open (and of Create, where the header is
// the one given and NextSeq is 0).
type Opened struct {
	Handle   string
	Header   Header
	NextSeq  Offset
	Revision string
	Torn     Torn
}

// Durable is the reply of Append and Flush: the stored next seq (for Flush,
// the durable one) and the revision.
type Durable struct {
	NextSeq  Offset
	Revision string
}

// Stat is the reply of Persistence.Stat.
type Stat struct {
	Header        Header
	Revision      string
	FormatVersion int
	EventCount    int64 // -1 when unknown
	SizeBytes     int64 // -1 when unknown
	// LastActivity is when the session's log was last written, in Unix
	// milliseconds, by the backend's own measure (a file's modification
	// time, a row's timestamp, the last event's time); 0 when unknown. It
	// is never below Header.CreatedAt and never goes back while the log
	// grows.
	LastActivity int64
}

// ListEntry is one session of Persistence.List. Err is set, and Header may
// be zero, when the session cannot be read. A backend fills LastActivity
// and EventCount when it knows them without reading the log (they are
// what Stat would report); a session not stored yet (an unmaterialized
// create) has an EventCount of 0.
type ListEntry struct {
	ID       string
	Header   Header
	Revision string
	Err      error
	// LastActivity is as in Stat: Unix milliseconds of the last write, 0
	// when unknown.
	LastActivity int64
	// EventCount is the number of stored events, -1 when unknown.
	EventCount int64
}

// Persistence is a storage backend (docs/plugins.md). Events are canonical
// envelopes; the backend stores them byte for byte. Every method returns
// *Error values with the codes of docs/architecture.md, docs/storage.md.
type Persistence interface {
	// Describe names the backend.
	Describe(ctx context.Context) (Description, error)
	// Create makes a new session with write ownership. Storage materializes
	// on the first Append or Flush.
	Create(ctx context.Context, h Header) (Opened, error)
	// Open opens a stored session for reading or writing.
	Open(ctx context.Context, id string, access Access) (Opened, error)
	// Append stores events[0] at firstSeq onwards, all or nothing, under
	// compare-and-set on firstSeq; success means durable. The event buffers
	// are valid only during the call, and a backend never modifies them
	// (the host may hand over its stored envelopes): a backend that keeps
	// them copies them.
	Append(ctx context.Context, handle string, firstSeq Seq, events [][]byte) (Durable, error)
	// Read calls fn with consecutive chunks of the events
	// [offset, min(offset+length, end)); length -1 reads to the end. The
	// chunks are fresh buffers fn may keep.
	Read(ctx context.Context, handle string, offset Offset, length int64, fn func(events [][]byte) error) error
	// Flush is a barrier for everything acknowledged; it materializes an
	// empty created session.
	Flush(ctx context.Context, handle string) (Durable, error)
	// Close releases the handle (and ownership); idempotent.
	Close(ctx context.Context, handle string) error
	// Stat describes a stored session without reading its events.
	Stat(ctx context.Context, id string) (Stat, error)
	// List calls fn for every materialized session (and those created by this
	// instance).
	List(ctx context.Context, fn func(ListEntry) error) error
}

// Damage locates the damaged part of a stored log that a
// SalvageReader found. Offsets are byte offsets in the stored file for
// file backends; a row backend reports the position of the first damaged
// row (its seq) as Offset and the number of rows from there on as Bytes.
type Damage struct {
	// Offset is where the damage starts: the end of the longest valid
	// prefix.
	Offset int64
	// Bytes is the size of the damaged region and everything after it: all
	// of it is excluded from the valid prefix and copied into Tail.
	Bytes int64
	// IntactEventsExcluded counts the events after the damage that still
	// pass every check (intact frames, rows or lines) but are excluded
	// because a valid log is a contiguous prefix.
	IntactEventsExcluded int64
	// Reason names the check the damaged unit failed.
	Reason string
	// Tail holds the damaged region and everything after it, byte for byte
	// for file backends, as canonical JSON lines of the rows for row
	// backends.
	Tail []byte
}

// Damaged is the reply of SalvageReader.ReadDamaged.
type Damaged struct {
	// Header is the stored header (the header unit must be intact, else
	// ReadDamaged fails with CORRUPT_LOG: there is nothing to salvage).
	Header Header
	// ValidEvents is the length of the longest valid prefix: the number of
	// events ReadDamaged passed to fn.
	ValidEvents int64
	// Corrupt reports whether the stored log is CORRUPT_LOG. When false the
	// log loads normally (it may end in a torn tail) and Damage is zero.
	Corrupt bool
	// Damage is set when Corrupt is true.
	Damage Damage
}

// SalvageReader is the optional persistence capability salvage needs: it
// reads a stored session whose log is CORRUPT_LOG instead of refusing it.
// Every first-party backend implements it; the host discovers it by type
// assertion.
type SalvageReader interface {
	// ReadDamaged reads the stored session id without claiming it and
	// without modifying anything: fn gets consecutive chunks of the longest
	// valid prefix (fresh buffers fn may keep), then the reply says where
	// the damage is. A missing session is SESSION_NOT_FOUND.
	ReadDamaged(ctx context.Context, id string, fn func(events [][]byte) error) (Damaged, error)
}

// CapabilityCopyPrefix is the Info capability of a persistence plugin whose
// backend implements PrefixCopier: the host forks through CopyPrefix on it.
const CapabilityCopyPrefix = "copy-prefix"

// PrefixCopier is the optional persistence capability "copy-prefix": the
// backend copies a stored session's prefix into a new session itself, so a
// fork does not send the prefix back and forth. The host discovers it by
// type assertion on an in-process backend and by the capability in GetInfo
// on a plugin, and falls back to Create and Append without it.
type PrefixCopier interface {
	// CopyPrefix creates the session child (a header as Create takes it)
	// holding exactly the events [0, boundary] of the stored session source,
	// byte for byte as Read returns them, and returns a write handle on it
	// (the claim held, NextSeq boundary+1), as Create does. The child is
	// materialized and durable when it returns; the caller appends the rest
	// through the handle. Nothing is created on failure. In order: the
	// child stored or claimed → SESSION_ALREADY_EXISTS; source not stored →
	// SESSION_NOT_FOUND; boundary < 0 or past the source's last stored
	// event → INVALID_BOUNDARY (boundary, last seq); a source the backend
	// cannot read → its error (CORRUPT_LOG, FORMAT_TOO_NEW, …).
	CopyPrefix(ctx context.Context, source string, boundary Seq, child Header) (Opened, error)
}

// Checkpointer is the optional persistence capability of verified
// checkpoints (docs/storage.md, "Checkpoints"): the backend stores the
// host's checkpoint of a session beside its log, bound to the exact stored
// bytes of the events it covers, so that a restore can trust those events
// without parsing them again. The host discovers it by type assertion; a
// checkpoint never overrides the log, and any failure of it only makes the
// host fold the log from the start.
//
// A plugin that implements it lists CapabilityCheckpoint in its Info.
type Checkpointer interface {
	// WriteCheckpoint stores data as the checkpoint of the write handle's
	// session covering its first events events, which must be durable
	// (else INVALID_BOUNDARY). It replaces the earlier checkpoint and is
	// durable when it returns.
	WriteCheckpoint(ctx context.Context, handle string, events Offset, data []byte) error
	// ReadCheckpoint returns the handle's session's checkpoint if the
	// stored bytes of the events it covers are still the ones it was bound
	// to; found is false when there is none, it is damaged or it no longer
	// matches (not an error).
	ReadCheckpoint(ctx context.Context, handle string) (events Offset, data []byte, found bool, err error)
}

// CapabilityCheckpoint is the Info capability of a persistence plugin whose
// backend is a Checkpointer.
const CapabilityCheckpoint = "checkpoint"

// CapabilityWatch is the Info capability of a persistence plugin whose
// backend is a Watcher.
const CapabilityWatch = "watch"

// Watcher is the optional persistence capability "watch": the backend tells
// a reader when a stored session grows, also when another host writes it.
// The host follows through it the sessions it does not hold itself
// (docs/storage.md, "Following a session written elsewhere"), and discovers
// it by type assertion on an in-process backend and by the capability in
// GetInfo on a plugin.
type Watcher interface {
	// Watch calls fn with the stored length (next seq) of session id once
	// it is at least from, and again each time it grows, until ctx ends
	// (it then returns ctx's error) or fn returns an error (which Watch
	// returns). A length is never lower than an earlier one; one call may
	// cover many appended batches, and a call may come late, but a growth
	// is never missed for good: the length is read from the stored log, not
	// carried by the notification. Watch claims nothing; a session not
	// stored is SESSION_NOT_FOUND.
	Watch(ctx context.Context, id string, from Offset, fn func(length Offset) error) error
}

// CapabilityReadFrames is the Info capability of a persistence plugin whose
// backend is a FrameReader.
const CapabilityReadFrames = "read-frames"

// Frame is one stored Zstandard frame (RFC 8878) of a FrameReader: Data
// decodes to the Count canonical envelopes First, First+1, …, each ending
// in '\n', and carries the content checksum that proves it.
type Frame struct {
	// Offset is where the frame is stored (a byte offset in a log file),
	// named in errors about it.
	Offset int64
	First  Seq
	Count  int64
	Data   []byte
}

// FrameReader is the optional persistence capability "read-frames": a
// backend that stores its events as Zstandard frames hands them over as
// they are stored, and the reader decodes them itself, so the decoded log
// does not cross the plugin channel (docs/storage.md, "Reading frames").
// The host discovers it by type assertion on an in-process backend and by
// the capability in GetInfo on a plugin, and reads through Read without
// it.
type FrameReader interface {
	// ReadFrames calls fn with consecutive runs of the stored frames that
	// hold the events [offset, min(offset+length, end)) of the handle's
	// session, in order, as Read would see them (the same snapshot and
	// checks of the handle); length -1 reads to the end. The first frame
	// may begin before offset and the last end after the range: the reader
	// skips those events. The frames are fresh buffers fn may keep. framed
	// is false, and fn is never called, when this log is not stored as
	// frames (a plain log): the caller then reads it through Read.
	ReadFrames(ctx context.Context, handle string, offset Offset, length int64, fn func(frames []Frame) error) (framed bool, err error)
}

// CapabilityDelete is the Info capability of a persistence plugin whose
// backend is a Deleter.
const CapabilityDelete = "delete"

// AuditOp is the operation an AuditRecord records.
type AuditOp string

// The audited operations.
const (
	AuditDelete      AuditOp = "delete"
	AuditHold        AuditOp = "hold"
	AuditReleaseHold AuditOp = "release-hold"
)

// The actors of an audited operation (AuditRequest.By).
const (
	ByCLI       = "cli"       // a person, through the logbook command line
	ByRetention = "retention" // the retention policy (logbook gc, serve)
	ByAPI       = "api"       // a client of the server API
)

// AuditRequest says why, and on whose behalf, a Deleter operation runs;
// the backend copies both into the audit record it writes.
type AuditRequest struct {
	// Reason is free text; it may be empty.
	Reason string
	// By names the actor: ByCLI, ByRetention or ByAPI (or what an embedder
	// chooses: any non-empty text without control bytes).
	By string
}

// AuditRecord is one record of a backend's audit log (docs/storage.md,
// "Audit log"). The log is append-only: a Deleter never rewrites or
// removes a record.
type AuditRecord struct {
	// Time is when the backend wrote the record, in UTC.
	Time time.Time
	// Op is what was done.
	Op AuditOp
	// Session is the session id.
	Session string
	// Events is the stored length of the session's log when the record was
	// written: its last seq is Events−1, and it has none when Events is 0.
	// For a log the backend cannot read to the end (CORRUPT_LOG) it is the
	// length of the longest valid prefix.
	Events Offset
	// Digest is "sha256:" and the hex SHA-256 of the session's stored
	// bytes (docs/storage.md says which bytes each backend hashes).
	Digest string
	// Reason and By are the request's.
	Reason string
	By     string
}

// Deleter is the optional persistence capability "delete": it removes a
// whole stored session, keeps legal holds that forbid it, and keeps the
// audit log that records both. Every first-party backend implements it;
// the host discovers it by type assertion on an in-process backend and by
// CapabilityDelete in GetInfo on a plugin.
//
// Every operation that changes something records its AuditRecord in the
// audit log durably, so that the log and the state agree after a crash at
// any point (in one transaction with the change, or as an intent settled
// by the state later); an operation that is refused writes no record.
type Deleter interface {
	// Delete removes the stored session id: its log, its checkpoint and the
	// artifacts kept beside it (torn tails, salvage tails). In order: a
	// session claimed by a writer, in this instance or another (a write
	// handle, or a create not stored yet) → ALREADY_OWNED, naming the owner
	// where the backend knows it; not stored → SESSION_NOT_FOUND; held →
	// SESSION_HELD. A deleted id may be created again, and a fork of the
	// session is not affected (it holds its own copy of the prefix).
	Delete(ctx context.Context, id string, r AuditRequest) (AuditRecord, error)
	// SetHold puts a legal hold on the stored session id (held true) or
	// releases it (held false). A session not stored is SESSION_NOT_FOUND;
	// it works beside a writer. changed is false, and no record is
	// written, when the session already was in the state asked for.
	SetHold(ctx context.Context, id string, held bool, r AuditRequest) (rec AuditRecord, changed bool, err error)
	// Held reports whether the stored session id is under a legal hold; a
	// session not stored is SESSION_NOT_FOUND.
	Held(ctx context.Context, id string) (bool, error)
	// Audit calls fn with the record of every change the audit log holds as
	// made, oldest first. An error from fn ends it and is returned as is.
	Audit(ctx context.Context, fn func(AuditRecord) error) error
}

// CheckAuditRequest validates r: By is 1–64 bytes of printable text and
// Reason at most 4 096 bytes of valid UTF-8 without control bytes other
// than tab (USAGE naming the rule otherwise).
func CheckAuditRequest(r AuditRequest) error {
	if r.By == "" || len(r.By) > 64 {
		return Errorf(CodeUsage, "audit", "by must be 1–64 bytes; got %d bytes", len(r.By))
	}
	if len(r.Reason) > 4096 {
		return Errorf(CodeUsage, "audit", "the reason is %d bytes; at most 4096 are allowed", len(r.Reason))
	}
	for _, f := range []struct{ name, s string }{{"by", r.By}, {"reason", r.Reason}} {
		if !utf8.ValidString(f.s) {
			return Errorf(CodeUsage, "audit", "%s is not valid UTF-8", f.name)
		}
		for _, c := range f.s {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return Errorf(CodeUsage, "audit", "%s holds control character %U; use printable text", f.name, c)
			}
		}
	}
	return nil
}

// CapabilityImport is the Info capability of a persistence plugin whose
// backend is an Importer.
const CapabilityImport = "import"

// Importer is the optional persistence capability "import": the backend
// stores a whole session in one step, so that a failed or interrupted
// import leaves nothing under the id (docs/storage.md, "Importing"). It
// builds the session where no reader sees it and makes it visible at
// once. The host discovers it by type assertion on an in-process backend
// and by CapabilityImport in GetInfo on a plugin.
type Importer interface {
	// Import creates the session h (a header as Create takes it) holding
	// exactly the events that events passes to its yield, in order,
	// starting at seq 0: events calls yield with consecutive batches and
	// returns the first error yield returns, or its own. Each batch is
	// checked as Append checks it (ENVELOPE_INVALID, SEQ_NOT_CONTIGUOUS).
	// The batch buffers are valid only during the yield call.
	//
	// On success the session is stored and durable, and Import returns a
	// write handle on it (the claim held, NextSeq the number of events),
	// as Create does. On any failure — a refused batch, an error of
	// events, ctx ending, a storage error, the process dying — nothing is
	// visible under h.ID: Open is SESSION_NOT_FOUND, List and Stat do not
	// see it, and the id may be created or imported again. A session
	// stored or claimed under h.ID → SESSION_ALREADY_EXISTS, and nothing
	// changes. While it runs, the session is invisible too, also to List
	// in the same instance (unlike a pending Create); the instance may hold
	// its other calls back until the import ends (one that writes through
	// a single database connection), so events must not call it.
	Import(ctx context.Context, h Header, events func(yield func(batch [][]byte) error) error) (Opened, error)
}
