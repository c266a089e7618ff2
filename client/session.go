package client

import (
	"context"
	"encoding/json"
	"iter"
	"sync/atomic"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Session is a handle on one session of the server, with the method names
// of the in-process runtime's session. It holds nothing but the id (and
// the header once known): every call asks the server, so a handle stays
// valid across a restart of the server, and any number of handles on one
// session may be used at once. A handle from Inspect is read-only.
type Session struct {
	c        *Client
	id       string
	header   atomic.Pointer[sdk.Header] // immutable once stored; nil until known
	readOnly bool                       // from Inspect: writes are SESSION_READ_ONLY, Release does nothing
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Header returns the session's stored header. A handle from Create,
// Resume or Fork knows it already; otherwise the first call asks the
// server (the header never changes).
func (s *Session) Header(ctx context.Context) (sdk.Header, error) {
	if h := s.header.Load(); h != nil {
		return *h, nil
	}
	r, err := s.c.rpc.Header(ctx, connect.NewRequest(&logbookv1.SessionsHeaderRequest{SessionId: s.id}))
	if err != nil {
		return sdk.Header{}, callError(ctx, "Header", err)
	}
	h, err := header(r.Msg.GetHeader(), s.id)
	if err != nil {
		return sdk.Header{}, err
	}
	s.header.Store(&h)
	return h, nil
}

// Len returns the number of events in the log, the seq the next append
// gets: the live session's when the server holds it, else the stored
// log's as it stands. It is the length at the call; other clients may
// append after it (AppendAt makes an append conditional on it).
func (s *Session) Len(ctx context.Context) (sdk.Offset, error) {
	r, err := s.c.rpc.Header(ctx, connect.NewRequest(&logbookv1.SessionsHeaderRequest{SessionId: s.id}))
	if err != nil {
		return 0, callError(ctx, "Header", err)
	}
	if r.Msg.NextSeq == nil {
		return 0, &sdk.Error{Code: sdk.CodeUsage, Op: "len", SessionID: s.id, Detail: "the server does not report the log length: it is older than this client; upgrade it"}
	}
	return sdk.Offset(r.Msg.GetNextSeq()), nil
}

// readOnlyError is the refusal of op on a handle from Inspect, as the
// runtime refuses it on its read-only view.
func (s *Session) readOnlyError(op string) *sdk.Error {
	e := sdk.Errorf(sdk.CodeSessionReadOnly, op, "an inspect view is read-only; resume the session to write")
	e.SessionID = s.id
	return e
}

// Append appends ins in order, resuming the session in the server first
// when it is not live; no other append lands between them, so their seqs
// are consecutive. It returns the stored events, one per input. At the
// first rejected input it stops: the events before it stay appended, and
// the error, an *AppendError, says how many.
//
// An input whose data is not valid UTF-8 is rejected the same way, with
// JSON_INVALID_UTF8, though by the client: the inputs before it are sent
// and it is not.
func (s *Session) Append(ctx context.Context, ins ...events.Input) ([]events.Event, error) {
	evs, _, err := s.append(ctx, appendCall{}, ins)
	return evs, err
}

// AppendAt is Append for a caller that expects the log to hold expected
// events: the server appends ins only if the log has exactly that length
// when they come, else the call fails with SEQ_CONFLICT (see SeqConflictOf)
// and appends nothing. AppendRetry builds on it.
func (s *Session) AppendAt(ctx context.Context, expected sdk.Offset, ins ...events.Input) ([]events.Event, error) {
	evs, _, err := s.append(ctx, appendCall{expected: &expected}, ins)
	return evs, err
}

// AppendGroup appends ins as one atomic group (docs/compaction.md): the
// members are validated together and committed with consecutive seqs, or,
// when any member is rejected, nothing is appended and the error (an
// *AppendError with Appended 0) is that member's, its Index the member's
// position. A group holds at most one surface or projection event.
func (s *Session) AppendGroup(ctx context.Context, ins ...events.Input) ([]events.Event, error) {
	evs, _, err := s.append(ctx, appendCall{group: true}, ins)
	return evs, err
}

// AppendGroupAt is AppendGroup for a group planned for a log of expected
// events, whose members may cite each other's seqs: another length is
// SEQ_CONFLICT and nothing is appended.
func (s *Session) AppendGroupAt(ctx context.Context, expected sdk.Offset, ins ...events.Input) ([]events.Event, error) {
	evs, _, err := s.append(ctx, appendCall{group: true, expected: &expected}, ins)
	return evs, err
}

// Appended is what AppendOnce did.
type Appended struct {
	// Events are the operation's events: appended now, or by the original
	// append when Replayed.
	Events []events.Event
	// Replayed reports that the session already held the operation id with
	// the same inputs: nothing was appended.
	Replayed bool
}

// AppendOnce appends ins as one atomic group under operationID
// (docs/format.md, "Operation ids"), so that a retry of it, from any
// process and after any restart of the server, never appends twice: when
// the session already holds the id with the same inputs (byte-equal
// canonical type, data, surfaceOp, sourceEventSeqs and ignorable), nothing
// is appended and the original events come back with Replayed set. Other
// inputs under a held id are OPERATION_CONFLICT, whose AppendError's
// FirstSeq (and Meta "firstSeq") is the original's first seq and Meta
// "count" its number of events. An id that is not 1–128 bytes of printable
// ASCII is OPERATION_ID_INVALID, refused before any call. Any failure is
// an *AppendError with Appended 0. RetryOptions.OperationID makes
// AppendRetry carry an id.
func (s *Session) AppendOnce(ctx context.Context, operationID string, ins ...events.Input) (Appended, error) {
	if err := sdk.ValidateOperationID(operationID); err != nil {
		return Appended{}, &AppendError{FirstSeq: -1, Err: err}
	}
	evs, replayed, err := s.append(ctx, appendCall{group: true, operationID: operationID}, ins)
	return Appended{Events: evs, Replayed: replayed}, err
}

// appendCall is how one append request goes.
type appendCall struct {
	group       bool        // AppendGroup: all or nothing
	expected    *sdk.Offset // the log length the events must find; nil = any
	flush       bool        // flush in the same round trip (AppendRetry)
	operationID string      // append once under this id (a group); "" = none
}

// append sends one append request and reports whether it was a replay of
// its operation id. Every failure is an *AppendError saying how many of
// ins were appended (and flushed, with a.flush, unless the flush is what
// failed).
func (s *Session) append(ctx context.Context, a appendCall, ins []events.Input) ([]events.Event, bool, error) {
	if s.readOnly {
		return nil, false, &AppendError{FirstSeq: firstSeqOf(nil, a.expected), Err: s.readOnlyError("append")}
	}
	valid, bad := invalidData(s.id, ins)
	if bad != nil && a.group {
		return nil, false, &AppendError{FirstSeq: firstSeqOf(nil, a.expected), Err: bad} // a group is all or nothing
	}
	flush := a.flush && (bad == nil || len(valid) > 0) // nothing to make durable, as when the server rejects the first event
	req := &logbookv1.SessionsAppendRequest{SessionId: s.id, Events: protoInputs(valid), Flush: flush, ExpectedSeq: expectedSeq(a.expected), OperationId: a.operationID}
	call, rpc := "Append", s.c.rpc.Append
	if a.group {
		call, rpc = "AppendGroup", s.c.rpc.AppendGroup
	}
	r, err := rpc(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, false, callError(ctx, call, err)
	}
	evs, err := parseEvents(r.Msg.GetEnvelopes())
	if err != nil {
		return nil, false, err
	}
	if bad != nil {
		return nil, false, &AppendError{Appended: int64(len(valid)), FirstSeq: firstSeqOf(evs, a.expected), Err: bad}
	}
	return evs, r.Msg.GetReplay(), nil
}

// Flush makes everything appended to the session durable on every backend;
// a failure is FLUSH_FAILED. The session must be live in the server
// (SESSION_NOT_LIVE otherwise); a handle from Inspect is SESSION_READ_ONLY.
func (s *Session) Flush(ctx context.Context) error {
	if s.readOnly {
		return s.readOnlyError("flush")
	}
	_, err := s.c.rpc.Flush(ctx, connect.NewRequest(&logbookv1.SessionsFlushRequest{SessionId: s.id}))
	return callError(ctx, "Flush", err)
}

// Release flushes the session, closes its backend handles in the server and
// gives up its write ownership. The handle stays usable: its next append
// resumes the session. A handle from Inspect holds nothing, and its
// Release does nothing.
func (s *Session) Release(ctx context.Context) error {
	if s.readOnly {
		return nil
	}
	_, err := s.c.rpc.Release(ctx, connect.NewRequest(&logbookv1.SessionsReleaseRequest{SessionId: s.id}))
	return callError(ctx, "Release", err)
}

// Messages returns the derived model messages, each message object exactly
// as derived (canonical JSON), as they are now or, with o.At, as they were
// right after that event.
func (s *Session) Messages(ctx context.Context, o ViewOptions) ([]json.RawMessage, error) {
	r, err := s.c.rpc.Messages(ctx, connect.NewRequest(&logbookv1.SessionsMessagesRequest{SessionId: s.id, At: o.at()}))
	if err != nil {
		return nil, callError(ctx, "Messages", err)
	}
	return raw(r.Msg.GetMessages()), nil
}

// Transcript returns the human transcript: every event that appended a
// message to the surface, in seq order, with that message as recorded.
func (s *Session) Transcript(ctx context.Context) ([]events.TranscriptEntry, error) {
	r, err := s.c.rpc.Transcript(ctx, connect.NewRequest(&logbookv1.SessionsTranscriptRequest{SessionId: s.id}))
	if err != nil {
		return nil, callError(ctx, "Transcript", err)
	}
	out := make([]events.TranscriptEntry, len(r.Msg.GetEntries()))
	for i, e := range r.Msg.GetEntries() {
		out[i] = events.TranscriptEntry{Seq: sdk.Seq(e.GetSeq()), Type: e.GetType(), Message: json.RawMessage(e.GetMessage())}
	}
	return out, nil
}

// Surface returns the seqs of the surface nodes, in surface order, as they
// are now or, with o.At, as they were right after that event.
func (s *Session) Surface(ctx context.Context, o ViewOptions) ([]sdk.Seq, error) {
	r, err := s.c.rpc.Surface(ctx, connect.NewRequest(&logbookv1.SessionsSurfaceRequest{SessionId: s.id, At: o.at()}))
	if err != nil {
		return nil, callError(ctx, "Surface", err)
	}
	out := make([]sdk.Seq, len(r.Msg.GetSeqs()))
	for i, seq := range r.Msg.GetSeqs() {
		out[i] = sdk.Seq(seq)
	}
	return out, nil
}

// Events returns the whole log in seq order. Read streams a part of it,
// or follows it.
func (s *Session) Events(ctx context.Context) ([]events.Event, error) {
	var out []events.Event
	for ev, err := range s.Read(ctx, ReadOptions{}) {
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// ReadOptions choose the events of Read.
type ReadOptions struct {
	From   sdk.Offset  // first seq
	To     *sdk.Offset // exclusive end; nil = the end (or forever with Follow)
	Follow bool        // after the log, yield every event appended in the server until ctx ends
}

// Read yields the events of the log from o.From in seq order, as the
// server streams them, and at most one error, last. With o.Follow it keeps
// yielding events appended in the server until ctx ends (then it stops
// without an error) or o.To is reached. Breaking out of the loop ends the
// call.
func (s *Session) Read(ctx context.Context, o ReadOptions) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req := &logbookv1.SessionsEventsRequest{SessionId: s.id, From: int64(o.From), Follow: o.Follow}
		if o.To != nil {
			to := int64(*o.To)
			req.To = &to
		}
		stream, err := s.c.rpc.Events(ctx, connect.NewRequest(req))
		if err != nil {
			yield(events.Event{}, callError(ctx, "Events", err))
			return
		}
		defer stream.Close()
		for stream.Receive() {
			for _, text := range stream.Msg().GetEnvelopes() {
				ev, err := events.ParseEvent([]byte(text))
				if !yield(ev, err) || err != nil {
					return
				}
			}
		}
		if err := stream.Err(); err != nil && !(o.Follow && ctx.Err() != nil) {
			yield(events.Event{}, callError(ctx, "Events", err))
		}
	}
}

// CompactOptions tune Compact.
type CompactOptions struct {
	// Start and End, both or neither, compact exactly the current nodes
	// Start..End; neither = the largest balanced head of the surface.
	Start, End *sdk.Seq
	// SourceCommandID is recorded in the bracket (without Start and End);
	// "" = none.
	SourceCommandID string
}

// Compact runs a manual compaction with the server's configured summarizer
// (docs/compaction.md), resuming the session first when it is not live,
// and returns the events it appended. A handle from Inspect is
// SESSION_READ_ONLY.
func (s *Session) Compact(ctx context.Context, o CompactOptions) ([]events.Event, error) {
	if s.readOnly {
		return nil, s.readOnlyError("compact")
	}
	req := &logbookv1.SessionsCompactRequest{SessionId: s.id, SourceCommandId: o.SourceCommandID}
	if o.Start != nil {
		v := int64(*o.Start)
		req.StartSeq = &v
	}
	if o.End != nil {
		v := int64(*o.End)
		req.EndSeq = &v
	}
	r, err := s.c.rpc.Compact(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, callError(ctx, "Compact", err)
	}
	return parseEvents(r.Msg.GetEnvelopes())
}
