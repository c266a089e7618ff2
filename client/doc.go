// Package client is the Go client of `logbook serve` (its logbook.v1.Sessions
// API). It speaks the vocabulary of the in-process
// runtime (package logbook): events are built with package events, a
// session is a handle, *Session, with the runtime's method names, and reads
// hand back events.Event, events.TranscriptEntry, sdk.Header and canonical
// message JSON. Moving a harness from the runtime to the daemon changes the
// constructor and the error handling of reads, which cross the network
// here and so take a context and return an error:
//
//	c := client.New("127.0.0.1:7420", client.Options{})
//	s, err := c.Create(ctx, "s1", events.CreateOptions{})
//	evs, err := s.Append(ctx, events.TurnStart(1), events.UserText(events.TextMessage{ID: "u1", Text: "hi"}))
//	msgs, err := s.Messages(ctx, client.ViewOptions{})
//
// Client holds the calls that make or find a session (Create, Resume,
// Fork, Inspect, List) and hands out handles; Client.Session returns a
// handle without a call, for a session the server already holds, that is
// only read, or that is held or deleted (Session.Hold, ReleaseHold,
// Delete). On the wire, envelopes, event data, messages and headers
// are canonical JSON text, exactly as the server's store holds them: an
// event's Envelope is byte for byte the stored one.
//
// # From in-process to daemon
//
// A harness written against package logbook runs against the daemon with
// these changes and no others:
//
//	package logbook (in-process)                      package client (daemon)
//	rt, err := logbook.Open(ctx, logbook.Options{…})  c := client.New(addr, client.Options{…})
//	defer rt.Close(ctx)                               defer c.Close()
//	s.Len() sdk.Offset                                s.Len(ctx) (sdk.Offset, error)
//	s.Header() sdk.Header                             s.Header(ctx) (sdk.Header, error)
//	s.Events() []events.Event                         s.Events(ctx) ([]events.Event, error)
//	s.Transcript() []events.TranscriptEntry           s.Transcript(ctx) ([]events.TranscriptEntry, error)
//	s.Messages() ([]json.RawMessage, error)           s.Messages(ctx, ViewOptions{}) ([]json.RawMessage, error)
//	s.Surface() ([]sdk.Seq, error)                    s.Surface(ctx, ViewOptions{}) ([]sdk.Seq, error)
//
// Everything else is the same call with the same arguments and results:
// Create(ctx, id, events.CreateOptions), Resume(ctx, id) with a RepairReport whose
// Torn and Closers read alike, Fork(ctx, id, at, as), Inspect(ctx, id) with
// a read-only *Session and an InspectReport whose Torn and Live read alike,
// List(ctx) of events.ListEntry, and on a session ID, Append, AppendAt,
// AppendGroup, AppendGroupAt, Flush, Compact(ctx, CompactOptions) and
// Release. The types are the client's own, with the runtime's field names,
// so that a client never links the runtime. What behaves differently,
// because the session lives in another process:
//
//   - Close closes the client's connections; the server keeps the sessions
//     it holds (Release them), where rt.Close flushes and releases all.
//   - A failed append is an *AppendError (Appended, FirstSeq) wrapping the
//     *sdk.Error: errors.Is and errors.As see the same code and
//     details, and the count of what was appended is in its fields.
//   - After Release a handle stays usable: its next append resumes the
//     session in the server, where the runtime's released session refuses
//     appends with SESSION_CLOSED.
//   - Reads ask the server at each call and other clients may append in
//     between, so Len is the length at the call; AppendAt makes an append
//     conditional on it.
//   - The runtime's Inspect view is a snapshot with the pending closers
//     folded in; the client's read-only handle reads the session as the
//     server has it at each call (live, or the stored log as it stands,
//     without the closers), and InspectReport lists the closers
//     (PendingRepair) besides the log's length and open turn. As in the
//     runtime, its writes fail with SESSION_READ_ONLY (here without a
//     call) and its Release does nothing.
//   - RepairReport and InspectReport carry more than the runtime's:
//     AlreadyLive, NextSeq and Repaired; Events, OpenTurn and
//     PendingRepair.
//   - Only the client has Client.Session (a handle without a call),
//     ViewOptions.At (a derived view as it was right after an event: the
//     Messages, Surface, RequestHeader, Request, Shadowed and Tokens of
//     the log's prefix), Read (a range of the log, or a follow of it),
//     AppendStream, AppendRetry (see Safe retries), and Hold, ReleaseHold
//     and Delete (AuditOptions).
//   - logbook.ServePlugins is for a program that runs the plugins itself;
//     the daemon runs them.
//
// # Errors
//
// Every error carries a stable error code: the server's (an *sdk.Error
// rebuilt from the call's google.rpc.ErrorInfo, so errors.Is(err,
// sdk.CodeSessionNotFound) works), or, for a failure without one (the server
// is unreachable, the token is wrong), PLUGIN_UNAVAILABLE when the status
// is Unavailable, DeadlineExceeded, Aborted or Canceled and IO_ERROR
// otherwise, wrapping the *connect.Error (connect.CodeOf(err) returns its
// status code, e.g. connect.CodeUnauthenticated).
//
// Event data travels as text in protobuf string fields, which must be
// valid UTF-8 (as canonical JSON always is): data that is not is refused by
// the client itself with JSON_INVALID_UTF8, at the point of a call where
// the server would refuse it (see Session.Append and AppendStream.Send).
//
// # Safe retries
//
// Session.AppendAt and AppendGroupAt make an append conditional on the log
// length, every failed append is an *AppendError saying how many of its
// events were appended, and Session.AppendRetry combines both so that a
// retry never appends an event twice.
//
// An operation id does the same across processes and restarts
// (docs/operations.md, "Operation ids"): Session.AppendOnce appends its
// events once, as one atomic group stored with the id, and answers a
// repeat with the original events (Appended.Replayed);
// RetryOptions.OperationID makes AppendRetry carry one, and
// AppendStream.SendOnce sends one operation in a stream.
//
// A Client and its Sessions are safe for concurrent use.
package client
