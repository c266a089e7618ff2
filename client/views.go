package client

import (
	"context"
	"encoding/json"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// ViewOptions choose the state of the log a derived view describes.
type ViewOptions struct {
	// At is the event right after which the view is taken; nil = now.
	At *sdk.Seq
}

// at is the request field of o.At.
func (o ViewOptions) at() *int64 {
	if o.At == nil {
		return nil
	}
	v := int64(*o.At)
	return &v
}

// RequestHeader returns the folded request header the next model request
// carries (docs/format.md), canonical JSON; nil when the log has none.
func (s *Session) RequestHeader(ctx context.Context, o ViewOptions) (json.RawMessage, error) {
	r, err := s.c.rpc.RequestHeader(ctx, connect.NewRequest(&logbookv1.SessionsRequestHeaderRequest{SessionId: s.id, At: o.at()}))
	if err != nil {
		return nil, callError(ctx, "RequestHeader", err)
	}
	if r.Msg.GetHeader() == "" {
		return nil, nil
	}
	return json.RawMessage(r.Msg.GetHeader()), nil
}

// Request returns the request a model would be sent, in format
// (docs/providers.md): "logbook" (or ""), {header, context, messages};
// "openai" or "anthropic", the provider's request body.
func (s *Session) Request(ctx context.Context, format string, o ViewOptions) (json.RawMessage, error) {
	r, err := s.c.rpc.Request(ctx, connect.NewRequest(&logbookv1.SessionsRequestRequest{SessionId: s.id, At: o.at(), Format: format}))
	if err != nil {
		return nil, callError(ctx, "Request", err)
	}
	return json.RawMessage(r.Msg.GetRequest()), nil
}

// Why returns the provenance tree of event seq, the JSON `logbook why ID
// SEQ --json` prints; a seq past the log's end is INVALID_BOUNDARY.
func (s *Session) Why(ctx context.Context, seq sdk.Seq) (json.RawMessage, error) {
	r, err := s.c.rpc.Why(ctx, connect.NewRequest(&logbookv1.SessionsWhyRequest{SessionId: s.id, Seq: int64(seq)}))
	if err != nil {
		return nil, callError(ctx, "Why", err)
	}
	return json.RawMessage(r.Msg.GetTree()), nil
}

// Shadowing is a node a replacement took off the surface.
type Shadowing struct {
	Seq        sdk.Seq // the shadowed node
	ReplacedBy sdk.Seq // the replacing event
}

// Shadowed returns the nodes replacements took off the surface, by seq.
func (s *Session) Shadowed(ctx context.Context, o ViewOptions) ([]Shadowing, error) {
	r, err := s.c.rpc.Shadowed(ctx, connect.NewRequest(&logbookv1.SessionsShadowedRequest{SessionId: s.id, At: o.at()}))
	if err != nil {
		return nil, callError(ctx, "Shadowed", err)
	}
	out := make([]Shadowing, len(r.Msg.GetSeqs()))
	for i, seq := range r.Msg.GetSeqs() {
		out[i] = Shadowing{Seq: sdk.Seq(seq), ReplacedBy: sdk.Seq(r.Msg.GetReplacedBy()[seq])}
	}
	return out, nil
}

// Tokens returns the token estimate of the next request (the compaction
// estimate, docs/compaction.md) as JSON: {total, surfaceTokens,
// headerTokens, baseline, perTurn, nodes, method}.
func (s *Session) Tokens(ctx context.Context, o ViewOptions) (json.RawMessage, error) {
	r, err := s.c.rpc.Tokens(ctx, connect.NewRequest(&logbookv1.SessionsTokensRequest{SessionId: s.id, At: o.at()}))
	if err != nil {
		return nil, callError(ctx, "Tokens", err)
	}
	return json.RawMessage(r.Msg.GetTokens()), nil
}

// Lineage returns the session's fork family from the stored headers as
// JSON: {id, ancestors (nearest first), children, tree}.
func (s *Session) Lineage(ctx context.Context) (json.RawMessage, error) {
	r, err := s.c.rpc.Lineage(ctx, connect.NewRequest(&logbookv1.SessionsLineageRequest{SessionId: s.id}))
	if err != nil {
		return nil, callError(ctx, "Lineage", err)
	}
	return json.RawMessage(r.Msg.GetLineage()), nil
}

// AuditOptions are what Hold, ReleaseHold and Delete record in the audit
// log besides by "api".
type AuditOptions struct {
	// Reason is recorded in the audit record (e.g. a case number); it may
	// be empty.
	Reason string
}

// Hold puts a legal hold on the stored session in every backend, recorded
// with by "api" and o.Reason: Delete and retention refuse it with
// SESSION_HELD until ReleaseHold. It reports whether anything changed, and
// the audit record when it did. The handle need not be live (see
// Client.Session).
func (s *Session) Hold(ctx context.Context, o AuditOptions) (sdk.AuditRecord, bool, error) {
	r, err := s.c.rpc.Hold(ctx, connect.NewRequest(&logbookv1.SessionsHoldRequest{SessionId: s.id, Reason: o.Reason}))
	if err != nil {
		return sdk.AuditRecord{}, false, callError(ctx, "Hold", err)
	}
	return auditRecord(r.Msg)
}

// ReleaseHold lifts the legal hold of the stored session, as Hold puts it.
func (s *Session) ReleaseHold(ctx context.Context, o AuditOptions) (sdk.AuditRecord, bool, error) {
	r, err := s.c.rpc.ReleaseHold(ctx, connect.NewRequest(&logbookv1.SessionsHoldRequest{SessionId: s.id, Reason: o.Reason}))
	if err != nil {
		return sdk.AuditRecord{}, false, callError(ctx, "ReleaseHold", err)
	}
	return auditRecord(r.Msg)
}

// Delete deletes the stored session in the server's store, from every
// backend, each recording it in its audit log with o.Reason and by "api".
// A session live in the server (a handle that has not released it) or
// open for writing elsewhere is ALREADY_OWNED, one under a legal hold
// SESSION_HELD, a missing one SESSION_NOT_FOUND.
func (s *Session) Delete(ctx context.Context, o AuditOptions) error {
	_, err := s.c.rpc.Delete(ctx, connect.NewRequest(&logbookv1.SessionsDeleteRequest{SessionId: s.id, Reason: o.Reason}))
	return callError(ctx, "Delete", err)
}

// auditRecord reads a hold reply.
func auditRecord(m *logbookv1.SessionsHoldReply) (sdk.AuditRecord, bool, error) {
	rec := m.GetRecord()
	if !m.GetChanged() || rec == nil {
		return sdk.AuditRecord{}, m.GetChanged(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, rec.GetTime())
	if err != nil {
		return sdk.AuditRecord{}, true, &sdk.Error{Code: sdk.CodeIOError, Op: "hold", SessionID: rec.GetSessionId(), Detail: "the server's audit record has no valid time", Err: err}
	}
	return sdk.AuditRecord{Time: t, Op: sdk.AuditOp(rec.GetOp()), Session: rec.GetSessionId(), Events: sdk.Offset(rec.GetEvents()),
		Digest: rec.GetDigest(), Reason: rec.GetReason(), By: rec.GetBy()}, true, nil
}
