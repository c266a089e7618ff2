package client

import (
	"context"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Coalescing of an AppendStream: events are held until the pending
// message reaches streamBatchBytes or streamBatchEvents, a Send asks for a
// flush, or streamLinger passed since the first of them was held.
const (
	streamBatchBytes  = 64 << 10
	streamBatchEvents = 256
	streamLinger      = time.Millisecond
)

// AppendStream is an open append stream to one session. Send coalesces
// events into larger messages, so a caller may send one event at a time
// at full speed: an event is held for at most a millisecond before it
// goes out. Safe for concurrent use, though events from concurrent Sends
// interleave in no particular order.
type AppendStream struct {
	ctx    context.Context
	id     string
	stream *connect.ClientStreamForClient[logbookv1.SessionsAppendRequest, logbookv1.SessionsAppendStreamReply] // nil on a read-only handle

	mu      sync.Mutex
	named   bool                             // the session id was sent
	pending *logbookv1.SessionsAppendRequest // held events; nil when none
	size    int                              // their data bytes
	timer   *time.Timer                      // sends the held events at the linger deadline
	err     error                            // the first send error; the stream is broken
	bad     *sdk.Error                       // the client's rejection of an event (invalid UTF-8), which broke the stream
}

// AppendStream opens a stream of appends to the session; the server
// resumes the session when it is not live. Nothing is sent before the
// first Send. On a handle from Inspect the stream is broken from the
// start: Send returns SESSION_READ_ONLY, and so does CloseAndReceive, in
// an *AppendError, without a call.
func (s *Session) AppendStream(ctx context.Context) *AppendStream {
	if s.readOnly {
		return &AppendStream{ctx: ctx, id: s.id, err: s.readOnlyError("append")}
	}
	return &AppendStream{ctx: ctx, id: s.id, stream: s.c.rpc.AppendStream(ctx)}
}

// Send appends events to the stream. With flush they go out at once, with
// everything held before them, and the server flushes them before it reads
// on (a durability checkpoint). An error means the stream is broken:
// CloseAndReceive returns the server's reason.
//
// An event whose data is not valid UTF-8 is rejected by the client, as the
// server would reject it: the events before it go out, Send returns its
// JSON_INVALID_UTF8 error, and CloseAndReceive ends the stream (the server
// flushes what it appended) and returns an *AppendError counting them.
func (s *AppendStream) Send(ins []events.Input, flush bool) error {
	return s.send(ins, flush, nil, nil)
}

// SendExpected is Send for events that must find a log of expected events:
// the events held before them go out first, then these at once as one
// message of their own, which the server appends only if the log length
// equals expected right before them. A mismatch ends the stream:
// CloseAndReceive returns SEQ_CONFLICT (see SeqConflictOf) in an
// *AppendError counting what the stream appended before.
func (s *AppendStream) SendExpected(expected sdk.Offset, ins []events.Input, flush bool) error {
	return s.send(ins, flush, &expected, nil)
}

// SendOnce is Send for events appended once, as one atomic group under
// operationID (Session.AppendOnce): the events held before them go out
// first, then these at once as one message of their own. When the session
// already holds the id with the same events the server appends nothing
// (and does not count them in the result); other events under the id end
// the stream with OPERATION_CONFLICT. A malformed id (OPERATION_ID_INVALID)
// or an event whose data is not valid UTF-8 is rejected by the client, as
// Send rejects one: none of these events is sent, and the stream ends.
func (s *AppendStream) SendOnce(operationID string, ins []events.Input, flush bool) error {
	return s.send(ins, flush, nil, &operationID)
}

// send is Send, with an expected length when expected is not nil and as
// an operation when op is not nil.
func (s *AppendStream) send(ins []events.Input, flush bool, expected *sdk.Offset, op *string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	alone := expected != nil || op != nil // a message of their own
	if alone && s.pending != nil {
		if err := s.sendLocked(); err != nil { // the held events, before the check
			return err
		}
	}
	if s.pending == nil {
		s.pending = &logbookv1.SessionsAppendRequest{ExpectedSeq: expectedSeq(expected)}
	}
	valid, bad := invalidData(s.id, ins)
	if op != nil {
		if err := sdk.ValidateOperationID(*op); err != nil {
			bad = sdk.ErrorOf(err)
		}
		if bad != nil {
			valid = nil // an operation is all or nothing
		} else {
			s.pending.OperationId = *op
		}
	}
	for _, in := range valid {
		s.pending.Events = append(s.pending.Events, protoInput(in))
		s.size += len(in.Data)
	}
	if bad != nil {
		if len(s.pending.Events) > 0 || !s.named || expected != nil { // the events before it, the session's name, the check
			if err := s.sendLocked(); err != nil {
				return err
			}
		}
		s.pending, s.size = nil, 0
		s.err, s.bad = bad, bad
		return bad
	}
	if flush || alone || s.size >= streamBatchBytes || len(s.pending.Events) >= streamBatchEvents {
		s.pending.Flush = flush
		return s.sendLocked()
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(streamLinger, s.linger)
	} else if len(s.pending.Events) == len(ins) { // the first held events: a new deadline
		s.timer.Reset(streamLinger)
	}
	return nil
}

// linger sends the held events when their deadline passes.
func (s *AppendStream) linger() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.pending != nil {
		_ = s.sendLocked()
	}
}

// sendLocked sends the held events as one message; s.mu is held.
func (s *AppendStream) sendLocked() error {
	m := s.pending
	s.pending, s.size = nil, 0
	if !s.named {
		m.SessionId, s.named = s.id, true
	}
	if err := s.stream.Send(m); err != nil {
		s.err = callError(s.ctx, "AppendStream", err)
		return s.err
	}
	return nil
}

// StreamResult is the result of an append stream.
type StreamResult struct {
	Appended int64      // events the stream appended
	NextSeq  sdk.Offset // the log length at the end of the stream
	Flush    FlushResult
}

// CloseAndReceive ends the stream; the server flushes the session and
// reports. Every failure is an *AppendError counting the events the stream
// appended (and flushed, unless the flush is what failed) before it.
func (s *AppendStream) CloseAndReceive() (StreamResult, error) {
	s.mu.Lock()
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.err == nil && (s.pending != nil || !s.named) {
		if s.pending == nil {
			s.pending = &logbookv1.SessionsAppendRequest{} // names the session
		}
		_ = s.sendLocked() // on error the reply below says why
	}
	bad, broken := s.bad, s.err
	s.mu.Unlock()
	if s.stream == nil { // a read-only handle's: nothing was sent
		return StreamResult{}, &AppendError{FirstSeq: -1, Err: broken}
	}
	r, err := s.stream.CloseAndReceive()
	if err != nil {
		return StreamResult{}, callError(s.ctx, "AppendStream", err)
	}
	if bad != nil {
		return StreamResult{}, &AppendError{Appended: r.Msg.GetAppended(), FirstSeq: -1, Err: bad}
	}
	return StreamResult{Appended: r.Msg.GetAppended(), NextSeq: sdk.Offset(r.Msg.GetNextSeq()), Flush: flushResult(r.Msg.GetFlush())}, nil
}
