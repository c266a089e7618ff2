package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
)

// ProblemContentType is the media type of every error response (RFC 9457).
const ProblemContentType = "application/problem+json"

// problemTypePrefix starts a problem's type URI; the code follows it.
const problemTypePrefix = "urn:logbook:error:"

// Problem is the body of an error response: the members of RFC 9457 (type,
// title, status, detail) plus the logbook error's code and details. The
// integer details are JSON numbers; an absent one is left out.
type Problem struct {
	Type      string `json:"type"`   // "urn:logbook:error:<CODE>"
	Title     string `json:"title"`  // the code in words, the same for every occurrence
	Status    int    `json:"status"` // the HTTP status, Status(Code)
	Detail    string `json:"detail"` // the whole error message
	Code      string `json:"code"`   // the logbook code (docs/errors.md)
	Op        string `json:"op,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Seq       *int64 `json:"seq,omitempty"`   // the offending seq
	Index     *int   `json:"index,omitempty"` // the offending input's position in the request, from 0
	Line      *int   `json:"line,omitempty"`  // the offending NDJSON line, from 1
	// Appended and FirstSeq are set on every error of an append: how many
	// of the request's events were appended before the failure, and the seq
	// of the first of them (or the log length the append found when none
	// was).
	Appended *int64 `json:"appended,omitempty"`
	FirstSeq *int64 `json:"firstSeq,omitempty"`
	// Expected and Actual are a SEQ_CONFLICT's log lengths.
	Expected *int64 `json:"expected,omitempty"`
	Actual   *int64 `json:"actual,omitempty"`
	// Fenced is true when a final persistence failure fenced the session.
	Fenced bool   `json:"fenced,omitempty"`
	Cause  string `json:"cause,omitempty"`
	// Meta holds any other machine-readable detail of the error, by name.
	Meta map[string]string `json:"meta,omitempty"`
}

// intMeta are the Meta entries of an sdk.Error that a Problem carries as
// numbers of its own.
var intMeta = map[string]func(*Problem) **int64{
	"appended": func(p *Problem) **int64 { return &p.Appended },
	"firstSeq": func(p *Problem) **int64 { return &p.FirstSeq },
	"expected": func(p *Problem) **int64 { return &p.Expected },
	"actual":   func(p *Problem) **int64 { return &p.Actual },
}

// NewProblem returns the problem of err: its logbook code (IO_ERROR for
// an error without one; a context's end is PLUGIN_UNAVAILABLE for a
// cancellation, and the host's stop too), the status the code maps to, and
// the error's details.
func NewProblem(err error) *Problem {
	e := sdk.ErrorOf(err)
	if e == nil {
		e = &sdk.Error{Code: sdk.CodeIOError, Op: "server", Detail: err.Error()}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, host.ErrStopping) {
			e.Code = sdk.CodePluginUnavailable
		}
	}
	p := &Problem{
		Type: problemTypePrefix + string(e.Code), Title: Title(e.Code), Status: Status(e.Code),
		Detail: errinfo.Clip(err.Error()), Code: string(e.Code),
		Op: e.Op, SessionID: e.SessionID, Seq: e.Seq, Index: e.Index,
	}
	if e.Err != nil {
		p.Cause = errinfo.Clip(e.Err.Error())
	}
	for k, v := range e.Meta {
		if field, ok := intMeta[k]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				*field(p) = &n
				continue
			}
		}
		if p.Meta == nil {
			p.Meta = map[string]string{}
		}
		p.Meta[k] = errinfo.Clip(v)
	}
	return p
}

// problemf returns the problem of a new error with code and a detail.
func problemf(code sdk.Code, format string, args ...any) *Problem {
	return NewProblem(sdk.Errorf(code, "http", format, args...))
}

// Write writes p as the response, with its status.
func (p *Problem) Write(w http.ResponseWriter) {
	b, _ := json.Marshal(p) // plain strings, numbers and a string map: it cannot fail
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set(CodeHeader, p.Code)
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(b, '\n'))
}

// CodeHeader is the response header that carries the code of a failed
// request, the same one the Connect service sets.
const CodeHeader = "Logbook-Code"

// Title returns the code in words ("SEQ_CONFLICT" → "Seq conflict"), a
// problem's title.
func Title(c sdk.Code) string {
	s := strings.ToLower(strings.ReplaceAll(string(c), "_", " "))
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Status returns the HTTP status of a logbook code (statuses); a code
// outside the table (none of sdk.AllCodes) is 500.
func Status(c sdk.Code) int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// statuses maps every logbook code to the HTTP status its problem carries:
// 400 a request that is malformed, 401 no valid token, 404 nothing there,
// 405 a route without the method, 409 a conflict with the session's state
// or ownership, 413 too large, 415 the wrong media type, 422 well formed
// but breaking a rule, 500 a failure of the server or its storage, 503
// unavailable for now (retry).
var statuses = map[sdk.Code]int{}

func init() {
	groups := []struct {
		status int
		codes  []sdk.Code
	}{
		{http.StatusBadRequest, []sdk.Code{
			sdk.CodeInvalidSessionID, sdk.CodeInvalidSeq, sdk.CodeEnvelopeInvalid,
			sdk.CodeJSONSyntax, sdk.CodeJSONInvalidUTF8, sdk.CodeUsage, sdk.CodeOperationIDInvalid,
			sdk.CodeTenantInvalid,
		}},
		{http.StatusUnauthorized, []sdk.Code{sdk.CodeUnauthenticated}},
		{http.StatusNotFound, []sdk.Code{sdk.CodeSessionNotFound, sdk.CodeRouteNotFound}},
		{http.StatusMethodNotAllowed, []sdk.Code{sdk.CodeMethodNotAllowed}},
		{http.StatusConflict, []sdk.Code{
			sdk.CodeSessionClosed, sdk.CodeSessionReadOnly, sdk.CodeSessionFenced,
			sdk.CodeSessionAlreadyExists, sdk.CodeSessionNotLive, sdk.CodeSessionHeld,
			sdk.CodeAlreadyOwned, sdk.CodeOwnershipLost, sdk.CodeHandleClosed,
			sdk.CodeHandleBroken, sdk.CodeReadOnlyHandle, sdk.CodeSeqConflict,
			sdk.CodeSeqNotContiguous, sdk.CodeLogShrank, sdk.CodeIdentityMismatch,
			sdk.CodeCompressionMismatch, sdk.CodeSchemaMismatch, sdk.CodeMirrorDiverged,
			sdk.CodeFormatTooNew, sdk.CodeFormatUnsupported, sdk.CodeFormatUnknownEventType,
			sdk.CodeFormatMigrationRefused, sdk.CodeProjectionRequired, sdk.CodeProjectionRemoved,
			sdk.CodeCompactionBusy, sdk.CodeCompactionNoOpenTurn, sdk.CodeCompactionTurnOpen,
			sdk.CodeCompactionChanged,
			sdk.CodeTurnAlreadyOpen, sdk.CodeTurnNotIncreasing, sdk.CodeTurnNotOpen,
			sdk.CodeStepAlreadyOpen, sdk.CodeStepNotOpen, sdk.CodeStepNotIncreasing, sdk.CodeTurnStepMismatch,
			sdk.CodeToolCallNotAnnounced, sdk.CodeToolCallRepeated, sdk.CodeToolResultUnmatched,
			sdk.CodeToolResultRepeated, sdk.CodeToolCallsUnanswered, sdk.CodeToolCallsPending,
			sdk.CodeRequestHeaderMissing, sdk.CodeOperationConflict, sdk.CodeNotImported,
		}},
		{http.StatusRequestEntityTooLarge, []sdk.Code{sdk.CodeEventTooLarge, sdk.CodeRequestTooLarge}},
		{http.StatusUnsupportedMediaType, []sdk.Code{sdk.CodeUnsupportedMediaType}},
		{http.StatusUnprocessableEntity, []sdk.Code{
			sdk.CodeEventTypeInvalid, sdk.CodeEventTypeReserved, sdk.CodeUnknownEventType,
			sdk.CodeIgnorableNotAllowed, sdk.CodeIgnorableRequired,
			sdk.CodeJSONDuplicateKey, sdk.CodeJSONNegativeZero, sdk.CodeJSONNumberNotFinite,
			sdk.CodeJSONUnsafeInteger, sdk.CodeJSONTooDeep,
			sdk.CodePayloadInvalid, sdk.CodeMessageRoleMismatch, sdk.CodeMessageSourceInvalid,
			sdk.CodeToolCallIDMismatch, sdk.CodeToolResultErrorWithoutIserror, sdk.CodeToolChangeRole,
			sdk.CodeToolChangeNameEmpty, sdk.CodeToolAdditionInlineDefinition,
			sdk.CodeHeaderSystemForbidden, sdk.CodeHeaderEmptyTools, sdk.CodeHeaderEmptyAdapterDefaults,
			sdk.CodeHeaderInvalid, sdk.CodeHeaderReasonInvalid,
			sdk.CodeDeveloperHeaderSeqMismatch, sdk.CodeDeveloperHeaderSeqInvalid,
			sdk.CodeDeveloperToolNotInHeader, sdk.CodeDeveloperToolIncomplete, sdk.CodeDeveloperToolDeferLoading,
			sdk.CodeSurfaceOpNotAllowed, sdk.CodeSourcesNotAllowed, sdk.CodeSurfaceMarkerRequired,
			sdk.CodeSurfaceOpInvalid, sdk.CodeReplaceEndpointNotEarlier, sdk.CodeAssistantSourcesForbidden,
			sdk.CodeSourcesInvalid, sdk.CodeSourcesEmpty, sdk.CodeSourcesDuplicate, sdk.CodeSourcesNotEarlier,
			sdk.CodeReplaceStartNotFound, sdk.CodeReplaceEndNotFound, sdk.CodeReplaceReversed,
			sdk.CodeReplaceCoverage, sdk.CodeToolResultRewriteSingle, sdk.CodeToolResultRewriteTarget,
			sdk.CodeToolResultRewriteOnlyContent, sdk.CodeSystemNode0Protected,
			sdk.CodeProjectionInvalid, sdk.CodeProjectionDuplicate,
			sdk.CodeInvalidBoundary, sdk.CodeSeedInvalid,
			sdk.CodeCompactionSurfaceMismatch, sdk.CodeCompactionUnbalancedBoundary, sdk.CodeCompactionNoRange,
			sdk.CodeCompactionNotSmaller, sdk.CodeCompactionStillAboveThreshold, sdk.CodeCompactionCapacityUnknown,
			sdk.CodeToolPairingSeqNotFound, sdk.CodeConfigInvalid,
		}},
		{http.StatusInternalServerError, []sdk.Code{
			sdk.CodeCorruptLog, sdk.CodeIOError, sdk.CodeFlushFailed, sdk.CodeProjectionFailed,
			sdk.CodeCompactionSummaryFailed, sdk.CodeCompactionCancelled, sdk.CodeCompactionCommitFailed,
			sdk.CodeCompactionPersistenceFailed, sdk.CodeCompactionInvariant, sdk.CodeToolPairingCorrupt,
		}},
		{http.StatusServiceUnavailable, []sdk.Code{sdk.CodeBackendBusy, sdk.CodePluginUnavailable, sdk.CodeTooManyLiveSessions}},
		{http.StatusForbidden, []sdk.Code{sdk.CodeHostNotAllowed, sdk.CodeOriginNotAllowed, sdk.CodePermissionDenied}},
	}
	for _, g := range groups {
		for _, c := range g.codes {
			if _, dup := statuses[c]; dup {
				panic("httpapi: " + string(c) + " has two statuses")
			}
			statuses[c] = g.status
		}
	}
}
