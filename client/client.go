package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/events"
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

// AppendError is the error of a failed append (Session.Append, AppendAt,
// AppendGroup, AppendGroupAt, AppendRetry, an AppendStream), whatever
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

// Session returns a handle on session id without a call. Reads through it
// see the live session when the server holds it, else the stored log,
// read-only; its first append or compaction resumes the session in the
// server (repairing it, as Resume does) when the server does not hold it.
func (c *Client) Session(id string) *Session { return &Session{c: c, id: id} }

// Create makes a new empty session, live in the server and stored before
// Create returns, and returns its handle. id "" lets the server generate
// one (a lowercase UUIDv7; the handle's ID says which); o is the caller's
// part of the header (the zero value: a plain top-level, strict session;
// opt.Protocol "lenient" skips the agent-loop rules; opt.Labels are kept
// in the header). An id that is live or stored is SESSION_ALREADY_EXISTS;
// a protocol other than "", "strict" or "lenient", or labels the rules of
// docs/format.md refuse, is USAGE.
func (c *Client) Create(ctx context.Context, id string, opt events.CreateOptions) (*Session, error) {
	r, err := c.rpc.Create(ctx, connect.NewRequest(&logbookv1.SessionsCreateRequest{
		SessionId: id, Cwd: opt.CWD, Origin: opt.Origin, DelegationDepth: opt.DelegationDepth, AgentPreset: opt.AgentPreset, ParentSession: opt.ParentSession,
		Protocol: opt.Protocol, Labels: opt.Labels,
	}))
	if err != nil {
		return nil, callError(ctx, "Create", err)
	}
	return c.handle(r.Msg.GetHeader(), id)
}

// handle returns the handle of the session whose stored header text the
// server sent; want is the id asked for ("" when the server chose it).
func (c *Client) handle(text, want string) (*Session, error) {
	h, err := header(text, want)
	if err != nil {
		return nil, err
	}
	s := &Session{c: c, id: h.ID}
	s.header.Store(&h)
	return s, nil
}

// RepairReport says what Resume found and did (docs/architecture.md).
// Torn and Closers read as the runtime's service.RepairReport (what
// logbook.Runtime.Resume returns); the rest is what the wire gives besides.
type RepairReport struct {
	// Torn is the torn tail the write open cut and where its bytes were
	// kept; zero when none.
	Torn sdk.Torn
	// Closers counts the closer events the resume appended for an
	// interrupted turn.
	Closers int
	// AlreadyLive: the server held the session, so nothing was read or
	// repaired and the rest of the report is zero.
	AlreadyLive bool
	// NextSeq is the log length after the resume.
	NextSeq sdk.Offset
	// Repaired are the events the resume appended before the lifecycle
	// marker: session/recovered after a cut, then the Closers.
	Repaired []events.Event
}

// Resume makes a stored session live in the server for write, repairing an
// interrupted turn and a torn tail durably first (docs/architecture.md),
// and returns its handle and what the repair did; a session the server
// already holds is returned as it is (RepairReport.AlreadyLive).
func (c *Client) Resume(ctx context.Context, id string) (*Session, RepairReport, error) {
	r, err := c.rpc.Open(ctx, connect.NewRequest(&logbookv1.SessionsOpenRequest{SessionId: id}))
	if err != nil {
		return nil, RepairReport{}, callError(ctx, "Open", err)
	}
	m := r.Msg
	s, err := c.handle(m.GetHeader(), id)
	if err != nil {
		return nil, RepairReport{}, err
	}
	repaired, err := parseEvents(m.GetRepaired())
	if err != nil {
		return nil, RepairReport{}, err
	}
	rep := RepairReport{Torn: sdk.Torn{Bytes: m.GetTornBytes(), FromSeq: sdk.Seq(m.GetTornFromSeq()), Artifact: m.GetTornArtifact()},
		Closers: len(repaired), AlreadyLive: m.GetAlreadyLive(), NextSeq: sdk.Offset(m.GetNextSeq()), Repaired: repaired}
	if rep.Torn.Bytes > 0 && rep.Closers > 0 {
		rep.Closers-- // the session/recovered event that records the cut
	}
	return s, rep, nil
}

// Fork creates the session as ("" lets the server generate an id), live
// in the server, from the events of the live or stored session id up to
// and including seq *at (nil: all of them), and returns its handle
// (docs/architecture.md).
func (c *Client) Fork(ctx context.Context, id string, at *sdk.Seq, as string) (*Session, error) {
	req := &logbookv1.SessionsForkRequest{SourceId: id, ChildId: as}
	if at != nil {
		v := int64(*at)
		req.At = &v
	}
	r, err := c.rpc.Fork(ctx, connect.NewRequest(req))
	if err != nil {
		return nil, callError(ctx, "Fork", err)
	}
	return c.handle(r.Msg.GetHeader(), as)
}

// InspectReport says what a resume of an inspected session would find and
// do. Torn and Live read as the runtime's service.InspectReport (what
// logbook.Runtime.Inspect returns); the rest is what the wire gives besides.
type InspectReport struct {
	// Torn is the torn tail a write open would cut (Artifact ""); zero when
	// none or when the session is live.
	Torn sdk.Torn
	// Live: the server holds the session live.
	Live bool
	// Events is the log's length at the inspect, without PendingRepair.
	Events sdk.Offset
	// OpenTurn is the open turn's number; nil when no turn is open.
	OpenTurn *int64
	// PendingRepair are the closers a resume would append for the open
	// turn (none for a live session).
	PendingRepair []events.Event
}

// Inspect returns a read-only handle on session id and what a resume of
// it would find and do; nothing is written. The handle's reads ask the
// server, as any handle's do: the live session when the server holds it,
// else the stored log as it stands, without the closers a resume would
// append (the report's PendingRepair). Its appends, AppendStream, Flush
// and Compact fail with SESSION_READ_ONLY without a call; its Release does
// nothing.
func (c *Client) Inspect(ctx context.Context, id string) (*Session, InspectReport, error) {
	r, err := c.rpc.Inspect(ctx, connect.NewRequest(&logbookv1.SessionsInspectRequest{SessionId: id}))
	if err != nil {
		return nil, InspectReport{}, callError(ctx, "Inspect", err)
	}
	m := r.Msg
	s, err := c.handle(m.GetHeader(), id)
	if err != nil {
		return nil, InspectReport{}, err
	}
	pending, err := parseEvents(m.GetPendingRepair())
	if err != nil {
		return nil, InspectReport{}, err
	}
	s.readOnly = true
	return s, InspectReport{Torn: sdk.Torn{Bytes: m.GetTornBytes(), FromSeq: sdk.Seq(m.GetTornFromSeq())}, Live: m.GetLive(),
		Events: sdk.Offset(m.GetEvents()), OpenTurn: m.OpenTurn, PendingRepair: pending}, nil
}

// List returns the live and stored sessions, by id.
func (c *Client) List(ctx context.Context) ([]events.ListEntry, error) {
	r, err := c.rpc.List(ctx, connect.NewRequest(&logbookv1.SessionsListRequest{}))
	if err != nil {
		return nil, callError(ctx, "List", err)
	}
	out := make([]events.ListEntry, 0, len(r.Msg.GetSessions()))
	for _, e := range r.Msg.GetSessions() {
		le := events.ListEntry{ListEntry: sdk.ListEntry{ID: e.GetId(), Revision: e.GetRevision(), EventCount: -1}, Live: e.GetLive()}
		if e.GetErrorCode() != "" || e.GetError() != "" {
			code := sdk.Code(e.GetErrorCode())
			if code == "" {
				code = sdk.CodeIOError
			}
			le.Err = &sdk.Error{Code: code, Op: "list", SessionID: e.GetId(), Detail: e.GetError()}
		} else if le.Header, err = header(e.GetHeader(), e.GetId()); err != nil {
			le.Err = err
		}
		out = append(out, le)
	}
	return out, nil
}
