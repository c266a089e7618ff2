package sdk

// The stable error codes of SPEC §1.4, grouped by area.
const (
	// Identity, envelope (§2, §4)
	CodeInvalidSessionID    Code = "INVALID_SESSION_ID"
	CodeInvalidSeq          Code = "INVALID_SEQ"
	CodeEnvelopeInvalid     Code = "ENVELOPE_INVALID"
	CodeEventTypeInvalid    Code = "EVENT_TYPE_INVALID"
	CodeEventTypeReserved   Code = "EVENT_TYPE_RESERVED"
	CodeUnknownEventType    Code = "UNKNOWN_EVENT_TYPE"
	CodeIgnorableNotAllowed Code = "IGNORABLE_NOT_ALLOWED"
	CodeIgnorableRequired   Code = "IGNORABLE_REQUIRED"
	CodeEventTooLarge       Code = "EVENT_TOO_LARGE"
	// Lossless JSON (§3)
	CodeJSONSyntax          Code = "JSON_SYNTAX"
	CodeJSONInvalidUTF8     Code = "JSON_INVALID_UTF8"
	CodeJSONDuplicateKey    Code = "JSON_DUPLICATE_KEY"
	CodeJSONNegativeZero    Code = "JSON_NEGATIVE_ZERO"
	CodeJSONNumberNotFinite Code = "JSON_NUMBER_NOT_FINITE"
	CodeJSONUnsafeInteger   Code = "JSON_UNSAFE_INTEGER"
	CodeJSONTooDeep         Code = "JSON_TOO_DEEP"
	// Payloads (§5, §6.4)
	CodePayloadInvalid                Code = "PAYLOAD_INVALID"
	CodeMessageRoleMismatch           Code = "MESSAGE_ROLE_MISMATCH"
	CodeMessageSourceInvalid          Code = "MESSAGE_SOURCE_INVALID"
	CodeToolCallIDMismatch            Code = "TOOL_CALL_ID_MISMATCH"
	CodeToolResultErrorWithoutIserror Code = "TOOL_RESULT_ERROR_WITHOUT_ISERROR"
	CodeToolChangeRole                Code = "TOOL_CHANGE_ROLE"
	CodeToolChangeNameEmpty           Code = "TOOL_CHANGE_NAME_EMPTY"
	CodeToolAdditionInlineDefinition  Code = "TOOL_ADDITION_INLINE_DEFINITION"
	CodeHeaderSystemForbidden         Code = "HEADER_SYSTEM_FORBIDDEN"
	CodeHeaderEmptyTools              Code = "HEADER_EMPTY_TOOLS"
	CodeHeaderEmptyAdapterDefaults    Code = "HEADER_EMPTY_ADAPTER_DEFAULTS"
	CodeHeaderInvalid                 Code = "HEADER_INVALID"
	CodeHeaderReasonInvalid           Code = "HEADER_REASON_INVALID"
	// Developer binding (§8.3)
	CodeDeveloperHeaderSeqMismatch Code = "DEVELOPER_HEADER_SEQ_MISMATCH"
	CodeDeveloperHeaderSeqInvalid  Code = "DEVELOPER_HEADER_SEQ_INVALID"
	CodeDeveloperToolNotInHeader   Code = "DEVELOPER_TOOL_NOT_IN_HEADER"
	CodeDeveloperToolIncomplete    Code = "DEVELOPER_TOOL_INCOMPLETE"
	CodeDeveloperToolDeferLoading  Code = "DEVELOPER_TOOL_DEFER_LOADING"
	// Surface (§6.3)
	CodeSeqNotContiguous             Code = "SEQ_NOT_CONTIGUOUS"
	CodeSurfaceOpNotAllowed          Code = "SURFACE_OP_NOT_ALLOWED"
	CodeSourcesNotAllowed            Code = "SOURCES_NOT_ALLOWED"
	CodeSurfaceMarkerRequired        Code = "SURFACE_MARKER_REQUIRED"
	CodeSurfaceOpInvalid             Code = "SURFACE_OP_INVALID"
	CodeReplaceEndpointNotEarlier    Code = "REPLACE_ENDPOINT_NOT_EARLIER"
	CodeAssistantSourcesForbidden    Code = "ASSISTANT_SOURCES_FORBIDDEN"
	CodeSourcesInvalid               Code = "SOURCES_INVALID"
	CodeSourcesEmpty                 Code = "SOURCES_EMPTY"
	CodeSourcesDuplicate             Code = "SOURCES_DUPLICATE"
	CodeSourcesNotEarlier            Code = "SOURCES_NOT_EARLIER"
	CodeReplaceStartNotFound         Code = "REPLACE_START_NOT_FOUND"
	CodeReplaceEndNotFound           Code = "REPLACE_END_NOT_FOUND"
	CodeReplaceReversed              Code = "REPLACE_REVERSED"
	CodeReplaceCoverage              Code = "REPLACE_COVERAGE"
	CodeToolResultRewriteSingle      Code = "TOOL_RESULT_REWRITE_SINGLE"
	CodeToolResultRewriteTarget      Code = "TOOL_RESULT_REWRITE_TARGET"
	CodeToolResultRewriteOnlyContent Code = "TOOL_RESULT_REWRITE_ONLY_CONTENT"
	CodeSystemNode0Protected         Code = "SYSTEM_NODE0_PROTECTED"
	// Projections (§19)
	CodeProjectionRequired  Code = "PROJECTION_REQUIRED"
	CodeProjectionFailed    Code = "PROJECTION_FAILED"
	CodeProjectionInvalid   Code = "PROJECTION_INVALID"
	CodeProjectionRemoved   Code = "PROJECTION_REMOVED"
	CodeProjectionDuplicate Code = "PROJECTION_DUPLICATE"
	// Session, store (§10, §11)
	CodeSessionClosed        Code = "SESSION_CLOSED"
	CodeSessionReadOnly      Code = "SESSION_READ_ONLY"
	CodeSessionFenced        Code = "SESSION_FENCED"
	CodeSessionNotFound      Code = "SESSION_NOT_FOUND"
	CodeSessionAlreadyExists Code = "SESSION_ALREADY_EXISTS"
	CodeSessionNotLive       Code = "SESSION_NOT_LIVE"
	CodeInvalidBoundary      Code = "INVALID_BOUNDARY"
	CodeSeedInvalid          Code = "SEED_INVALID"
	// Persistence (§12–§14)
	CodeAlreadyOwned        Code = "ALREADY_OWNED"
	CodeOwnershipLost       Code = "OWNERSHIP_LOST"
	CodeHandleClosed        Code = "HANDLE_CLOSED"
	CodeHandleBroken        Code = "HANDLE_BROKEN"
	CodeReadOnlyHandle      Code = "READ_ONLY_HANDLE"
	CodeSeqConflict         Code = "SEQ_CONFLICT"
	CodeLogShrank           Code = "LOG_SHRANK"
	CodeCorruptLog          Code = "CORRUPT_LOG"
	CodeIdentityMismatch    Code = "IDENTITY_MISMATCH"
	CodeCompressionMismatch Code = "COMPRESSION_MISMATCH"
	CodeSchemaMismatch      Code = "SCHEMA_MISMATCH"
	CodeBackendBusy         Code = "BACKEND_BUSY"
	CodeIOError             Code = "IO_ERROR"
	CodePluginUnavailable   Code = "PLUGIN_UNAVAILABLE"
	CodeFlushFailed         Code = "FLUSH_FAILED"
	CodeMirrorDiverged      Code = "MIRROR_DIVERGED"
	// Format (§15)
	CodeFormatTooNew           Code = "FORMAT_TOO_NEW"
	CodeFormatUnsupported      Code = "FORMAT_UNSUPPORTED"
	CodeFormatUnknownEventType Code = "FORMAT_UNKNOWN_EVENT_TYPE"
	CodeFormatMigrationRefused Code = "FORMAT_MIGRATION_REFUSED"
	// Compaction (§16–§18)
	CodeCompactionBusy                Code = "COMPACTION_BUSY"
	CodeCompactionNoOpenTurn          Code = "COMPACTION_NO_OPEN_TURN"
	CodeCompactionTurnOpen            Code = "COMPACTION_TURN_OPEN"
	CodeCompactionSurfaceMismatch     Code = "COMPACTION_SURFACE_MISMATCH"
	CodeCompactionUnbalancedBoundary  Code = "COMPACTION_UNBALANCED_BOUNDARY"
	CodeCompactionNoRange             Code = "COMPACTION_NO_RANGE"
	CodeCompactionChanged             Code = "COMPACTION_CHANGED"
	CodeCompactionNotSmaller          Code = "COMPACTION_NOT_SMALLER"
	CodeCompactionSummaryFailed       Code = "COMPACTION_SUMMARY_FAILED"
	CodeCompactionCancelled           Code = "COMPACTION_CANCELLED"
	CodeCompactionCommitFailed        Code = "COMPACTION_COMMIT_FAILED"
	CodeCompactionPersistenceFailed   Code = "COMPACTION_PERSISTENCE_FAILED"
	CodeCompactionStillAboveThreshold Code = "COMPACTION_STILL_ABOVE_THRESHOLD"
	CodeCompactionCapacityUnknown     Code = "COMPACTION_CAPACITY_UNKNOWN"
	CodeCompactionInvariant           Code = "COMPACTION_INVARIANT"
	CodeToolPairingCorrupt            Code = "TOOL_PAIRING_CORRUPT"
	CodeToolPairingSeqNotFound        Code = "TOOL_PAIRING_SEQ_NOT_FOUND"
	CodeConfigInvalid                 Code = "CONFIG_INVALID"
	// Command line
	CodeUsage Code = "USAGE"
)

// Sentinels: one per code, for errors.Is(err, sdk.ErrXxx). They are the codes
// themselves, so they are constants and cannot be reassigned.
const (
	ErrInvalidSessionID              = CodeInvalidSessionID
	ErrInvalidSeq                    = CodeInvalidSeq
	ErrEnvelopeInvalid               = CodeEnvelopeInvalid
	ErrEventTypeInvalid              = CodeEventTypeInvalid
	ErrEventTypeReserved             = CodeEventTypeReserved
	ErrUnknownEventType              = CodeUnknownEventType
	ErrIgnorableNotAllowed           = CodeIgnorableNotAllowed
	ErrIgnorableRequired             = CodeIgnorableRequired
	ErrEventTooLarge                 = CodeEventTooLarge
	ErrJSONSyntax                    = CodeJSONSyntax
	ErrJSONInvalidUTF8               = CodeJSONInvalidUTF8
	ErrJSONDuplicateKey              = CodeJSONDuplicateKey
	ErrJSONNegativeZero              = CodeJSONNegativeZero
	ErrJSONNumberNotFinite           = CodeJSONNumberNotFinite
	ErrJSONUnsafeInteger             = CodeJSONUnsafeInteger
	ErrJSONTooDeep                   = CodeJSONTooDeep
	ErrPayloadInvalid                = CodePayloadInvalid
	ErrMessageRoleMismatch           = CodeMessageRoleMismatch
	ErrMessageSourceInvalid          = CodeMessageSourceInvalid
	ErrToolCallIDMismatch            = CodeToolCallIDMismatch
	ErrToolResultErrorWithoutIserror = CodeToolResultErrorWithoutIserror
	ErrToolChangeRole                = CodeToolChangeRole
	ErrToolChangeNameEmpty           = CodeToolChangeNameEmpty
	ErrToolAdditionInlineDefinition  = CodeToolAdditionInlineDefinition
	ErrHeaderSystemForbidden         = CodeHeaderSystemForbidden
	ErrHeaderEmptyTools              = CodeHeaderEmptyTools
	ErrHeaderEmptyAdapterDefaults    = CodeHeaderEmptyAdapterDefaults
	ErrHeaderInvalid                 = CodeHeaderInvalid
	ErrHeaderReasonInvalid           = CodeHeaderReasonInvalid
	ErrDeveloperHeaderSeqMismatch    = CodeDeveloperHeaderSeqMismatch
	ErrDeveloperHeaderSeqInvalid     = CodeDeveloperHeaderSeqInvalid
	ErrDeveloperToolNotInHeader      = CodeDeveloperToolNotInHeader
	ErrDeveloperToolIncomplete       = CodeDeveloperToolIncomplete
	ErrDeveloperToolDeferLoading     = CodeDeveloperToolDeferLoading
	ErrSeqNotContiguous              = CodeSeqNotContiguous
	ErrSurfaceOpNotAllowed           = CodeSurfaceOpNotAllowed
	ErrSourcesNotAllowed             = CodeSourcesNotAllowed
	ErrSurfaceMarkerRequired         = CodeSurfaceMarkerRequired
	ErrSurfaceOpInvalid              = CodeSurfaceOpInvalid
	ErrReplaceEndpointNotEarlier     = CodeReplaceEndpointNotEarlier
	ErrAssistantSourcesForbidden     = CodeAssistantSourcesForbidden
	ErrSourcesInvalid                = CodeSourcesInvalid
	ErrSourcesEmpty                  = CodeSourcesEmpty
	ErrSourcesDuplicate              = CodeSourcesDuplicate
	ErrSourcesNotEarlier             = CodeSourcesNotEarlier
	ErrReplaceStartNotFound          = CodeReplaceStartNotFound
	ErrReplaceEndNotFound            = CodeReplaceEndNotFound
	ErrReplaceReversed               = CodeReplaceReversed
	ErrReplaceCoverage               = CodeReplaceCoverage
	ErrToolResultRewriteSingle       = CodeToolResultRewriteSingle
	ErrToolResultRewriteTarget       = CodeToolResultRewriteTarget
	ErrToolResultRewriteOnlyContent  = CodeToolResultRewriteOnlyContent
	ErrSystemNode0Protected          = CodeSystemNode0Protected
	ErrProjectionRequired            = CodeProjectionRequired
	ErrProjectionFailed              = CodeProjectionFailed
	ErrProjectionInvalid             = CodeProjectionInvalid
	ErrProjectionRemoved             = CodeProjectionRemoved
	ErrProjectionDuplicate           = CodeProjectionDuplicate
	ErrSessionClosed                 = CodeSessionClosed
	ErrSessionReadOnly               = CodeSessionReadOnly
	ErrSessionFenced                 = CodeSessionFenced
	ErrSessionNotFound               = CodeSessionNotFound
	ErrSessionAlreadyExists          = CodeSessionAlreadyExists
	ErrSessionNotLive                = CodeSessionNotLive
	ErrInvalidBoundary               = CodeInvalidBoundary
	ErrSeedInvalid                   = CodeSeedInvalid
	ErrAlreadyOwned                  = CodeAlreadyOwned
	ErrOwnershipLost                 = CodeOwnershipLost
	ErrHandleClosed                  = CodeHandleClosed
	ErrHandleBroken                  = CodeHandleBroken
	ErrReadOnlyHandle                = CodeReadOnlyHandle
	ErrSeqConflict                   = CodeSeqConflict
	ErrLogShrank                     = CodeLogShrank
	ErrCorruptLog                    = CodeCorruptLog
	ErrIdentityMismatch              = CodeIdentityMismatch
	ErrCompressionMismatch           = CodeCompressionMismatch
	ErrSchemaMismatch                = CodeSchemaMismatch
	ErrBackendBusy                   = CodeBackendBusy
	ErrIOError                       = CodeIOError
	ErrPluginUnavailable             = CodePluginUnavailable
	ErrFlushFailed                   = CodeFlushFailed
	ErrMirrorDiverged                = CodeMirrorDiverged
	ErrFormatTooNew                  = CodeFormatTooNew
	ErrFormatUnsupported             = CodeFormatUnsupported
	ErrFormatUnknownEventType        = CodeFormatUnknownEventType
	ErrFormatMigrationRefused        = CodeFormatMigrationRefused
	ErrCompactionBusy                = CodeCompactionBusy
	ErrCompactionNoOpenTurn          = CodeCompactionNoOpenTurn
	ErrCompactionTurnOpen            = CodeCompactionTurnOpen
	ErrCompactionSurfaceMismatch     = CodeCompactionSurfaceMismatch
	ErrCompactionUnbalancedBoundary  = CodeCompactionUnbalancedBoundary
	ErrCompactionNoRange             = CodeCompactionNoRange
	ErrCompactionChanged             = CodeCompactionChanged
	ErrCompactionNotSmaller          = CodeCompactionNotSmaller
	ErrCompactionSummaryFailed       = CodeCompactionSummaryFailed
	ErrCompactionCancelled           = CodeCompactionCancelled
	ErrCompactionCommitFailed        = CodeCompactionCommitFailed
	ErrCompactionPersistenceFailed   = CodeCompactionPersistenceFailed
	ErrCompactionStillAboveThreshold = CodeCompactionStillAboveThreshold
	ErrCompactionCapacityUnknown     = CodeCompactionCapacityUnknown
	ErrCompactionInvariant           = CodeCompactionInvariant
	ErrToolPairingCorrupt            = CodeToolPairingCorrupt
	ErrToolPairingSeqNotFound        = CodeToolPairingSeqNotFound
	ErrConfigInvalid                 = CodeConfigInvalid
	ErrUsage                         = CodeUsage
)

// AllCodes returns every stable code in the order of SPEC §1.4, as a fresh slice.
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
		CodeSessionClosed,
		CodeSessionReadOnly,
		CodeSessionFenced,
		CodeSessionNotFound,
		CodeSessionAlreadyExists,
		CodeSessionNotLive,
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
		CodeIOError,
		CodePluginUnavailable,
		CodeFlushFailed,
		CodeMirrorDiverged,
		CodeFormatTooNew,
		CodeFormatUnsupported,
		CodeFormatUnknownEventType,
		CodeFormatMigrationRefused,
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
	}
}
