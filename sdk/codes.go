package sdk

//go:generate go run ./internal/errorsdoc/cmd/errorsdoc -in codes.go -out ../docs/errors.md

// The stable error codes, one const block per area. Each block's comment
// names its area ("<Area>: <summary>") and each code's comment gives its
// meaning first, then when it happens and what the error carries;
// docs/errors.md is generated from them.

// Identity and envelope: a session id, a seq or the envelope of an event that breaks the rules.
const (
	// A session id is empty, longer than 80 bytes, not valid UTF-8, or holds
	// a control byte. Raised when a session is created, opened, forked or
	// looked up; Detail gives the length or the offending byte and its position.
	CodeInvalidSessionID Code = "INVALID_SESSION_ID"
	// A seq, offset or clock time lies outside 0 … 2^53−1. Raised for a
	// caller-given first seq, a read position or an append's time; Detail
	// names the value and the allowed range.
	CodeInvalidSeq Code = "INVALID_SEQ"
	// An event envelope is malformed: a member is missing, unknown or of the
	// wrong type. Raised when stored lines are read back or restored, when a
	// backend checks a batch, and for a bad input line of logbook append;
	// Detail names the member and what was found.
	CodeEnvelopeInvalid Code = "ENVELOPE_INVALID"
	// An event type does not follow the type grammar. Raised on append and
	// restore for a type that is not lowercase segments joined by "/" or ":",
	// longer than 128 bytes, or a projection or plugin-record type of the
	// wrong shape; Detail quotes the type.
	CodeEventTypeInvalid Code = "EVENT_TYPE_INVALID"
	// An event type is reserved for someone else. Raised when a caller appends
	// a type only the store writes, and when a plugin declares a core type or
	// a type another loaded plugin already declares; Detail names the type and
	// the plugins.
	CodeEventTypeReserved Code = "EVENT_TYPE_RESERVED"
	// An appended event has a type this build does not know and is not marked
	// ignorable. Only ignorable events of unknown types may be appended;
	// Detail quotes the type.
	CodeUnknownEventType Code = "UNKNOWN_EVENT_TYPE"
	// An event is marked ignorable although its type must not be. Raised on
	// append and restore for core types, projection types and plugin types
	// declared not ignorable; Detail quotes the type.
	CodeIgnorableNotAllowed Code = "IGNORABLE_NOT_ALLOWED"
	// An event is not marked ignorable although its type requires it. Raised
	// on append and restore for plugin records and plugin types declared
	// ignorable; Detail quotes the type.
	CodeIgnorableRequired Code = "IGNORABLE_REQUIRED"
	// An event is larger than MaxEventBytes. Raised on append and restore
	// when the canonical envelope exceeds the limit or the raw input exceeds
	// twice the limit, and when one event does not fit a plugin call; Detail
	// gives the size and the limit, Seq and Index the event where known.
	CodeEventTooLarge Code = "EVENT_TOO_LARGE"
)

// Lossless JSON: event data that is not JSON logbook can store and give back byte for byte.
const (
	// The input is not well-formed JSON. Raised by the JSON validator for any
	// syntax error (NaN and a truncated string among them), and when a Go
	// value does not marshal; Detail gives the byte offset.
	CodeJSONSyntax Code = "JSON_SYNTAX"
	// The input holds invalid UTF-8 or an unpaired surrogate escape. Detail
	// gives the byte offset.
	CodeJSONInvalidUTF8 Code = "JSON_INVALID_UTF8"
	// An object has the same key twice, compared after unescaping. Detail
	// gives the JSON pointer of the object and the key.
	CodeJSONDuplicateKey Code = "JSON_DUPLICATE_KEY"
	// A number is negative zero, written as -0, -0.0e3 or a negative literal
	// that underflows to zero, or a Go float that is -0. Detail gives the
	// pointer and the literal.
	CodeJSONNegativeZero Code = "JSON_NEGATIVE_ZERO"
	// A number literal overflows a float64, such as 1e400. Detail gives the
	// pointer and the literal.
	CodeJSONNumberNotFinite Code = "JSON_NUMBER_NOT_FINITE"
	// An integer literal lies beyond ±(2^53−1), where a float64 loses
	// precision; the same value written with a fraction or exponent is
	// accepted. Detail gives the pointer and the literal.
	CodeJSONUnsafeInteger Code = "JSON_UNSAFE_INTEGER"
	// Arrays and objects are nested deeper than 512 levels. Detail gives the
	// pointer where the limit was passed.
	CodeJSONTooDeep Code = "JSON_TOO_DEEP"
)

// Payloads: event data that is valid JSON but not the shape its event type requires.
const (
	// Event data does not have the shape its type requires: a member is
	// missing, unknown, or of the wrong type. Raised on append and restore,
	// and by the bundled plugins for a malformed request; Detail gives the
	// JSON pointer and the rule.
	CodePayloadInvalid Code = "PAYLOAD_INVALID"
	// A message's role does not match its event type, such as a user/message
	// whose message role is not "user". Detail gives the pointer and the
	// expected role.
	CodeMessageRoleMismatch Code = "MESSAGE_ROLE_MISMATCH"
	// A message's source has a kind its event type does not allow, or a
	// member such as callId or compactionId that is not a non-empty string.
	// Detail gives the pointer and what is expected.
	CodeMessageSourceInvalid Code = "MESSAGE_SOURCE_INVALID"
	// A tool message's toolCallId differs from the callId of its source.
	// Detail quotes both ids.
	CodeToolCallIDMismatch Code = "TOOL_CALL_ID_MISMATCH"
	// A tool/result carries an error but isError is missing or false. Detail
	// gives the pointer of isError.
	CodeToolResultErrorWithoutIserror Code = "TOOL_RESULT_ERROR_WITHOUT_ISERROR"
	// A tool change (a tool addition or removal) appears in a message other
	// than a developer/message. Detail names the event type.
	CodeToolChangeRole Code = "TOOL_CHANGE_ROLE"
	// A tool change names the empty string as its tool. Detail gives the pointer.
	CodeToolChangeNameEmpty Code = "TOOL_CHANGE_NAME_EMPTY"
	// A tool addition carries the tool's definition inline instead of naming
	// a tool of the request header. Detail gives the pointer.
	CodeToolAdditionInlineDefinition Code = "TOOL_ADDITION_INLINE_DEFINITION"
	// A request/header carries a system prompt; the system prompt is a
	// system/message. Detail gives the pointer.
	CodeHeaderSystemForbidden Code = "HEADER_SYSTEM_FORBIDDEN"
	// A request/header has an empty tools list; leave tools out instead.
	CodeHeaderEmptyTools Code = "HEADER_EMPTY_TOOLS"
	// A request/header has an empty adapterDefaults object; leave it out instead.
	CodeHeaderEmptyAdapterDefaults Code = "HEADER_EMPTY_ADAPTER_DEFAULTS"
	// A header is malformed: a request/header payload of the wrong shape, or a
	// session header a backend or the plugin wire cannot accept. Detail names
	// the member and the rule; a wrapped cause gives the inner error.
	CodeHeaderInvalid Code = "HEADER_INVALID"
	// A request/header has a reason that is unknown or wrong for its place:
	// the first header of a log must be "initial", and "initial" may not
	// follow another header. Detail quotes the reason.
	CodeHeaderReasonInvalid Code = "HEADER_REASON_INVALID"
)

// Developer binding: a developer/message whose tool changes do not match the request/header it names.
const (
	// A developer/message has a headerSeq but no tool-addition block, or
	// tool-addition blocks but no headerSeq. A message that only removes
	// tools carries none. Detail names the first addition when one is missing.
	CodeDeveloperHeaderSeqMismatch Code = "DEVELOPER_HEADER_SEQ_MISMATCH"
	// A developer/message's headerSeq is not earlier than its own seq, or
	// points at an event that is not a request/header. Detail gives the seq
	// and the type found there.
	CodeDeveloperHeaderSeqInvalid Code = "DEVELOPER_HEADER_SEQ_INVALID"
	// A tool addition names a tool that the bound request/header does not
	// list exactly once. Detail names the tool, the headerSeq and the count found.
	CodeDeveloperToolNotInHeader Code = "DEVELOPER_TOOL_NOT_IN_HEADER"
	// A tool addition names a header tool that lacks a string description or
	// an object of parameters. Detail names the tool and the headerSeq.
	CodeDeveloperToolIncomplete Code = "DEVELOPER_TOOL_INCOMPLETE"
	// A tool named by a tool addition has deferLoading set to something other
	// than true. Detail names the tool and the value.
	CodeDeveloperToolDeferLoading Code = "DEVELOPER_TOOL_DEFER_LOADING"
)

// Surface: surfaceOp and sourceEventSeqs, which say how an event changes the conversation a model sees.
const (
	// Events do not carry consecutive seqs. Raised when a log is restored
	// with a gap or a repeat, and when a backend receives a batch whose seqs
	// do not run on from its first seq; Detail gives the index, the seq
	// found and the seq expected.
	CodeSeqNotContiguous Code = "SEQ_NOT_CONTIGUOUS"
	// An event whose type is not a surface type carries a surfaceOp, or an
	// atomic group holds more than one surface or projection event. Detail
	// names the type and its class, or the two members.
	CodeSurfaceOpNotAllowed Code = "SURFACE_OP_NOT_ALLOWED"
	// An event whose type may not name sources carries sourceEventSeqs.
	// Detail names the type and its class.
	CodeSourcesNotAllowed Code = "SOURCES_NOT_ALLOWED"
	// An event of a surface type has no surfaceOp. Detail names the type.
	CodeSurfaceMarkerRequired Code = "SURFACE_MARKER_REQUIRED"
	// A surfaceOp is neither "append" nor a replace with startSeq and endSeq
	// in 0 … 2^53−1. Detail quotes what was given.
	CodeSurfaceOpInvalid Code = "SURFACE_OP_INVALID"
	// A replace names an endpoint that is not earlier than the replacing
	// event's own seq. Detail gives the seq and both endpoints.
	CodeReplaceEndpointNotEarlier Code = "REPLACE_ENDPOINT_NOT_EARLIER"
	// An assistant/message carries sourceEventSeqs, which it may not.
	CodeAssistantSourcesForbidden Code = "ASSISTANT_SOURCES_FORBIDDEN"
	// sourceEventSeqs is not an array of seqs in 0 … 2^53−1. Detail quotes
	// the offending element.
	CodeSourcesInvalid Code = "SOURCES_INVALID"
	// sourceEventSeqs is present but empty; leave it out instead.
	CodeSourcesEmpty Code = "SOURCES_EMPTY"
	// sourceEventSeqs lists a seq more than once. Detail gives the seq.
	CodeSourcesDuplicate Code = "SOURCES_DUPLICATE"
	// sourceEventSeqs lists a seq that is not earlier than the event's own.
	// Detail gives both seqs.
	CodeSourcesNotEarlier Code = "SOURCES_NOT_EARLIER"
	// A replace's startSeq is not a node of the current surface. Detail gives the seq.
	CodeReplaceStartNotFound Code = "REPLACE_START_NOT_FOUND"
	// A replace's endSeq is not a node of the current surface. Detail gives the seq.
	CodeReplaceEndNotFound Code = "REPLACE_END_NOT_FOUND"
	// A replace's startSeq comes after its endSeq in surface order. Detail
	// gives both seqs and their positions.
	CodeReplaceReversed Code = "REPLACE_REVERSED"
	// A replace's sourceEventSeqs leave out a node the replace shadows.
	// Detail lists the missing seqs.
	CodeReplaceCoverage Code = "REPLACE_COVERAGE"
	// A rewrite of a tool/result shadows more or fewer than one node. Detail
	// gives the span and the count.
	CodeToolResultRewriteSingle Code = "TOOL_RESULT_REWRITE_SINGLE"
	// A tool/result rewrite replaces a node that is not a tool/result.
	// Detail gives the seq and its type.
	CodeToolResultRewriteTarget Code = "TOOL_RESULT_REWRITE_TARGET"
	// A tool/result rewrite changes more than the message content. Detail
	// gives the pointer of the first difference.
	CodeToolResultRewriteOnlyContent Code = "TOOL_RESULT_REWRITE_ONLY_CONTENT"
	// A replace or compaction would remove or merge the system message at
	// surface node 0; only one system/message replacing it alone may. Detail
	// names the replacing type and the span.
	CodeSystemNode0Protected Code = "SYSTEM_NODE0_PROTECTED"
)

// Projections: plugin-defined events that rewrite how earlier messages appear on the surface.
const (
	// A projection event's type has no registered definition: the plugin that
	// owns it is not loaded. Detail names the type and the owner.
	CodeProjectionRequired Code = "PROJECTION_REQUIRED"
	// A projection definition returned an error. The cause is wrapped; a log
	// that fails this way on restore is not treated as corrupt.
	CodeProjectionFailed Code = "PROJECTION_FAILED"
	// A projection named a target that is not a current message node, or
	// returned a message that is not lossless JSON or breaks the message
	// rules. Detail names the seq; a wrapped cause gives the inner error.
	CodeProjectionInvalid Code = "PROJECTION_INVALID"
	// A projection definition the session used is no longer registered, or
	// is now served by another plugin. Release the session and open it again
	// with the plugin loaded; Detail names the type.
	CodeProjectionRemoved Code = "PROJECTION_REMOVED"
	// Two loaded plugins serve the same projection type; the second fails to
	// load. Detail names the type and the plugin that has it.
	CodeProjectionDuplicate Code = "PROJECTION_DUPLICATE"
)

// Agent-loop protocol: an appended event that does not fit the turn, step and tool-call state folded from the log (docs/format.md).
const (
	// A turn/start was appended while a turn is open. Meta "open" names the
	// open turn, "turn" the one asked for.
	CodeTurnAlreadyOpen Code = "TURN_ALREADY_OPEN"
	// A turn/start is not numbered above every earlier turn. Meta "turn"
	// gives the number asked for, "last" the highest earlier turn.
	CodeTurnNotIncreasing Code = "TURN_NOT_INCREASING"
	// A turn/end, or an event that needs an open turn (a step/start, a
	// user/message), came when no turn is open or named another turn. Meta
	// "turn" gives the number asked for, "open" the open turn when there is
	// one; a user/message carries no turn, so its refusal has no Meta.
	CodeTurnNotOpen Code = "TURN_NOT_OPEN"
	// A step/start came while a step is open, or a turn/end while its step is
	// still open. Meta "step" names the open step.
	CodeStepAlreadyOpen Code = "STEP_ALREADY_OPEN"
	// A step/end named a step that is not open, or an assistant/message,
	// assistant/attempt, tool/call or tool/result came with no step open.
	// Meta "step" gives the number asked for, "open" the open step.
	CodeStepNotOpen Code = "STEP_NOT_OPEN"
	// A step/start is not numbered above the turn's earlier steps, or is
	// numbered 0 ("outside any step"). Meta "step" gives the number asked
	// for, "last" the turn's highest step ("0" when it has none).
	CodeStepNotIncreasing Code = "STEP_NOT_INCREASING"
	// An event's turn or step is not the open one (step 0, "outside any
	// step", is allowed for system/message and developer/message). Meta
	// "turn"/"step" give what the event carries, "openTurn"/"openStep" the
	// open ones.
	CodeTurnStepMismatch Code = "TURN_STEP_MISMATCH"
	// A tool/call names a call id no tool-call block of the open step's
	// assistant/message announced. Meta "callId" is the id itself.
	CodeToolCallNotAnnounced Code = "TOOL_CALL_NOT_ANNOUNCED"
	// A tool/call was already recorded for this call id in the open step, or
	// an assistant/message announces a call id the step already announced.
	// Meta "callId" is the id itself. A provider rendering (the openai,
	// anthropic and openai-responses formats) reports it too when one
	// message announces a call id twice, as a lenient or imported log may:
	// a result could not say which call it answers, so nothing is rendered;
	// there Meta "callIds" is a JSON array holding the id and Index names
	// the message.
	CodeToolCallRepeated Code = "TOOL_CALL_REPEATED"
	// A tool/result answers a call id the open step did not announce. Meta
	// "callId" is the id itself.
	CodeToolResultUnmatched Code = "TOOL_RESULT_UNMATCHED"
	// A tool/result answers a call the open step already has a result for.
	// Meta "callId" is the id itself and "resultSeq" gives the earlier
	// result's seq.
	CodeToolResultRepeated Code = "TOOL_RESULT_REPEATED"
	// A step/end, or a message other than a tool/result, came while calls
	// announced in the open step have no result. Meta "callIds" lists them;
	// a harness that gives up on a call writes an error result for it.
	CodeToolCallsUnanswered Code = "TOOL_CALLS_UNANSWERED"
)

// Provider renderings: a request body that a provider would refuse is not rendered.
const (
	// A provider rendering was asked for while a step's tool calls have no
	// result (the middle of a step: a live session, or --at inside a step).
	// Meta "callIds" lists the pending calls; logbook's own format still
	// renders the messages.
	CodeToolCallsPending Code = "TOOL_CALLS_PENDING"
	// The next request was asked for in a provider format, but the log holds
	// no request/header as of that seq to take the model and settings from.
	// Append a request/header, or ask for the logbook format.
	CodeRequestHeaderMissing Code = "REQUEST_HEADER_MISSING"
)

// Operation ids: an append that carries an operation id happens once,
// whatever the retries, processes and restarts (docs/format.md).
const (
	// The operation id is not 1–128 bytes of printable ASCII (0x20–0x7E).
	// Nothing was appended.
	CodeOperationIDInvalid Code = "OPERATION_ID_INVALID"
	// The session already holds the operation id, for other events than
	// these: nothing was appended. Meta "operationId" is the id, "firstSeq"
	// the seq of the original append's first event and "count" its number
	// of events.
	CodeOperationConflict Code = "OPERATION_CONFLICT"
)

// Session and store: the lifecycle of a session in a store: create, open, fork, release.
const (
	// The session was released or the store was closed; open the session
	// again to append.
	CodeSessionClosed Code = "SESSION_CLOSED"
	// The session is a read-only inspect view, or the server only reads
	// (logbook view); open it to append, through a server that writes.
	CodeSessionReadOnly Code = "SESSION_READ_ONLY"
	// A final persistence failure fenced the session: it takes no more
	// appends. The persistence error is wrapped; across the daemon the
	// metadata "fenced" is "true" on the errors of a fenced session.
	CodeSessionFenced Code = "SESSION_FENCED"
	// No session with this id is stored, or no persistence backend is
	// configured. It stays distinct from a corrupt or empty log.
	CodeSessionNotFound Code = "SESSION_NOT_FOUND"
	// A create names an id that is already live in this store or stored in a
	// backend. Detail names the id and the backend.
	CodeSessionAlreadyExists Code = "SESSION_ALREADY_EXISTS"
	// The session is not the live instance of this store or server: it was
	// never opened here, or was released concurrently. Open it first.
	CodeSessionNotLive Code = "SESSION_NOT_LIVE"
	// The session is under a legal hold, so it cannot be deleted (by hand
	// or by retention). logbook release-hold ID lifts the hold; Detail
	// names the session.
	CodeSessionHeld Code = "SESSION_HELD"
	// A fork boundary is outside the source log or not on an event of it.
	// Detail gives the boundary and the last seq.
	CodeInvalidBoundary Code = "INVALID_BOUNDARY"
	// A seed (the inherited events of a fork, or a restored log's inheritance
	// marker) breaks the seed rules, such as a header that says seeded with
	// no inherited end-seed event. Seq and Index point at the event.
	CodeSeedInvalid Code = "SEED_INVALID"
)

// Persistence: the backends that store logs, and the host's flushes to them.
const (
	// The session is already open for writing, by this store or another
	// process; only one writer may hold it. Readers are not refused.
	CodeAlreadyOwned Code = "ALREADY_OWNED"
	// The write claim was lost: the session was replaced or deleted since
	// this handle opened it, or another owner holds it after a reconnect.
	// Detail says which, with the incarnations where the backend has them.
	CodeOwnershipLost Code = "OWNERSHIP_LOST"
	// The handle was closed or never issued, as after a plugin restart. The
	// write-behind treats it as a lost handle: it opens the session again
	// and keeps the queued batch.
	CodeHandleClosed Code = "HANDLE_CLOSED"
	// The handle is broken: an append failed and cutting the file back failed
	// too, so the tail is unknown. Close the handle and open the session
	// again; the open cuts the torn tail. The failure is wrapped.
	CodeHandleBroken Code = "HANDLE_BROKEN"
	// An append went to a handle opened for reading. Detail names the handle.
	CodeReadOnlyHandle Code = "READ_ONLY_HANDLE"
	// An append expected a log length other than the one stored, so nothing
	// was appended. Meta "expected" and "actual" carry both lengths where the
	// append knows them; Seq is the planned first seq of a group.
	CodeSeqConflict Code = "SEQ_CONFLICT"
	// The stored log is shorter than events already acknowledged as durable.
	// Detail gives the backend and both lengths.
	CodeLogShrank Code = "LOG_SHRANK"
	// A stored log is damaged beyond a torn tail: an unreadable line or
	// header, or an event that breaks the log rules when it is restored. The
	// rule broken is wrapped, and Seq and Index point at the event where
	// known; logbook salvage keeps the valid prefix. It is never reported
	// as a missing session or an empty log.
	CodeCorruptLog Code = "CORRUPT_LOG"
	// A stored header names a different session than the one requested.
	// Detail quotes both ids.
	CodeIdentityMismatch Code = "IDENTITY_MISMATCH"
	// A JSONL log is stored with another compression than the backend is
	// configured with; nothing is converted implicitly. Detail names both.
	CodeCompressionMismatch Code = "COMPRESSION_MISMATCH"
	// An SQLite path is not a logbook database this build can use. Detail
	// names the path and what is wrong.
	CodeSchemaMismatch Code = "SCHEMA_MISMATCH"
	// The backend is locked by another connection and stayed locked past its
	// busy timeout, or an append found no room in the process's write-behind
	// bound (max_pending_bytes_total) within write_backpressure_timeout and
	// appended nothing. Detail names the path, or the bound, and the timeout.
	CodeBackendBusy Code = "BACKEND_BUSY"
	// Opening one more live session would pass the host's max_live_sessions
	// cap. Retry later, or release idle sessions; Detail names the cap.
	CodeTooManyLiveSessions Code = "TOO_MANY_LIVE_SESSIONS"
	// An I/O or transport failure: a file-system call failed, a listener
	// failed, or a plugin answered with a gRPC status that carries no logbook
	// error. The cause is wrapped.
	CodeIOError Code = "IO_ERROR"
	// A plugin process is not reachable: it failed to start or crashed, or a
	// call ended with gRPC Unavailable, DeadlineExceeded, Aborted or
	// Canceled and no logbook error. The host restarts a dead plugin with
	// backoff; Detail names the plugin. An embedding program that has no
	// way to run a bundled plugin its configuration names (no
	// logbook.ServePlugins, no Options.PluginBinary, or the plugin's bundle
	// package not imported) gets it from Open; Detail names the remedy.
	CodePluginUnavailable Code = "PLUGIN_UNAVAILABLE"
	// A flush did not make every appended event durable on every backend.
	// The failure of each backend is wrapped beneath it.
	CodeFlushFailed Code = "FLUSH_FAILED"
	// A mirror backend holds a different log than the primary: more events,
	// or other bytes at a seq. Detail names the mirror and the seq.
	CodeMirrorDiverged Code = "MIRROR_DIVERGED"
)

// Format: the format version of a stored log and the events a build can read from it.
const (
	// The log was written in a format version newer than this build reads.
	// Detail gives both versions; upgrade logbook to read it.
	CodeFormatTooNew Code = "FORMAT_TOO_NEW"
	// The log's format version is one this build does not support, or a
	// backend is asked to write a version it does not. Detail gives both versions.
	CodeFormatUnsupported Code = "FORMAT_UNSUPPORTED"
	// A stored event of a non-ignorable type is unknown to this build: it was
	// written by a newer build or by a plugin that is not loaded. Detail
	// quotes the type.
	CodeFormatUnknownEventType Code = "FORMAT_UNKNOWN_EVENT_TYPE"
	// A format migration would have to drop an unknown ignorable event, and
	// refuses instead; Detail names its type and seq. This build has no
	// migration step yet, so nothing raises it.
	CodeFormatMigrationRefused Code = "FORMAT_MIGRATION_REFUSED"
)

// Import: sessions imported from other tools' session files (docs/import.md).
const (
	// The session holds no source/line record of the tool asked for, so its
	// source file cannot be written back: it was not imported from that
	// tool's file. Raised by logbook export --format <tool>; Detail names the
	// session and the tool.
	CodeNotImported Code = "NOT_IMPORTED"
)

// Compaction: summarizing or pruning part of a session's surface.
const (
	// Another compaction or prune of this session is running or still open.
	// Detail names the open compaction and its start seq.
	CodeCompactionBusy Code = "COMPACTION_BUSY"
	// An automatic compaction was asked for outside a turn; it runs only
	// inside one.
	CodeCompactionNoOpenTurn Code = "COMPACTION_NO_OPEN_TURN"
	// A manual compaction was asked for while a turn is open, or a turn
	// started meanwhile. Detail gives the turn.
	CodeCompactionTurnOpen Code = "COMPACTION_TURN_OPEN"
	// The requested region is not on the measured surface; measure again.
	// Detail gives the region.
	CodeCompactionSurfaceMismatch Code = "COMPACTION_SURFACE_MISMATCH"
	// A compaction region's boundary is not balanced: it would split a tool
	// call from its result, or the region's start comes after its end. Seq
	// is the boundary.
	CodeCompactionUnbalancedBoundary Code = "COMPACTION_UNBALANCED_BOUNDARY"
	// No balanced span can be compacted: none before the newest node, or none
	// that fits a summary request. Detail gives the region or node count.
	CodeCompactionNoRange Code = "COMPACTION_NO_RANGE"
	// The surface changed while the summarizer ran, so the summary no longer
	// fits. Detail gives the node that changed.
	CodeCompactionChanged Code = "COMPACTION_CHANGED"
	// The checkpoint would not be smaller than the nodes it shadows. Detail
	// gives both token estimates.
	CodeCompactionNotSmaller Code = "COMPACTION_NOT_SMALLER"
	// The summarizer failed or returned usage or output that is not JSON. The
	// summarizer's error is wrapped.
	CodeCompactionSummaryFailed Code = "COMPACTION_SUMMARY_FAILED"
	// The compaction was cancelled during the summary or prune call.
	CodeCompactionCancelled Code = "COMPACTION_CANCELLED"
	// The summary, checkpoint and compaction/end could not be appended. The
	// append error is wrapped.
	CodeCompactionCommitFailed Code = "COMPACTION_COMMIT_FAILED"
	// The compaction's events were appended but not flushed. The flush error
	// is wrapped.
	CodeCompactionPersistenceFailed Code = "COMPACTION_PERSISTENCE_FAILED"
	// After its attempts, pressure compaction still measures at or above the
	// threshold. Detail gives the attempts, the tokens and the threshold.
	CodeCompactionStillAboveThreshold Code = "COMPACTION_STILL_ABOVE_THRESHOLD"
	// The context window of a model is unknown, so pressure compaction is
	// off for it. It is a warning in the report, not a failed call.
	CodeCompactionCapacityUnknown Code = "COMPACTION_CAPACITY_UNKNOWN"
	// A compaction would break one of the rules that keep the surface sound.
	// Detail names the rule.
	CodeCompactionInvariant Code = "COMPACTION_INVARIANT"
	// The tool pairing of the surface is inconsistent: a tool/result without
	// a tool call before it. Seq is the node.
	CodeToolPairingCorrupt Code = "TOOL_PAIRING_CORRUPT"
	// A seq given to the tool-pairing meter is not a current surface node.
	// Seq is the one given.
	CodeToolPairingSeqNotFound Code = "TOOL_PAIRING_SEQ_NOT_FOUND"
)

// Configuration and command line: settings and invocations that are wrong before any session is touched.
const (
	// A configuration value is missing, out of range or inconsistent: in the
	// config file, the engine, the server or a compaction policy. Detail
	// names the setting and the allowed values.
	CodeConfigInvalid Code = "CONFIG_INVALID"
	// A command or request is malformed: bad flags or arguments of the
	// command line (exit status 2), or a daemon or plugin call whose
	// arguments do not fit together. Detail says what was expected.
	CodeUsage Code = "USAGE"
)

// HTTP API: requests the /v1 JSON API of logbook serve refuses before any operation runs.
const (
	// A request carries no credential, or one the server does not accept
	// (unknown, revoked or expired), and the server requires one. Send
	// "Authorization: Bearer <credential>": a token of logbook token
	// create, a JWT, or the token of the server's --token-file.
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	// No route of the API has the request's path. Detail names the path;
	// the API's routes are listed in docs/openapi.json.
	CodeRouteNotFound Code = "ROUTE_NOT_FOUND"
	// The request's path is a route, but not for its method. Detail names
	// the method; the Allow header lists the methods the route takes.
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// The request body's Content-Type is not the one the route reads
	// (application/json, or application/x-ndjson for appends). Detail names
	// both.
	CodeUnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// A request body (or one line of an NDJSON body) is larger than the
	// server's request limit. Detail gives the limit; nothing was applied.
	CodeRequestTooLarge Code = "REQUEST_TOO_LARGE"
	// A request to a loopback server names a Host the server does not
	// accept (a DNS-rebinding guard). Detail names the host; add it with
	// serve's allowed_hosts when it is yours.
	CodeHostNotAllowed Code = "HOST_NOT_ALLOWED"
	// A request carries an Origin other than the server's own (a page of
	// another site). Detail names the origin; add it with serve's
	// allowed_origins when it is yours.
	CodeOriginNotAllowed Code = "ORIGIN_NOT_ALLOWED"
	// The request's credential is valid, but its role does not allow the
	// operation (docs/operations.md, "Security model", "Roles"). Detail
	// names the role held and the role needed. It is answered before the
	// session is looked up, so it says nothing about whether it exists.
	CodePermissionDenied Code = "PERMISSION_DENIED"
	// A tenant name does not match [a-z0-9][a-z0-9-]{0,62}. Detail names
	// the rule and the offending byte.
	CodeTenantInvalid Code = "TENANT_INVALID"
)

// Tool-error codes in data: strings stored in a tool/result's data.error.code, never returned as Go errors.
const (
	// The tool call never started: the model asked for it but no tool/call
	// was recorded before the turn was cut short by a crash or a fork. The
	// recovery that closes the open turn records this result.
	ToolErrorNotStarted = "TOOL_NOT_STARTED"
	// The tool call may or may not have run: its tool/call was recorded but
	// no tool/result before the turn was cut short by a crash or a fork.
	// Repeat the call only when repeating is harmless.
	ToolErrorOutcomeUnknown = "TOOL_OUTCOME_UNKNOWN"
	// The tool call was aborted during the flush an agent loop makes before
	// dispatching it, so it never ran.
	ToolErrorAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
)

// AllCodes returns every stable code, in the order they are declared, as a fresh slice.
func AllCodes() []Code {
	return []Code{
		CodeInvalidSessionID,
		CodeInvalidSeq,
		CodeEnvelopeInvalid,
		CodeEventTypeInvalid,
		CodeEventTypeReserved,
		CodeUnknownEventType,
		CodeIgnorableNotAllowed,
		CodeIgnorableRequired,
		CodeEventTooLarge,
		CodeJSONSyntax,
		CodeJSONInvalidUTF8,
		CodeJSONDuplicateKey,
		CodeJSONNegativeZero,
		CodeJSONNumberNotFinite,
		CodeJSONUnsafeInteger,
		CodeJSONTooDeep,
		CodePayloadInvalid,
		CodeMessageRoleMismatch,
		CodeMessageSourceInvalid,
		CodeToolCallIDMismatch,
		CodeToolResultErrorWithoutIserror,
		CodeToolChangeRole,
		CodeToolChangeNameEmpty,
		CodeToolAdditionInlineDefinition,
		CodeHeaderSystemForbidden,
		CodeHeaderEmptyTools,
		CodeHeaderEmptyAdapterDefaults,
		CodeHeaderInvalid,
		CodeHeaderReasonInvalid,
		CodeDeveloperHeaderSeqMismatch,
		CodeDeveloperHeaderSeqInvalid,
		CodeDeveloperToolNotInHeader,
		CodeDeveloperToolIncomplete,
		CodeDeveloperToolDeferLoading,
		CodeSeqNotContiguous,
		CodeSurfaceOpNotAllowed,
		CodeSourcesNotAllowed,
		CodeSurfaceMarkerRequired,
		CodeSurfaceOpInvalid,
		CodeReplaceEndpointNotEarlier,
		CodeAssistantSourcesForbidden,
		CodeSourcesInvalid,
		CodeSourcesEmpty,
		CodeSourcesDuplicate,
		CodeSourcesNotEarlier,
		CodeReplaceStartNotFound,
		CodeReplaceEndNotFound,
		CodeReplaceReversed,
		CodeReplaceCoverage,
		CodeToolResultRewriteSingle,
		CodeToolResultRewriteTarget,
		CodeToolResultRewriteOnlyContent,
		CodeSystemNode0Protected,
		CodeProjectionRequired,
		CodeProjectionFailed,
		CodeProjectionInvalid,
		CodeProjectionRemoved,
		CodeProjectionDuplicate,
		CodeTurnAlreadyOpen,
		CodeTurnNotIncreasing,
		CodeTurnNotOpen,
		CodeStepAlreadyOpen,
		CodeStepNotOpen,
		CodeStepNotIncreasing,
		CodeTurnStepMismatch,
		CodeToolCallNotAnnounced,
		CodeToolCallRepeated,
		CodeToolResultUnmatched,
		CodeToolResultRepeated,
		CodeToolCallsUnanswered,
		CodeToolCallsPending,
		CodeRequestHeaderMissing,
		CodeOperationIDInvalid,
		CodeOperationConflict,
		CodeSessionClosed,
		CodeSessionReadOnly,
		CodeSessionFenced,
		CodeSessionNotFound,
		CodeSessionAlreadyExists,
		CodeSessionNotLive,
		CodeSessionHeld,
		CodeInvalidBoundary,
		CodeSeedInvalid,
		CodeAlreadyOwned,
		CodeOwnershipLost,
		CodeHandleClosed,
		CodeHandleBroken,
		CodeReadOnlyHandle,
		CodeSeqConflict,
		CodeLogShrank,
		CodeCorruptLog,
		CodeIdentityMismatch,
		CodeCompressionMismatch,
		CodeSchemaMismatch,
		CodeBackendBusy,
		CodeTooManyLiveSessions,
		CodeIOError,
		CodePluginUnavailable,
		CodeFlushFailed,
		CodeMirrorDiverged,
		CodeFormatTooNew,
		CodeFormatUnsupported,
		CodeFormatUnknownEventType,
		CodeFormatMigrationRefused,
		CodeNotImported,
		CodeCompactionBusy,
		CodeCompactionNoOpenTurn,
		CodeCompactionTurnOpen,
		CodeCompactionSurfaceMismatch,
		CodeCompactionUnbalancedBoundary,
		CodeCompactionNoRange,
		CodeCompactionChanged,
		CodeCompactionNotSmaller,
		CodeCompactionSummaryFailed,
		CodeCompactionCancelled,
		CodeCompactionCommitFailed,
		CodeCompactionPersistenceFailed,
		CodeCompactionStillAboveThreshold,
		CodeCompactionCapacityUnknown,
		CodeCompactionInvariant,
		CodeToolPairingCorrupt,
		CodeToolPairingSeqNotFound,
		CodeConfigInvalid,
		CodeUsage,
		CodeUnauthenticated,
		CodeRouteNotFound,
		CodeMethodNotAllowed,
		CodeUnsupportedMediaType,
		CodeRequestTooLarge,
		CodeHostNotAllowed,
		CodeOriginNotAllowed,
		CodePermissionDenied,
		CodeTenantInvalid,
	}
}
