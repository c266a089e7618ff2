package server

import (
	"context"
	"errors"
	"strconv"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/runtime/host"
	"github.com/seed-e5e476df/logbook/runtime/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/runtime/store"
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

// service implements logbookv1connect.SessionsHandler over the server's
// store. Every error it returns went through toConnect.
type service struct{ s *Server }

// Create makes a new live session, holds it, and flushes it before it
// replies, as the CLI's create does: a session whose Create succeeded is
// stored, so it survives a crash of the server and every other process
// sees it. When the flush fails the session stays live and held (a Flush
// or Release retries), and the reply is the flush's error.
func (v *service) Create(ctx context.Context, req *connect.Request[logbookv1.SessionsCreateRequest]) (*connect.Response[logbookv1.SessionsCreateReply], error) {
	m := req.Msg
	sess, err := v.s.h.Create(ctx, store.CreateOptions{
		ID: m.GetSessionId(), CWD: m.GetCwd(), Origin: m.GetOrigin(), DelegationDepth: m.GetDelegationDepth(),
		AgentPreset: m.GetAgentPreset(), ParentSession: m.GetParentSession(),
	})
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsCreateReply{Header: string(headerjson.Encode(sess.Header()))}), nil
}

// Open resumes a stored session (repairing it) and holds it, or reports
// the live one.
func (v *service) Open(ctx context.Context, req *connect.Request[logbookv1.SessionsOpenRequest]) (*connect.Response[logbookv1.SessionsOpenReply], error) {
	o, err := v.s.h.Acquire(ctx, req.Msg.GetSessionId())
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsOpenReply{
		Header:       string(headerjson.Encode(o.Session.Header())),
		NextSeq:      int64(o.Session.Len()),
		AlreadyLive:  o.AlreadyLive,
		TornBytes:    o.Repair.Torn.Bytes,
		TornFromSeq:  int64(o.Repair.Torn.FromSeq),
		TornArtifact: o.Repair.Torn.Artifact,
	}
	if rep := httpapi.Repaired(o); rep.Len() > 0 {
		reply.Repaired = envelopes(rep)
	}
	return connect.NewResponse(reply), nil
}

// envelopes returns the canonical JSON text of each event's envelope.
func envelopes(l session.EventList) []string {
	out := make([]string, l.Len())
	var scratch []byte
	for i, e := range l.All() {
		out[i] = envelopeText(&scratch, e)
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
func appendInput(in *logbookv1.AppendInput) session.AppendInput {
	ai := session.AppendInput{Type: in.GetType(), Data: []byte(in.GetData()), Ignorable: in.GetIgnorable()}
	if op := in.GetSurfaceOp(); op != nil {
		ai.SurfaceOp = &session.SurfaceOp{Replace: op.GetReplace(), StartSeq: sdk.Seq(op.GetStartSeq()), EndSeq: sdk.Seq(op.GetEndSeq())}
	}
	if src := in.GetSourceEventSeqs(); src != nil {
		ai.SourceEventSeqs = make([]sdk.Seq, len(src.GetSeqs()))
		for i, seq := range src.GetSeqs() {
			ai.SourceEventSeqs[i] = sdk.Seq(seq)
		}
	}
	return ai
}

// appendError is the error reply of an append to sess (nil: the session was
// not reached): its ErrorInfo metadata "appended" counts the request's
// events appended before the failure and "firstSeq" is the seq of the
// first of them, or the log length the append found when none was;
// firstSeq < 0 leaves it out. A fenced session adds "fenced" (see
// fencedMeta).
func appendError(err error, sess *session.Session, appended, firstSeq int64) error {
	md := fencedMeta(sess)
	if md == nil {
		md = map[string]string{}
	}
	md["appended"] = strconv.FormatInt(appended, 10)
	if firstSeq >= 0 {
		md["firstSeq"] = strconv.FormatInt(firstSeq, 10)
	}
	return toConnect(err, md)
}

// fencedMeta is the metadata "fenced": "true" when a final persistence
// failure fenced sess: a failed flush of it cannot pass on a retry, and
// what it holds beyond the stored log is lost once it is released (the
// next append resumes it from what is stored). nil otherwise.
func fencedMeta(sess *session.Session) map[string]string {
	if sess == nil || sess.Fenced() == nil {
		return nil
	}
	return map[string]string{"fenced": "true"}
}

// expectedLen reads a request's expected_seq: nil when absent, INVALID_SEQ
// outside the offset domain.
func expectedLen(m *logbookv1.SessionsAppendRequest) (*sdk.Offset, error) {
	if m.ExpectedSeq == nil {
		return nil, nil
	}
	n, err := sdk.NewOffset("expected_seq", m.GetExpectedSeq())
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// appendRequest appends the events of one request to sess as one batch:
// consecutive seqs, checked against want, the request's expected_seq
// (expectedLen), which the caller reads before it resumes the session.
func appendRequest(ctx context.Context, sess *session.Session, m *logbookv1.SessionsAppendRequest, want *sdk.Offset) (session.Batch, error) {
	return sess.AppendBatch(ctx, appendInputs(m), session.BatchOptions{ExpectedLen: want})
}

// appendGroup appends the events of one request to sess as one atomic
// group, at want (the expected length) when it is set.
func appendGroup(ctx context.Context, sess *session.Session, m *logbookv1.SessionsAppendRequest, want *sdk.Offset) ([]session.Event, error) {
	if want != nil {
		return sess.AppendGroupAt(ctx, sdk.Seq(*want), appendInputs(m))
	}
	return sess.AppendGroup(ctx, appendInputs(m))
}

// appendInputs converts a request's events.
func appendInputs(m *logbookv1.SessionsAppendRequest) []session.AppendInput {
	ins := make([]session.AppendInput, len(m.GetEvents()))
	for i, in := range m.GetEvents() {
		ins[i] = appendInput(in)
	}
	return ins
}

func flushReply(r store.FlushResult) *logbookv1.SessionsFlushReply {
	out := &logbookv1.SessionsFlushReply{Participated: r.Participated}
	for _, b := range r.Backends {
		out.Backends = append(out.Backends, &logbookv1.BackendFlushStatus{Name: b.Name, DurableSeq: int64(b.DurableSeq)})
	}
	return out
}

// Append appends the request's events in order as one batch (see
// appendRequest), resuming the session first when it is not live (and
// releasing it again when the request fails: host.Borrow), and flushes
// when asked.
func (v *service) Append(ctx context.Context, req *connect.Request[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	return v.appendOnce(ctx, req.Msg, false)
}

// AppendGroup is Append for one atomic group (see session.AppendGroup):
// every event or none.
func (v *service) AppendGroup(ctx context.Context, req *connect.Request[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	return v.appendOnce(ctx, req.Msg, true)
}

// appendOnce serves Append and, with group, AppendGroup.
func (v *service) appendOnce(ctx context.Context, m *logbookv1.SessionsAppendRequest, group bool) (*connect.Response[logbookv1.SessionsAppendReply], error) {
	want, err := expectedLen(m)
	if err != nil {
		return nil, appendError(err, nil, 0, -1)
	}
	o, done, err := v.s.h.Borrow(ctx, m.GetSessionId())
	if err != nil {
		return nil, appendError(err, nil, 0, -1)
	}
	var (
		evs   []session.Event
		first int64 // the first event's seq, or the length a batch found; -1 for a refused group
	)
	if group {
		evs, err = appendGroup(ctx, o.Session, m, want)
		first = -1
		if len(evs) > 0 {
			first = int64(evs[0].Seq())
		}
	} else {
		var b session.Batch
		b, err = appendRequest(ctx, o.Session, m, want)
		evs, first = b.Events, int64(b.Start)
	}
	n := int64(len(evs))
	var res store.FlushResult
	if m.GetFlush() && (err == nil || n > 0) {
		var ferr error
		if res, ferr = v.s.st.Flush(ctx, o.Session); ferr != nil {
			err = errors.Join(err, ferr)
		}
	}
	done(err == nil)
	if err != nil {
		return nil, appendError(err, o.Session, n, first)
	}
	reply := &logbookv1.SessionsAppendReply{Envelopes: make([]string, 0, n)}
	var scratch []byte
	for _, ev := range evs {
		reply.Envelopes = append(reply.Envelopes, envelopeText(&scratch, ev))
	}
	if m.GetFlush() {
		reply.Flush = flushReply(res)
	}
	return connect.NewResponse(reply), nil
}

// AppendStream appends the events of a client stream to one session, each
// request's as one batch (see appendRequest), flushing at the requests that
// ask and at the end.
func (v *service) AppendStream(ctx context.Context, stream *connect.ClientStream[logbookv1.SessionsAppendRequest]) (*connect.Response[logbookv1.SessionsAppendStreamReply], error) {
	var (
		sess     *session.Session
		done     = func(bool) {} // ends the borrow of sess (host.Borrow)
		appended int64
		firstSeq int64 = -1 // the first appended event's seq; before one, the length the first request found
	)
	// fail ends the stream at a rejected event or a broken stream, after
	// flushing what it appended.
	fail := func(err error) (*connect.Response[logbookv1.SessionsAppendStreamReply], error) {
		if sess != nil && appended > 0 {
			if _, ferr := v.s.st.Flush(context.WithoutCancel(ctx), sess); ferr != nil {
				err = errors.Join(err, ferr)
			}
		}
		done(false)
		return nil, appendError(err, sess, appended, firstSeq)
	}
	for stream.Receive() {
		m := stream.Msg()
		want, err := expectedLen(m) // before the first message resumes the session
		if err != nil {
			return fail(err)
		}
		switch id := m.GetSessionId(); {
		case sess == nil:
			o, giveBack, err := v.s.h.Borrow(ctx, id)
			if err != nil {
				return fail(err)
			}
			sess, done = o.Session, giveBack
		case id != "" && id != sess.ID():
			return fail(sdk.Errorf(sdk.CodeUsage, "append", "an append stream carries one session: %q, then %q", sess.ID(), id))
		}
		b, err := appendRequest(ctx, sess, m, want)
		if firstSeq < 0 || (appended == 0 && len(b.Events) > 0) {
			firstSeq = int64(b.Start)
		}
		appended += int64(len(b.Events))
		if err != nil {
			return fail(err)
		}
		if m.GetFlush() {
			if _, err := v.s.st.Flush(ctx, sess); err != nil {
				return fail(err)
			}
		}
		if v.s.h.Stopping() {
			return fail(&sdk.Error{Code: sdk.CodePluginUnavailable, Op: "server", SessionID: sess.ID(),
				Detail: "the server is shutting down; the events appended so far are flushed"})
		}
	}
	if err := stream.Err(); err != nil {
		return fail(err)
	}
	if sess == nil {
		return fail(sdk.Errorf(sdk.CodeUsage, "append", "the append stream ended before naming a session"))
	}
	res, err := v.s.st.Flush(ctx, sess)
	if err != nil {
		return fail(err)
	}
	done(true)
	return connect.NewResponse(&logbookv1.SessionsAppendStreamReply{Appended: appended, NextSeq: int64(sess.Len()), Flush: flushReply(res)}), nil
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
	sess, err := v.s.h.At(ctx, req.Msg.GetSessionId(), nil)
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
	sess, err := v.s.h.At(ctx, req.Msg.GetSessionId(), nil)
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
	err := v.s.h.Tail(ctx, host.TailRequest{ID: id, From: next, End: end, Follow: m.GetFollow()}, &eventChunker{stream: stream})
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
	child, err := v.s.h.Fork(ctx, r)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsForkReply{Header: string(headerjson.Encode(child.Header()))}), nil
}

// Flush flushes a live session on every backend (host.Flush: one the
// server released for idleness answers its final flush).
func (v *service) Flush(ctx context.Context, req *connect.Request[logbookv1.SessionsFlushRequest]) (*connect.Response[logbookv1.SessionsFlushReply], error) {
	sess, res, err := v.s.h.Flush(ctx, req.Msg.GetSessionId())
	if err != nil {
		return nil, toConnect(err, fencedMeta(sess))
	}
	return connect.NewResponse(flushReply(res)), nil
}

// Compact runs a manual compaction with the engine's compactor, resuming
// the session when it is not live (and releasing it again when the
// compaction fails: host.Borrow).
func (v *service) Compact(ctx context.Context, req *connect.Request[logbookv1.SessionsCompactRequest]) (*connect.Response[logbookv1.SessionsCompactReply], error) {
	m := req.Msg
	start, end := (*sdk.Seq)(m.StartSeq), (*sdk.Seq)(m.EndSeq)
	if err := v.s.e.CheckCompact(start, end); err != nil {
		return nil, toConnect(err, nil)
	}
	o, done, err := v.s.h.Borrow(ctx, m.GetSessionId())
	if err != nil {
		return nil, toConnect(err, nil)
	}
	out, err := v.s.e.Compact(ctx, o.Session, start, end, m.GetSourceCommandId())
	done(err == nil)
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsCompactReply{Envelopes: envelopes(o.Session.Events().Range(sdk.Offset(out.StartSeq), sdk.Offset(out.EndSeq)+1))}), nil
}

// Inspect reports the log's length, its open turn, the closers a resume
// would append and the torn bytes a write open would cut; it never writes.
func (v *service) Inspect(ctx context.Context, req *connect.Request[logbookv1.SessionsInspectRequest]) (*connect.Response[logbookv1.SessionsInspectReply], error) {
	id := req.Msg.GetSessionId()
	in, err := v.s.h.Inspect(ctx, id)
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
	entries, err := v.s.h.List(ctx)
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

// Delete deletes a stored session (host.Delete), by "api".
func (v *service) Delete(ctx context.Context, req *connect.Request[logbookv1.SessionsDeleteRequest]) (*connect.Response[logbookv1.SessionsDeleteReply], error) {
	rec, err := v.s.h.Delete(ctx, req.Msg.GetSessionId(), sdk.AuditRequest{Reason: req.Msg.GetReason(), By: sdk.ByAPI})
	if err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsDeleteReply{Events: int64(rec.Events), Digest: rec.Digest}), nil
}

// Release flushes and releases a live session (host.Release: one the
// server released for idleness is released already).
func (v *service) Release(ctx context.Context, req *connect.Request[logbookv1.SessionsReleaseRequest]) (*connect.Response[logbookv1.SessionsReleaseReply], error) {
	if err := v.s.h.Release(ctx, req.Msg.GetSessionId()); err != nil {
		return nil, toConnect(err, nil)
	}
	return connect.NewResponse(&logbookv1.SessionsReleaseReply{}), nil
}
