// Package client is a Go client of `logbook serve` (the logbook.v1.Sessions
// API, see runtime/server). It speaks gRPC over HTTP/2 without TLS (h2c)
// and hands out plain Go values: envelopes, event data, messages and
// headers are canonical JSON (json.RawMessage), exactly as the server's
// store holds them.
//
// Every error carries a stable error code: the server's (an *sdk.Error rebuilt
// from the call's google.rpc.ErrorInfo, so errors.Is(err,
// sdk.ErrSessionNotFound) works), or, for a failure without one (the server
// is unreachable, the token is wrong), PLUGIN_UNAVAILABLE when the status
// is Unavailable, DeadlineExceeded, Aborted or Canceled and IO_ERROR
// otherwise, wrapping the *connect.Error (connect.CodeOf(err) returns its
// status code, e.g. connect.CodeUnauthenticated).
//
// On the wire those documents are canonical JSON text in protobuf string
// fields, which must be valid UTF-8 (as canonical JSON always is): event
// data that is not is refused by the client itself with
// JSON_INVALID_UTF8, at the same point of a call as the server would refuse
// it (see Append and AppendStream.Send).
//
// Appends can be retried safely: AppendOptions.ExpectedSeq makes an append
// conditional on the log length, every failed append is an *AppendError
// saying how many of its events were appended, and AppendRetry combines
// both so that a retry never appends an event twice.
//
// A Client is safe for concurrent use.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// Options configure a Client.
type Options struct {
	// Token is sent as "Authorization: Bearer <token>" with every call;
	// "" sends none.
	Token string
	// HTTPClient carries the calls. It must speak HTTP/2 (gRPC needs it);
	// default a client of its own that speaks HTTP/2 without TLS to http://
	// URLs and with TLS to https:// ones.
	HTTPClient *http.Client
}

// Client calls one logbook server.
type Client struct {
	rpc  logbookv1connect.SessionsClient
	http *http.Client
	own  bool // http is the client's own
}

// New returns a client of the server at baseURL ("http://127.0.0.1:7420");
// a bare "host:port" means http://host:port. It makes no call.
func New(baseURL string, o Options) *Client {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	c := &Client{http: o.HTTPClient}
	if c.http == nil {
		var p http.Protocols
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		c.http, c.own = &http.Client{Transport: &http.Transport{Protocols: &p}}, true
	}
	var hc connect.HTTPClient = c.http
	if o.Token != "" {
		hc = bearer{next: hc, header: "Bearer " + o.Token}
	}
	c.rpc = logbookv1connect.NewSessionsClient(hc, strings.TrimSuffix(baseURL, "/"), connect.WithGRPC())
	return c
}

// Close closes the idle connections of the client's own HTTP client; a
// caller's HTTPClient is left alone.
func (c *Client) Close() {
	if c.own {
		c.http.CloseIdleConnections()
	}
}

// bearer adds the Authorization header to every request.
type bearer struct {
	next   connect.HTTPClient
	header string
}

// Do sends r with the bearer token.
func (b bearer) Do(r *http.Request) (*http.Response, error) {
	r.Header.Set("Authorization", b.header)
	return b.next.Do(r)
}

// AppendError is the error of a failed Append or AppendStream, whatever
// the failure (a rejected event, a failed flush, a SEQ_CONFLICT, an
// unreachable session): Appended of the call's events were committed before
// it (and flushed when the call asked for a flush and the flush is not what
// failed), with seqs FirstSeq, FirstSeq+1, …. Err is the failure, an
// *sdk.Error.
type AppendError struct {
	Appended int64
	// FirstSeq is the seq of the first appended event or, when none was,
	// the log length the append found; -1 when the server did not reach
	// the session (or did not say).
	FirstSeq int64
	Err      error
}

// Error returns the failure's text and the count.
func (e *AppendError) Error() string {
	if e.Appended == 0 {
		return e.Err.Error() + " (no event of the call was appended)"
	}
	return e.Err.Error() + " (" + strconv.FormatInt(e.Appended, 10) + " events of the call were appended, from seq " + strconv.FormatInt(e.FirstSeq, 10) + ")"
}

// Unwrap returns the failure.
func (e *AppendError) Unwrap() error { return e.Err }

// SeqConflictOf reports the lengths of a SEQ_CONFLICT anywhere in err's
// chain: the log length the append expected and the one it found.
func SeqConflictOf(err error) (expected, actual sdk.Offset, ok bool) {
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeSeqConflict {
		return 0, 0, false
	}
	want, ok1 := e.MetaInt("expected")
	got, ok2 := e.MetaInt("actual")
	return sdk.Offset(want), sdk.Offset(got), ok1 && ok2
}

// callError turns the error of a call into the package's errors (see the
// package doc). call names the RPC in messages. The counts of an append
// (ErrorInfo metadata "appended" and "firstSeq") make it an *AppendError.
func callError(ctx context.Context, call string, err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "client", Detail: call + " failed", Err: err}
	}
	var (
		e      *sdk.Error
		counts map[string]string
	)
	for _, d := range ce.Details() {
		v, derr := d.Value()
		info, ok := v.(*errdetails.ErrorInfo)
		if derr != nil || !ok || info.GetDomain() != errinfo.Domain {
			continue
		}
		if _, ok := info.GetMetadata()["appended"]; ok && counts == nil {
			counts = info.GetMetadata()
		}
		if e == nil {
			e = errinfo.Decode(info)
		}
	}
	if e == nil {
		code := sdk.CodeIOError
		switch ce.Code() {
		case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeAborted, connect.CodeCanceled:
			code = sdk.CodePluginUnavailable
		}
		cause := err
		if cerr := ctx.Err(); cerr != nil {
			cause = fmt.Errorf("%w: %w", cerr, err)
		}
		e = &sdk.Error{Code: code, Op: "client", Detail: call + " failed with " + ce.Code().String(), Err: cause}
	}
	n, nerr := strconv.ParseInt(counts["appended"], 10, 64)
	if nerr != nil {
		return e
	}
	first, ferr := strconv.ParseInt(counts["firstSeq"], 10, 64)
	if ferr != nil {
		first = -1
	}
	return &AppendError{Appended: n, FirstSeq: first, Err: e}
}

// raw returns the JSON texts of a reply as JSON values, byte for byte.
func raw(texts []string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, t := range texts {
		out[i] = json.RawMessage(t)
	}
	return out
}

// rawOne returns one JSON text of a reply as a JSON value; "" (absent) is
// nil.
func rawOne(text string) json.RawMessage {
	if text == "" {
		return nil
	}
	return json.RawMessage(text)
}

// invalidData returns the events before the first one whose data is not
// valid UTF-8, and the JSON_INVALID_UTF8 error of that event (nil when
// every event's data is valid). The wire carries data as a protobuf string,
// which cannot hold invalid UTF-8, so the client refuses such an event
// where the server's validation (docs/format.md) would have.
func invalidData(id string, events []Input) ([]Input, *sdk.Error) {
	for i, in := range events {
		if utf8.Valid(in.Data) {
			continue
		}
		off := 0
		for off < len(in.Data) {
			r, size := utf8.DecodeRune(in.Data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return events[:i], &sdk.Error{Code: sdk.CodeJSONInvalidUTF8, Op: "append", SessionID: id,
			Detail: fmt.Sprintf("invalid UTF-8 at byte offset %d of the data of a %s event (refused by the client: the Sessions API carries data as text)", off, strconv.Quote(in.Type))}
	}
	return events, nil
}

// CreateOptions are the caller's part of a new session's header.
type CreateOptions struct {
	ID              string // "" = generated by the server (a lowercase UUIDv7)
	CWD             string // "" or absolute
	Origin          string // "" or "subagent"
	DelegationDepth int64
	AgentPreset     string
	ParentSession   string
}

// Create makes a new empty session, live in the server, and returns its
// stored header (canonical JSON, docs/storage.md).
func (c *Client) Create(ctx context.Context, o CreateOptions) (json.RawMessage, error) {
	r, err := c.rpc.Create(ctx, connect.NewRequest(&logbookv1.SessionsCreateRequest{
		SessionId: o.ID, Cwd: o.CWD, Origin: o.Origin, DelegationDepth: o.DelegationDepth, AgentPreset: o.AgentPreset, ParentSession: o.ParentSession,
	}))
	if err != nil {
		return nil, callError(ctx, "Create", err)
	}
	return rawOne(r.Msg.GetHeader()), nil
}

// Opened is the result of Open.
type Opened struct {
	Header      json.RawMessage // canonical session header JSON
	NextSeq     sdk.Offset      // the log length after the open
	AlreadyLive bool            // the session was live in the server: nothing was read or repaired
	TornBytes   int64           // bytes the write open cut
	TornFromSeq sdk.Seq
	Artifact    string            // where the cut bytes were kept
	Repaired    []json.RawMessage // session/recovered and the closers the resume appended
}

// Open resumes a stored session for write in the server (repairing an
// interrupted turn and a torn tail durably, docs/architecture.md); a session already
// live there is returned as it is.
func (c *Client) Open(ctx context.Context, id string) (Opened, error) {
	r, err := c.rpc.Open(ctx, connect.NewRequest(&logbookv1.SessionsOpenRequest{SessionId: id}))
	if err != nil {
		return Opened{}, callError(ctx, "Open", err)
	}
	m := r.Msg
	return Opened{Header: rawOne(m.GetHeader()), NextSeq: sdk.Offset(m.GetNextSeq()), AlreadyLive: m.GetAlreadyLive(), TornBytes: m.GetTornBytes(),
		TornFromSeq: sdk.Seq(m.GetTornFromSeq()), Artifact: m.GetTornArtifact(), Repaired: raw(m.GetRepaired())}, nil
}

// SurfaceOp is "append" (Replace false) or a replacement of the current
// nodes StartSeq..EndSeq (docs/format.md).
type SurfaceOp struct {
	Replace          bool
	StartSeq, EndSeq sdk.Seq
}

// Input is one event to append (docs/format.md).
type Input struct {
	Type string
	// Data is one JSON value, sent as written (as JSON text: it must be
	// valid UTF-8): the server validates it losslessly and keeps member
	// order and number literals.
	Data            json.RawMessage
	SurfaceOp       *SurfaceOp // nil = absent
	SourceEventSeqs []sdk.Seq  // nil = absent; non-nil and empty = present and empty
	Ignorable       bool
}

func (in Input) proto() *logbookv1.AppendInput {
	p := &logbookv1.AppendInput{Type: in.Type, Data: string(in.Data), Ignorable: in.Ignorable}
	if op := in.SurfaceOp; op != nil {
		p.SurfaceOp = &logbookv1.SurfaceOp{Replace: op.Replace, StartSeq: int64(op.StartSeq), EndSeq: int64(op.EndSeq)}
	}
	if in.SourceEventSeqs != nil {
		p.SourceEventSeqs = &logbookv1.SourceEventSeqs{Seqs: make([]int64, len(in.SourceEventSeqs))}
		for i, s := range in.SourceEventSeqs {
			p.SourceEventSeqs.Seqs[i] = int64(s)
		}
	}
	return p
}

func protoInputs(events []Input) []*logbookv1.AppendInput {
	out := make([]*logbookv1.AppendInput, len(events))
	for i, in := range events {
		out[i] = in.proto()
	}
	return out
}

// BackendStatus is one backend's part of a flush.
type BackendStatus struct {
	Name       string
	DurableSeq sdk.Cursor // the backend's watermark after the flush; -1 when it holds nothing
}

// FlushResult is a flush fan-out's result (docs/architecture.md).
type FlushResult struct {
	Participated bool // false: no backend is attached, which proves no durability
	Backends     []BackendStatus
}

func flushResult(p *logbookv1.SessionsFlushReply) FlushResult {
	r := FlushResult{Participated: p.GetParticipated()}
	for _, b := range p.GetBackends() {
		r.Backends = append(r.Backends, BackendStatus{Name: b.GetName(), DurableSeq: sdk.Cursor(b.GetDurableSeq())})
	}
	return r
}

// Appended is the result of Append.
type Appended struct {
	Envelopes []json.RawMessage // one canonical envelope per event, in order
	Flush     *FlushResult      // set when the call flushed
}

// AppendOptions tune Append.
type AppendOptions struct {
	// Flush makes the events durable on every backend before Append
	// returns (a loop checkpoint).
	Flush bool
	// ExpectedSeq, when set, is the log length the events must find: the
	// server appends them only if the session's log is exactly that long at
	// that moment, else the call fails with SEQ_CONFLICT (see
	// SeqConflictOf) and nothing is appended. AppendRetry builds on it.
	ExpectedSeq *sdk.Offset
}

// expectedSeq is an ExpectedSeq on the wire.
func expectedSeq(o *sdk.Offset) *int64 {
	if o == nil {
		return nil
	}
	v := int64(*o)
	return &v
}

// Append appends events in order to session id, resuming it in the server
// first when it is not live; no other append lands between them. Every
// failure is an *AppendError saying how many of the events were appended
// (at a rejected event the events before it stay committed, and are
// flushed when o.Flush is set).
//
// An event whose data is not valid UTF-8 is rejected the same way, with
// JSON_INVALID_UTF8, though by the client: the events before it are sent
// (and flushed when o.Flush is set) and it is not.
func (c *Client) Append(ctx context.Context, id string, events []Input, o AppendOptions) (Appended, error) {
	valid, bad := invalidData(id, events)
	flush := o.Flush
	if bad != nil && len(valid) == 0 {
		flush = false // nothing to make durable, as when the server rejects the first event
	}
	r, err := c.rpc.Append(ctx, connect.NewRequest(&logbookv1.SessionsAppendRequest{SessionId: id, Events: protoInputs(valid), Flush: flush, ExpectedSeq: expectedSeq(o.ExpectedSeq)}))
	if err != nil {
		return Appended{}, callError(ctx, "Append", err)
	}
	out := Appended{Envelopes: raw(r.Msg.GetEnvelopes())}
	if bad != nil {
		return Appended{}, &AppendError{Appended: int64(len(valid)), FirstSeq: firstSeqOf(out.Envelopes, o.ExpectedSeq), Err: bad}
	}
	if f := r.Msg.GetFlush(); f != nil {
		fr := flushResult(f)
		out.Flush = &fr
	}
	return out, nil
}

// firstSeqOf returns the seq of the first envelope; with none, the expected
// length or -1 (unknown).
func firstSeqOf(envelopes []json.RawMessage, expected *sdk.Offset) int64 {
	var e struct{ Seq *int64 }
	if len(envelopes) > 0 && json.Unmarshal(envelopes[0], &e) == nil && e.Seq != nil {
		return *e.Seq
	}
	if expected != nil {
		return int64(*expected)
	}
	return -1
}

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
	stream *connect.ClientStreamForClient[logbookv1.SessionsAppendRequest, logbookv1.SessionsAppendStreamReply]

	mu      sync.Mutex
	named   bool                             // the session id was sent
	pending *logbookv1.SessionsAppendRequest // held events; nil when none
	size    int                              // their data bytes
	timer   *time.Timer                      // sends the held events at the linger deadline
	err     error                            // the first send error; the stream is broken
	bad     *sdk.Error                       // the client's rejection of an event (invalid UTF-8), which broke the stream
}

// AppendStream opens a stream of appends to session id; the server resumes
// the session when it is not live. Nothing is sent before the first Send.
func (c *Client) AppendStream(ctx context.Context, id string) *AppendStream {
	return &AppendStream{ctx: ctx, id: id, stream: c.rpc.AppendStream(ctx)}
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
func (s *AppendStream) Send(events []Input, flush bool) error {
	return s.send(events, flush, nil)
}

// SendExpected is Send for events that must find a log of expected events:
// the events held before them go out first, then these at once as one
// message of their own, which the server appends only if the log length
// equals expected right before them. A mismatch ends the stream:
// CloseAndReceive returns SEQ_CONFLICT (see SeqConflictOf) in an
// *AppendError counting what the stream appended before.
func (s *AppendStream) SendExpected(expected sdk.Offset, events []Input, flush bool) error {
	return s.send(events, flush, &expected)
}

// send is Send, with an expected length when expected is not nil.
func (s *AppendStream) send(events []Input, flush bool, expected *sdk.Offset) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if expected != nil && s.pending != nil {
		if err := s.sendLocked(); err != nil { // the held events, before the check
			return err
		}
	}
	if s.pending == nil {
		s.pending = &logbookv1.SessionsAppendRequest{ExpectedSeq: expectedSeq(expected)}
	}
	valid, bad := invalidData(s.id, events)
	for _, in := range valid {
		s.pending.Events = append(s.pending.Events, in.proto())
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
	if flush || expected != nil || s.size >= streamBatchBytes || len(s.pending.Events) >= streamBatchEvents {
		s.pending.Flush = flush
		return s.sendLocked()
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(streamLinger, s.linger)
	} else if len(s.pending.Events) == len(events) { // the first held events: a new deadline
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
	bad := s.bad
	s.mu.Unlock()
	r, err := s.stream.CloseAndReceive()
	if err != nil {
		return StreamResult{}, callError(s.ctx, "AppendStream", err)
	}
	if bad != nil {
		return StreamResult{}, &AppendError{Appended: r.Msg.GetAppended(), FirstSeq: -1, Err: bad}
	}
	return StreamResult{Appended: r.Msg.GetAppended(), NextSeq: sdk.Offset(r.Msg.GetNextSeq()), Flush: flushResult(r.Msg.GetFlush())}, nil
}

// Messages returns the derived model messages of session id (each message
// object exactly as derived): now, or right after event *at when at is not
// nil. A session that is not live is read from storage as it is.
func (c *Client) Messages(ctx context.Context, id string, at *sdk.Seq) ([]json.RawMessage, error) {
	req := &logbookv1.SessionsMessagesRequest{SessionId: id}
	if at != nil {
		v := int64(*at)
		req.At = &v
	}
	r, err := c.rpc.Messages(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, callError(ctx, "Messages", err)
	}
	return raw(r.Msg.GetMessages()), nil
}

// EventsOptions choose the events of Events.
type EventsOptions struct {
	From   sdk.Offset  // first seq
	To     *sdk.Offset // exclusive end; nil = the end (or forever with Follow)
	Follow bool        // after the log, yield every event appended in the server until ctx ends
}

// Events yields the canonical envelopes of session id in seq order, and at
// most one error, last. With Follow it keeps yielding live events until ctx
// ends (then it stops without an error) or To is reached. Breaking out of
// the loop ends the call.
func (c *Client) Events(ctx context.Context, id string, o EventsOptions) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		req := &logbookv1.SessionsEventsRequest{SessionId: id, From: int64(o.From), Follow: o.Follow}
		if o.To != nil {
			to := int64(*o.To)
			req.To = &to
		}
		stream, err := c.rpc.Events(ctx, connect.NewRequest(req))
		if err != nil {
			yield(nil, callError(ctx, "Events", err))
			return
		}
		defer stream.Close()
		for stream.Receive() {
			for _, e := range stream.Msg().GetEnvelopes() {
				if !yield(json.RawMessage(e), nil) {
					return
				}
			}
		}
		if err := stream.Err(); err != nil && !(o.Follow && ctx.Err() != nil) {
			yield(nil, callError(ctx, "Events", err))
		}
	}
}

// ForkOptions name a fork's source, boundary and child (docs/architecture.md).
type ForkOptions struct {
	SourceID string
	At       *sdk.Seq // inclusive boundary; nil = the source's last event
	ChildID  string   // "" = generated
}

// Fork creates a child session, live in the server, from a prefix of a live
// or stored source, and returns the child's stored header.
func (c *Client) Fork(ctx context.Context, o ForkOptions) (json.RawMessage, error) {
	req := &logbookv1.SessionsForkRequest{SourceId: o.SourceID, ChildId: o.ChildID}
	if o.At != nil {
		v := int64(*o.At)
		req.At = &v
	}
	r, err := c.rpc.Fork(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, callError(ctx, "Fork", err)
	}
	return rawOne(r.Msg.GetHeader()), nil
}

// Flush makes everything appended to the live session id durable on every
// backend; a failure is FLUSH_FAILED.
func (c *Client) Flush(ctx context.Context, id string) (FlushResult, error) {
	r, err := c.rpc.Flush(ctx, connect.NewRequest(&logbookv1.SessionsFlushRequest{SessionId: id}))
	if err != nil {
		return FlushResult{}, callError(ctx, "Flush", err)
	}
	return flushResult(r.Msg), nil
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

// Compact runs a manual compaction of session id with the configured
// summarizer (docs/compaction.md) and returns the events it appended.
func (c *Client) Compact(ctx context.Context, id string, o CompactOptions) ([]json.RawMessage, error) {
	req := &logbookv1.SessionsCompactRequest{SessionId: id, SourceCommandId: o.SourceCommandID}
	if o.Start != nil {
		v := int64(*o.Start)
		req.StartSeq = &v
	}
	if o.End != nil {
		v := int64(*o.End)
		req.EndSeq = &v
	}
	r, err := c.rpc.Compact(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, callError(ctx, "Compact", err)
	}
	return raw(r.Msg.GetEnvelopes()), nil
}

// Inspection is a read-only balanced view of a session.
type Inspection struct {
	ID            string
	Header        json.RawMessage
	Events        int64             // events in the log, without PendingRepair
	OpenTurn      *int64            // the open turn's number; nil when none is open
	PendingRepair []json.RawMessage // the closers a resume would append
	TornBytes     int64             // bytes a write open would cut
	TornFromSeq   sdk.Seq
	Live          bool // live in the server
}

// Inspect returns what a resume of session id would find and do; it never
// writes.
func (c *Client) Inspect(ctx context.Context, id string) (Inspection, error) {
	r, err := c.rpc.Inspect(ctx, connect.NewRequest(&logbookv1.SessionsInspectRequest{SessionId: id}))
	if err != nil {
		return Inspection{}, callError(ctx, "Inspect", err)
	}
	m := r.Msg
	return Inspection{ID: m.GetId(), Header: rawOne(m.GetHeader()), Events: m.GetEvents(), OpenTurn: m.OpenTurn, PendingRepair: raw(m.GetPendingRepair()),
		TornBytes: m.GetTornBytes(), TornFromSeq: sdk.Seq(m.GetTornFromSeq()), Live: m.GetLive()}, nil
}

// ListEntry is one session of List.
type ListEntry struct {
	ID       string
	Header   json.RawMessage // nil when Err is set
	Live     bool            // live in the server
	Revision string
	Err      *sdk.Error // the session cannot be read
}

// List returns the live and stored sessions, by id.
func (c *Client) List(ctx context.Context) ([]ListEntry, error) {
	r, err := c.rpc.List(ctx, connect.NewRequest(&logbookv1.SessionsListRequest{}))
	if err != nil {
		return nil, callError(ctx, "List", err)
	}
	out := make([]ListEntry, 0, len(r.Msg.GetSessions()))
	for _, e := range r.Msg.GetSessions() {
		le := ListEntry{ID: e.GetId(), Live: e.GetLive(), Revision: e.GetRevision()}
		if e.GetErrorCode() != "" || e.GetError() != "" {
			code := sdk.Code(e.GetErrorCode())
			if code == "" {
				code = sdk.CodeIOError
			}
			le.Err = &sdk.Error{Code: code, Op: "list", SessionID: e.GetId(), Detail: e.GetError()}
		} else {
			le.Header = rawOne(e.GetHeader())
		}
		out = append(out, le)
	}
	return out, nil
}

// Release flushes the live session id, closes its backend handles and
// gives up its write ownership.
func (c *Client) Release(ctx context.Context, id string) error {
	_, err := c.rpc.Release(ctx, connect.NewRequest(&logbookv1.SessionsReleaseRequest{SessionId: id}))
	return callError(ctx, "Release", err)
}
