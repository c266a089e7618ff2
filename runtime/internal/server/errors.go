package server

import (
	"context"
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// codeHeader is the response header (a trailer for streams) that carries
// the error code of a failed call, for clients that do not decode
// error details (a shell script reading the JSON API).
const codeHeader = "Logbook-Code"

// connectCode is the status code a logbook code travels under: the one
// the plugin protocol uses (Connect's codes are gRPC's).
func connectCode(c sdk.Code) connect.Code { return connect.Code(pluginrpc.StatusCode(c)) }

// toConnect turns an error of the store, a session or the compactor into
// the error a handler returns: a logbook error travels with a
// google.rpc.ErrorInfo detail (reason = code, metadata = op, detail,
// session_id, seq, index, cause, the error's Meta, plus extra) and the
// Logbook-Code header; a context error keeps its meaning; a connect error
// passes through, with extra in an ErrorInfo of its own that has no reason;
// anything else is Internal with IO_ERROR.
func toConnect(err error, extra map[string]string) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return withExtra(ce, extra)
	}
	e := sdk.ErrorOf(err)
	if e == nil {
		switch {
		case errors.Is(err, context.Canceled):
			return withExtra(connect.NewError(connect.CodeCanceled, err), extra)
		case errors.Is(err, context.DeadlineExceeded):
			return withExtra(connect.NewError(connect.CodeDeadlineExceeded, err), extra)
		}
		e = &sdk.Error{Code: sdk.CodeIOError, Op: "server", Detail: err.Error()}
	}
	info := errinfo.Encode(e)
	for k, v := range extra {
		info.Metadata[k] = v
	}
	out := connect.NewError(connectCode(e.Code), errors.New(errinfo.Clip(err.Error())))
	if d, derr := errorDetail(info); derr == nil {
		out.AddDetail(d)
	}
	out.Meta().Set(codeHeader, string(e.Code))
	return out
}

// errorDetail wraps an ErrorInfo as an error detail encoded
// deterministically (its metadata map in key order), so equal errors are
// equal bytes: another tenant's session answers exactly as a missing one.
func errorDetail(info *errdetails.ErrorInfo) (*connect.ErrorDetail, error) {
	pb := &anypb.Any{}
	if err := anypb.MarshalFrom(pb, info, proto.MarshalOptions{Deterministic: true}); err != nil {
		return nil, err
	}
	return connect.NewErrorDetail(pb)
}

// withExtra adds extra to an error that carries no logbook code, in an
// ErrorInfo of the logbook domain without a reason.
func withExtra(ce *connect.Error, extra map[string]string) *connect.Error {
	if len(extra) > 0 {
		if d, err := errorDetail(&errdetails.ErrorInfo{Domain: errinfo.Domain, Metadata: extra}); err == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}
