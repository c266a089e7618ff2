// Package client is the Go client of `logbook serve` (the logbook.v1.Sessions
// API, see runtime/server). It speaks the vocabulary of the in-process
// runtime (package logbook): events are built with package events, a
// session is a handle, *Session, with the runtime's method names, and reads
// hand back events.Event, events.TranscriptEntry, sdk.Header and canonical
// message JSON. Moving a harness from the runtime to the daemon changes the
// constructor and the error handling of reads, which cross the network
// here and so take a context and return an error:
//
//	c := client.New("127.0.0.1:7420", client.Options{})
//	s, err := c.Create(ctx, "s1")
//	evs, err := s.Append(ctx, events.TurnStart(1), events.UserText("u1", "hi"))
//	msgs, err := s.Messages(ctx)
//
// Client holds the calls that are not about one session (Create, Resume,
// Fork, Inspect, List) and hands out handles; Client.Session returns a
// handle without a call, for a session the server already holds or that
// is only read. Two calls differ from the runtime's: Inspect returns an
// Inspection (the log's length, its open turn, the closers a resume would
// append) instead of a read-only session, and a handle has no Len, since
// other clients may append between two calls (Resume's RepairReport.NextSeq
// and the events a call returns tell the length). On the wire, envelopes,
// event data, messages and headers
// are canonical JSON text, exactly as the server's store holds them: an
// event's Envelope is byte for byte the stored one.
//
// # Errors
//
// Every error carries a stable error code: the server's (an *sdk.Error
// rebuilt from the call's google.rpc.ErrorInfo, so errors.Is(err,
// sdk.ErrSessionNotFound) works), or, for a failure without one (the server
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
// A Client and its Sessions are safe for concurrent use.
package client
