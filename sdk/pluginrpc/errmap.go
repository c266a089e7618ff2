package pluginrpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errOp is the Op of the errors this package makes itself.
const errOp = "plugin"

// StatusCode is the gRPC status code a logbook code travels under
// (docs/errors.md), in the plugin protocol and in the server API alike. Receivers
// rebuild the logbook code from the ErrorInfo detail, so this choice only
// informs generic tooling (grpcurl, the HTTP status of a JSON API).
func StatusCode(c sdk.Code) codes.Code {
	switch c {
	case sdk.CodePluginUnavailable, sdk.CodeBackendBusy, sdk.CodeTooManyLiveSessions:
		return codes.Unavailable
	case sdk.CodeSessionAlreadyExists:
		return codes.AlreadyExists
	case sdk.CodeSessionNotFound, sdk.CodeRouteNotFound:
		return codes.NotFound
	case sdk.CodeUnauthenticated:
		return codes.Unauthenticated
	case sdk.CodeHostNotAllowed, sdk.CodeOriginNotAllowed, sdk.CodePermissionDenied:
		return codes.PermissionDenied
	case sdk.CodeCorruptLog:
		return codes.DataLoss
	case sdk.CodeIOError, sdk.CodeFlushFailed, sdk.CodeCompactionInvariant,
		sdk.CodeProjectionFailed, sdk.CodeCompactionSummaryFailed,
		sdk.CodeCompactionCommitFailed, sdk.CodeCompactionPersistenceFailed:
		return codes.Internal
	case sdk.CodeCompactionCancelled:
		return codes.Canceled
	case sdk.CodeEventTooLarge, sdk.CodeRequestTooLarge:
		return codes.ResourceExhausted
	case sdk.CodeSeqConflict, sdk.CodeLogShrank, sdk.CodeAlreadyOwned,
		sdk.CodeOwnershipLost, sdk.CodeHandleClosed, sdk.CodeHandleBroken,
		sdk.CodeReadOnlyHandle, sdk.CodeIdentityMismatch,
		sdk.CodeCompressionMismatch, sdk.CodeSchemaMismatch,
		sdk.CodeMirrorDiverged, sdk.CodeFormatTooNew, sdk.CodeFormatUnsupported,
		sdk.CodeFormatUnknownEventType, sdk.CodeFormatMigrationRefused,
		sdk.CodeSessionClosed, sdk.CodeSessionReadOnly, sdk.CodeSessionFenced,
		sdk.CodeSessionNotLive, sdk.CodeSessionHeld, sdk.CodeCompactionBusy,
		sdk.CodeCompactionChanged, sdk.CodeCompactionTurnOpen,
		sdk.CodeCompactionNoOpenTurn, sdk.CodeProjectionRemoved,
		sdk.CodeProjectionRequired, sdk.CodeTurnAlreadyOpen, sdk.CodeTurnNotIncreasing,
		sdk.CodeTurnNotOpen, sdk.CodeStepAlreadyOpen, sdk.CodeStepNotOpen,
		sdk.CodeStepNotIncreasing, sdk.CodeTurnStepMismatch, sdk.CodeToolCallNotAnnounced,
		sdk.CodeToolCallRepeated, sdk.CodeToolResultUnmatched, sdk.CodeToolResultRepeated,
		sdk.CodeToolCallsUnanswered, sdk.CodeToolCallsPending, sdk.CodeRequestHeaderMissing,
		sdk.CodeOperationConflict, sdk.CodeNotImported:
		return codes.FailedPrecondition
	}
	return codes.InvalidArgument
}

// toStatus turns an error returned by a plugin implementation into the gRPC
// status error its handler returns. An *sdk.Error (or a bare sdk.Code)
// anywhere in the chain travels with an ErrorInfo detail; a context error
// keeps its gRPC meaning; a status error passes through; anything else is
// codes.Unknown without detail (the host sees IO_ERROR).
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if e := sdk.ErrorOf(err); e != nil {
		st := status.New(StatusCode(e.Code), errinfo.Clip(err.Error()))
		withInfo, derr := st.WithDetails(errinfo.Encode(e))
		if derr != nil {
			// Only a detail that cannot be marshaled fails here; ErrorInfo
			// always can.
			return st.Err()
		}
		return withInfo.Err()
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, errinfo.Clip(err.Error()))
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, errinfo.Clip(err.Error()))
	}
	return status.Error(codes.Unknown, errinfo.Clip(err.Error()))
}

// fromStatus turns an error of a gRPC call into the error the sdk interface
// returns. call names the call ("persistence.Append") in messages; ctx is the
// caller's context, whose error is wrapped when it ended.
func fromStatus(ctx context.Context, call string, err error) error {
	if err == nil {
		return nil
	}
	st, isStatus := status.FromError(err)
	if !isStatus && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		st, isStatus = status.FromContextError(err), true
	}
	if isStatus {
		for _, d := range st.Details() {
			if info, ok := d.(*errdetails.ErrorInfo); ok {
				if e := errinfo.Decode(info); e != nil {
					return e
				}
			}
		}
	}
	code := sdk.CodeIOError
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted, codes.Canceled:
		code = sdk.CodePluginUnavailable
	}
	cause := err
	if cerr := ctx.Err(); cerr != nil {
		cause = fmt.Errorf("%w: %w", cerr, err)
	}
	detail := fmt.Sprintf("%s failed with gRPC %s", call, st.Code())
	if !isStatus {
		detail = call + " failed"
	}
	return &sdk.Error{Code: code, Op: errOp, Detail: detail, Err: cause}
}

// errorToProto renders an error carried inside a reply (a List entry's). An
// error without an *sdk.Error in its chain becomes IO_ERROR with its text as
// the detail.
func errorToProto(err error) *logbookv1.PluginError {
	if err == nil {
		return nil
	}
	e := sdk.ErrorOf(err)
	if e == nil {
		return &logbookv1.PluginError{Code: string(sdk.CodeIOError), Op: errOp, Detail: errinfo.Clip(err.Error())}
	}
	p := &logbookv1.PluginError{Code: string(e.Code), Op: e.Op, SessionId: e.SessionID, Detail: e.Detail}
	if e.Seq != nil {
		seq := *e.Seq
		p.Seq = &seq
	}
	if e.Index != nil {
		idx := int64(*e.Index)
		p.Index = &idx
	}
	if e.Err != nil {
		p.Cause = e.Err.Error()
	}
	return p
}

// errorFromProto rebuilds the *sdk.Error of errorToProto.
func errorFromProto(p *logbookv1.PluginError) *sdk.Error {
	e := &sdk.Error{Code: sdk.Code(p.GetCode()), Op: p.GetOp(), SessionID: p.GetSessionId(), Detail: p.GetDetail()}
	if e.Code == "" {
		e.Code = sdk.CodeIOError
	}
	if p.Seq != nil {
		seq := *p.Seq
		e.Seq = &seq
	}
	if p.Index != nil {
		idx := int(*p.Index)
		e.Index = &idx
	}
	if p.GetCause() != "" {
		e.Err = errors.New(p.GetCause())
	}
	return e
}
