// Package otlp turns a session's events into OpenTelemetry traces that
// follow the GenAI semantic conventions of semconv v1.41.0 (the newest
// GenAI attribute set go.opentelemetry.io/otel ships as a Go package):
// one root span per session, an invoke_agent span per turn under it, a
// chat span per step under its turn and an execute_tool span per tool call
// under its chat (docs/import.md, "Traces out: OpenTelemetry").
//
// The package is pure: it reads events and returns OTLP protobuf messages
// (go.opentelemetry.io/proto/otlp), with no store, no network and no
// goroutines. A Builder folds one event after another, so that the same
// code serves a whole export (Add everything, then Finish) and a live push
// (hand out a turn's spans when its turn/end arrives).
//
// # Ids
//
// Every id is derived from the session id, so building the same log twice
// gives the same ids: the trace id is the first 16 bytes of
// SHA-256("logbook/otlp trace\x00" + session id); a span id is the first 8
// bytes of SHA-256("logbook/otlp span\x00" + session id + "\x00" + kind +
// "\x00" + seq [+ "\x00" + call id]) with kind "session" (seq 0), "turn"
// (the seq of turn/start), "chat" (the seq of step/start) or "tool" (the
// seq of the event that first names the call, and the call id).
//
// # Open spans
//
// A turn, step or tool call still open when the log ends (a live session,
// or one that crashed and was never resumed) ends at the last event's
// time with its status unset and the attribute logbook.open = true.
package otlp
