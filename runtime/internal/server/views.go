package server

import (
	"context"
	"strconv"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/internal/providerview"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The derived views of a session beside its messages: the request header,
// the model request, provenance, shadowed nodes, token estimates and the
// fork family. Each answers what the /v1 route of the same name answers
// (package httpapi computes the documents for both).

// atSeq reads a request's optional at: nil when absent, INVALID_SEQ when
// negative.
func atSeq(op, id string, at *int64) (*sdk.Seq, error) {
	if at == nil {
		return nil, nil
	}
	if *at < 0 {
		return nil, &sdk.Error{Code: sdk.CodeInvalidSeq, Op: op, SessionID: id, Detail: "at " + strconv.FormatInt(*at, 10) + " is outside 0 … 2^53−1"}
	}
	s := sdk.Seq(*at)
	return &s, nil
}

// viewAt returns session id, live or read from storage, as it was right
// after event at when at is set (host.At).
func (v *service) viewAt(ctx context.Context, op, id string, at *int64) (*session.Session, error) {
	seq, err := atSeq(op, id, at)
	if err != nil {
		return nil, err
	}
	return v.h.At(ctx, id, seq)
}

// RequestHeader returns the folded request header, empty when the log has
// none.
func (v *service) RequestHeader(ctx context.Context, req *connect.Request[logbookv1.SessionsRequestHeaderRequest]) (*connect.Response[logbookv1.SessionsRequestHeaderReply], error) {
	sess, err := v.viewAt(ctx, "header", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsRequestHeaderReply{}
	if b := sess.AppendRequestHeaderJSON(nil); string(b) != "null" {
		reply.Header = string(b)
	}
	return connect.NewResponse(reply), nil
}

// Request returns the request a model would be sent, in the asked format
// (providerview.Request: a provider format with no request header is
// REQUEST_HEADER_MISSING, FailedPrecondition).
func (v *service) Request(ctx context.Context, req *connect.Request[logbookv1.SessionsRequestRequest]) (*connect.Response[logbookv1.SessionsRequestReply], error) {
	format := req.Msg.GetFormat()
	if format == "" {
		format = provider.FormatLogbook
	}
	if err := provider.CheckFormat("request", "format", format, provider.RequestFormats()); err != nil {
		return nil, toConnect(err, nil)
	}
	sess, err := v.viewAt(ctx, "request", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	r, err := providerview.Request(format, sess)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsRequestReply{Request: string(r.Body)}
	for _, o := range r.Omitted {
		if n := len(reply.OmittedSeqs); n == 0 || reply.OmittedSeqs[n-1] != int64(o.Seq) {
			reply.OmittedSeqs = append(reply.OmittedSeqs, int64(o.Seq))
		}
	}
	return connect.NewResponse(reply), nil
}

// Why returns the provenance tree of an event.
func (v *service) Why(ctx context.Context, req *connect.Request[logbookv1.SessionsWhyRequest]) (*connect.Response[logbookv1.SessionsWhyReply], error) {
	id, seq := req.Msg.GetSessionId(), req.Msg.GetSeq()
	if seq < 0 || seq > sdk.MaxSeq {
		return nil, toConnect(&sdk.Error{Code: sdk.CodeInvalidSeq, Op: "why", SessionID: id, Detail: "seq " + strconv.FormatInt(seq, 10) + " is outside 0 … 2^53−1"}, nil)
	}
	sess, err := v.h.At(ctx, id, nil)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	b, err := httpapi.Why(ctx, v.h, sess, seq)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsWhyReply{Tree: string(b)}), nil
}

// Shadowed returns the nodes replacements took off the surface and the
// events that replaced them.
func (v *service) Shadowed(ctx context.Context, req *connect.Request[logbookv1.SessionsShadowedRequest]) (*connect.Response[logbookv1.SessionsShadowedReply], error) {
	sess, err := v.viewAt(ctx, "shadowed", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	seqs, by, err := httpapi.Shadowed(ctx, v.h, sess)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsShadowedReply{Seqs: make([]int64, len(seqs)), ReplacedBy: make(map[int64]int64, len(by))}
	for i, s := range seqs {
		reply.Seqs[i] = int64(s)
		reply.ReplacedBy[int64(s)] = int64(by[s])
	}
	return connect.NewResponse(reply), nil
}

// Tokens returns the token estimate of the session's next request.
func (v *service) Tokens(ctx context.Context, req *connect.Request[logbookv1.SessionsTokensRequest]) (*connect.Response[logbookv1.SessionsTokensReply], error) {
	sess, err := v.viewAt(ctx, "tokens", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	b, err := httpapi.Tokens(sess)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsTokensReply{Tokens: string(b)}), nil
}

// Lineage returns the session's fork family.
func (v *service) Lineage(ctx context.Context, req *connect.Request[logbookv1.SessionsLineageRequest]) (*connect.Response[logbookv1.SessionsLineageReply], error) {
	b, err := httpapi.Lineage(ctx, v.h, req.Msg.GetSessionId())
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsLineageReply{Lineage: string(b)}), nil
}
