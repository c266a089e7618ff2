package server

import (
	"context"
	"errors"
	"strconv"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Events chunking: a reply holds at most chunkEvents envelopes and, unless
// one envelope alone is larger, at most chunkBytes.
const (
	chunkEvents = 512
	chunkBytes  = 1 << 20
)

// service implements logbookv1connect.SessionsHandler over one tenant's
// host: it reaches that tenant's sessions only. Every error it returns
// went through toConnect.
type service struct{ h *host.Host }

// Create makes a new live session, holds it, and flushes it before it
// replies, as the CLI's create does: a session whose Create succeeded is
// stored, so it survives a crash of the server and every other process
// sees it. When the flush fails the session stays live and held (a Flush
// or Release retries), and the reply is the flush's error.
func (v *service) Create(ctx context.Context, req *connect.Request[logbookv1.SessionsCreateRequest]) (*connect.Response[logbookv1.SessionsCreateReply], error) {
	m := req.Msg
	sess, err := v.h.CreateStored(ctx, store.CreateOptions{
		ID: m.GetSessionId(), CWD: m.GetCwd(), Origin: m.GetOrigin(), DelegationDepth: m.GetDelegationDepth(),
		AgentPreset: m.GetAgentPreset(), ParentSession: m.GetParentSession(), Protocol: m.GetProtocol(), Labels: m.GetLabels(),
	})
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsCreateReply{Header: string(headerjson.Encode(sess.Header()))}), nil
}

// Open resumes a stored session (repairing it) and holds it, or reports
// the live one.
func (v *service) Open(ctx context.Context, req *connect.Request[logbookv1.SessionsOpenRequest]) (*connect.Response[logbookv1.SessionsOpenReply], error) {
	o, err := v.h.Acquire(ctx, req.Msg.GetSessionId())
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsOpenReply{
		Header:       string(headerjson.Encode(o.Session.Header())),
		NextSeq:      int64(o.Session.Len()),
		AlreadyLive:  o.AlreadyLive,
		TornBytes:    o.Repair.Torn.Bytes,
		TornFromSeq:  int64(o.Repair.Torn.FromSeq),
		TornArtifact: o.Repair.Torn.Artifact,
		Repaired:     envelopes(host.Shared(o.Repaired())),
	}), nil
}

// envelopes returns the canonical JSON text of each event's envelope; nil
// for none.
func envelopes(evs []events.Event) []string {
	if len(evs) == 0 {
		return nil
	}
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = string(e.Envelope)
	}
	return out
}

// envelopeText returns an event's canonical envelope as the text of a proto
// string field: exactly its bytes (canonical JSON is valid UTF-8). The
// envelope is staged in *scratch, reused across calls, so the string is the
// only allocation.
func envelopeText(scratch *[]byte, e session.Event) string {
	*scratch = e.AppendEnvelope((*scratch)[:0])
	return string(*scratch)
}

// appendInput converts one wire input; the data text is validated as JSON
// bytes by the session (docs/format.md), exactly as written.
func appendInput(in *logbookv1.AppendInput) events.Input {
	ai := events.Input{Type: in.GetType(), Data: []byte(in.GetData()), Ignorable: in.GetIgnorable()}
	if op := in.GetSurfaceOp(); op != nil {
		ai.SurfaceOp = &events.SurfaceOp{Replace: op.GetReplace(), StartSeq: sdk.Seq(op.GetStartSeq()), EndSeq: sdk.Seq(op.GetEndSeq())}
	}
	if src := in.GetSourceEventSeqs(); src != nil {
		ai.SourceEventSeqs = make([]sdk.Seq, len(src.GetSeqs()))
		for i, seq := range src.GetSeqs() {
			ai.SourceEventSeqs[i] = sdk.Seq(seq)
		}
	}
	return ai
}

// appendError is the error reply of an append whose result is res: its
// ErrorInfo metadata "appended" counts the request's events appended
// before the failure and "firstSeq" is the seq of the first of them, or
// the log length the append found when none was (left out when unknown).
// A fenced session adds "fenced" (see fencedMeta).
func appendError(err error, res host.AppendResult) error {
	md := fencedMeta(res.Fenced)
	if md == nil {
		md = map[string]string{}
	}
	md["appended"] = strconv.Itoa(len(res.Events))
	if res.FirstSeq != nil {
		md["firstSeq"] = strconv.FormatInt(int64(*res.FirstSeq), 10)
	}
	return toConnect(err, md)
}

// fencedMeta is the metadata "fenced": "true" when a final persistence
// failure fenced the session: a failed flush of it cannot pass on a
// retry, and what it holds beyond the stored log is lost once it is
// released (the next append resumes it from what is stored). nil
// otherwise.
func fencedMeta(fenced bool) map[string]string {
	if !fenced {
		return nil
	}
	return map[string]string{"fenced": "true"}
}

// appendRequest reads one request's expected_seq (INVALID_SEQ outside the
// offset domain), operation_id (OPERATION_ID_INVALID when malformed; set,
// it makes the request one atomic group) and events.
func appendRequest(m *logbookv1.SessionsAppendRequest) (host.AppendRequest, error) {
	r := host.AppendRequest{Inputs: make([]events.Input, len(m.GetEvents())), Flush: m.GetFlush(), OperationID: m.GetOperationId()}
	if r.OperationID != "" {
		if err := sdk.ValidateOperationID(r.OperationID); err != nil {
			return r, err
		}
		r.Group = true
	}
	for i, in := range m.GetEvents() {
		r.Inputs[i] = appendInput(in)
	}
	if m.ExpectedSeq != nil {
		n, err := sdk.NewOffset("expected_seq", m.GetExpectedSeq())
		if err != nil {
			return r, err
		}
		r.Expected = &n
	}
	return r, nil
}

func flushReply(r store.FlushResult) *logbookv1.SessionsFlushReply {
	out := &logbookv1.SessionsFlushReply{Participated: r.Participated}
	for _, b := range r.Backends {
		out.Backends = append(out.Backends, &logbookv1.BackendFlushStatus{Name: b.Name, DurableSeq: int64(b.DurableSeq)})
	}
	return out
}

// Append appends the request's events in order as one batch
// (service.Append), resuming the session first when it is not live (and
// releasing it again when the request fails), and flushes when asked.
// With operation_id it appends them once, as one atomic group: a replay
// answers the original envelopes with replay set.
func (v *service) Append(ctx context.Context, req *connect.Request[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	return v.appendOnce(ctx, req.Msg, false)
}

// AppendGroup is Append for one atomic group: every event or none.
func (v *service) AppendGroup(ctx context.Context, req *connect.Request[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	return v.appendOnce(ctx, req.Msg, true)
}

// appendOnce serves Append and, with group, AppendGroup.
func (v *service) appendOnce(ctx context.Context, m *logbookv1.SessionsAppendRequest, group bool) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	r, err := appendRequest(m)
	if err != nil {
		return nil, appendError(err, host.AppendResult{})
	}
	r.Group = r.Group || group
	res, err := v.h.Append(ctx, m.GetSessionId(), r)
	if err != nil {
		return nil, appendError(err, res)
	}
	reply := &logbookv1.SessionsAppendReply{Envelopes: envelopes(res.Events), Replay: res.Replayed}
	if res.Flush != nil {
		reply.Flush = flushReply(*res.Flush)
	}
	return connect.NewResponse(reply), nil
}

// AppendStream appends the events of a client stream to one session, each
// request's as one batch (host.Appender), flushing at the requests that
// ask and at the end. A request with an operation_id is its own
// operation: one atomic group, appended once (a replay appends nothing and
// adds nothing to the reply's count).
func (v *service) AppendStream(ctx context.Context, stream *connect.ClientStream[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendStreamReply], error) {
	ap, err := v.appendStream(ctx, stream)
	res, err := ap.Finish(ctx, err, true)
	if err != nil {
		return nil, appendError(err, res)
	}
	return connect.NewResponse(&logbookv1.SessionsAppendStreamReply{Appended: int64(len(res.Events)), NextSeq: int64(ap.Len()), Flush: flushReply(*res.Flush)}), nil
}

// appendStream appends the stream's requests until its end or the first
// failure, whose error it returns with the appender (nil when the stream
// never reached a session).
func (v *service) appendStream(ctx context.Context, stream *connect.ClientStream[logbookv1.SessionsAppendRequest]) (*host.Appender, error) {
	var ap *host.Appender
	for stream.Receive() {
		m := stream.Msg()
		r, err := appendRequest(m) // before the first message resumes the session
		if err != nil {
			return ap, err
		}
		switch id := m.GetSessionId(); {
		case ap == nil:
			if ap, err = v.h.Appender(ctx, id); err != nil {
				return nil, err
			}
		case id != "" && id != ap.SessionID():
			return ap, sdk.Errorf(sdk.CodeUsage, "append", "an append stream carries one session: %q, then %q", ap.SessionID(), id)
		}
		if r.OperationID != "" {
			_, err = ap.AppendOperation(ctx, r.Expected, r.OperationID, r.Inputs)
		} else {
			_, err = ap.Append(ctx, r.Expected, r.Inputs)
		}
		if err != nil {
			return ap, err
		}
		if r.Flush {
			if _, err := ap.Flush(ctx); err != nil {
				return ap, err
			}
		}
		if v.h.Stopping() {
			return ap, &sdk.Error{Code: sdk.CodePluginUnavailable, Op: "server", SessionID: ap.SessionID(),
				Detail: "the server is shutting down; the events appended so far are flushed"}
		}
	}
	if err := stream.Err(); err != nil {
		return ap, err
	}
	if ap == nil {
		return nil, sdk.Errorf(sdk.CodeUsage, "append", "the append stream ended before naming a session")
	}
	return ap, nil
}

// Messages returns the derived messages, now or right after event at: a
// live session's own, else those of the stored log as it stands (without
// the closers a resume would add), restored by store.View with the
// store's plugin types and projections.
func (v *service) Messages(ctx context.Context, req *connect.Request[logbookv1.SessionsMessagesRequest]) (*connect.Response[logbookv1.SessionsMessagesReply], error) {
	sess, err := v.viewAt(ctx, "messages", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	list, err := sess.Messages()
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsMessagesReply{}
	for _, m := range list.All() {
		reply.Messages = append(reply.Messages, string(m.JSON()))
	}
	return connect.NewResponse(reply), nil
}

// Transcript returns the append-origin surface events with their messages
// as recorded.
func (v *service) Transcript(ctx context.Context, req *connect.Request[logbookv1.SessionsTranscriptRequest]) (*connect.Response[logbookv1.SessionsTranscriptReply], error) {
	sess, err := v.h.At(ctx, req.Msg.GetSessionId(), nil)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	t := sess.Transcript()
	reply := &logbookv1.SessionsTranscriptReply{Entries: make([]*logbookv1.TranscriptEntry, 0, t.Len())}
	for _, e := range t.All() {
		reply.Entries = append(reply.Entries, &logbookv1.TranscriptEntry{Seq: int64(e.Seq), Type: e.Type, Message: string(e.Message.JSON())})
	}
	return connect.NewResponse(reply), nil
}

// Surface returns the surface nodes in surface order, now or right after
// event at.
func (v *service) Surface(ctx context.Context, req *connect.Request[logbookv1.SessionsSurfaceRequest]) (*connect.Response[logbookv1.SessionsSurfaceReply], error) {
	sess, err := v.viewAt(ctx, "surface", req.Msg.GetSessionId(), req.Msg.At)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	view, err := sess.Surface()
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsSurfaceReply{Seqs: make([]int64, view.Len())}
	for i := range reply.Seqs {
		reply.Seqs[i] = int64(view.At(i))
	}
	return connect.NewResponse(reply), nil
}

// Header returns the session header and the log length: the live
// session's, else those of the stored log as it stands.
func (v *service) Header(ctx context.Context, req *connect.Request[logbookv1.SessionsHeaderRequest]) (*connect.Response[logbookv1.SessionsHeaderReply], error) {
	sess, err := v.h.At(ctx, req.Msg.GetSessionId(), nil)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	next := int64(sess.Len())
	return connect.NewResponse(&logbookv1.SessionsHeaderReply{Header: string(headerjson.Encode(sess.Header())), NextSeq: &next}), nil
}

// Events streams the log from `from`, then, with follow, live events
// until the client cancels, `to` is reached or the server stops.
func (v *service) Events(ctx context.Context, req *connect.Request[logbookv1.SessionsEventsRequest], stream *connect.ServerStream[logbookv1.SessionsEventsReply]) error {
	m := req.Msg
	id, next := m.GetSessionId(), m.GetFrom()
	end := int64(sdk.MaxSeq) + 1
	if m.To != nil {
		end = m.GetTo()
	}
	if next < 0 || next > sdk.MaxSeq || end < next {
		return toConnect(&sdk.Error{Code: sdk.CodeInvalidSeq, Op: "events", SessionID: id,
			Detail: "from " + strconv.FormatInt(next, 10) + " and to " + strconv.FormatInt(end, 10) + " must satisfy 0 ≤ from ≤ to"}, nil)
	}
	err := v.h.Tail(ctx, host.TailRequest{ID: id, From: next, End: end, Follow: m.GetFollow()}, &eventChunker{stream: stream})
	if errors.Is(err, host.ErrStopping) {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	return toConnect(err, nil)
}

// eventChunker sends envelopes in replies of at most chunkEvents envelopes
// and, unless one alone is larger, chunkBytes.
type eventChunker struct {
	stream  *connect.ServerStream[logbookv1.SessionsEventsReply]
	reply   logbookv1.SessionsEventsReply
	size    int
	scratch []byte
}

// Event queues e, sending the queued ones first when e would not fit.
func (c *eventChunker) Event(e session.Event) error {
	if len(c.reply.Envelopes) == chunkEvents || (c.size > 0 && c.size+e.EnvelopeLen() > chunkBytes) {
		if err := c.Flush(); err != nil {
			return err
		}
	}
	c.reply.Envelopes = append(c.reply.Envelopes, envelopeText(&c.scratch, e))
	c.size += e.EnvelopeLen()
	return nil
}

// Flush sends the queued envelopes, if any.
func (c *eventChunker) Flush() error {
	if len(c.reply.Envelopes) == 0 {
		return nil
	}
	err := c.stream.Send(&c.reply)
	c.reply.Envelopes, c.size = c.reply.Envelopes[:0], 0
	return err
}

// Fork creates a live child of a live or stored session and holds it.
func (v *service) Fork(ctx context.Context, req *connect.Request[logbookv1.SessionsForkRequest]) (*connect.Response[logbookv1.SessionsForkReply], error) {
	m := req.Msg
	r := store.ForkRequest{SourceID: m.GetSourceId(), ChildID: m.GetChildId()}
	if m.At != nil {
		at := sdk.Seq(m.GetAt())
		r.Boundary = &at
	}
	child, err := v.h.Fork(ctx, r)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsForkReply{Header: string(headerjson.Encode(child.Header()))}), nil
}

// Flush flushes a live session on every backend (host.Flush: one the
// server released for idleness answers its final flush).
func (v *service) Flush(ctx context.Context, req *connect.Request[logbookv1.SessionsFlushRequest]) (*connect.Response[logbookv1.SessionsFlushReply], error) {
	sess, res, err := v.h.Flush(ctx, req.Msg.GetSessionId())
	if err != nil {
		return nil, toConnect(err, fencedMeta(sess != nil && sess.Fenced() != nil))
	}
	return connect.NewResponse(flushReply(res)), nil
}

// Compact runs a manual compaction with the engine's compactor, resuming
// the session when it is not live (and releasing it again when the
// compaction fails: host.Borrow).
func (v *service) Compact(ctx context.Context, req *connect.Request[logbookv1.SessionsCompactRequest]) (*connect.Response[logbookv1.SessionsCompactReply], error) {
	m := req.Msg
	evs, err := v.h.Compact(ctx, m.GetSessionId(), (*sdk.Seq)(m.StartSeq), (*sdk.Seq)(m.EndSeq), m.GetSourceCommandId())
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsCompactReply{Envelopes: envelopes(evs)}), nil
}

// Inspect reports the log's length, its open turn, the closers a resume
// would append and the torn bytes a write open would cut; it never writes.
func (v *service) Inspect(ctx context.Context, req *connect.Request[logbookv1.SessionsInspectRequest]) (*connect.Response[logbookv1.SessionsInspectReply], error) {
	id := req.Msg.GetSessionId()
	in, err := v.h.Inspect(ctx, id)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsInspectReply{
		Id:            id,
		Header:        string(headerjson.Encode(in.Session.Header())),
		Events:        int64(in.Stored.Len()),
		PendingRepair: make([]string, 0, len(in.Closers)),
		TornBytes:     in.Torn.Bytes,
		TornFromSeq:   int64(in.Torn.FromSeq),
		Live:          in.Live,
	}
	if turn, ok := in.OpenTurn(); ok {
		reply.OpenTurn = &turn
	}
	var scratch []byte
	for _, e := range in.Closers {
		reply.PendingRepair = append(reply.PendingRepair, envelopeText(&scratch, e))
	}
	return connect.NewResponse(reply), nil
}

// List lists the live and stored sessions by id.
func (v *service) List(ctx context.Context, _ *connect.Request[logbookv1.SessionsListRequest]) (*connect.Response[logbookv1.SessionsListReply], error) {
	entries, err := v.h.List(ctx)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsListReply{Sessions: make([]*logbookv1.SessionsListEntry, 0, len(entries))}
	for _, e := range entries {
		le := &logbookv1.SessionsListEntry{Id: e.ID, Live: e.Live, Revision: e.Revision}
		if e.Err != nil {
			code := sdk.CodeOf(e.Err)
			if code == "" {
				code = sdk.CodeIOError
			}
			le.ErrorCode, le.Error = string(code), e.Err.Error()
		} else {
			le.Header = string(headerjson.Encode(e.Header))
		}
		reply.Sessions = append(reply.Sessions, le)
	}
	return connect.NewResponse(reply), nil
}

// Delete deletes a stored session (host.Delete), by the principal (httpapi.AuditBy).
func (v *service) Delete(ctx context.Context, req *connect.Request[logbookv1.SessionsDeleteRequest]) (*connect.Response[logbookv1.SessionsDeleteReply], error) {
	rec, err := v.h.Delete(ctx, req.Msg.GetSessionId(), sdk.AuditRequest{Reason: req.Msg.GetReason(), By: httpapi.AuditBy(ctx)})
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsDeleteReply{Events: int64(rec.Events), Digest: rec.Digest}), nil
}

// Release flushes and releases a live session (host.Release: one the
// server released for idleness is released already).
func (v *service) Release(ctx context.Context, req *connect.Request[logbookv1.SessionsReleaseRequest]) (*connect.Response[logbookv1.SessionsReleaseReply], error) {
	if err := v.h.Release(ctx, req.Msg.GetSessionId()); err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsReleaseReply{}), nil
}
