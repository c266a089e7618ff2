// Package httpapi is the /v1 resource API of `logbook serve`: sessions and
// their logs as plain HTTP resources with native JSON bodies, beside the
// Connect service on the same port (runtime/internal/server mounts it
// under /v1/, behind the same bearer token, shutdown and body deadlines).
// Both translate onto the same host (runtime/internal/host), the session
// service's, so a session one protocol made live is live for the other
// and for the service. docs/openapi.json describes every route; the server
// answers it at GET /v1/openapi.json.
//
// # Documents as stored
//
// Event envelopes, event data, messages and headers are written into the
// answers as the canonical bytes the log holds, never decoded and encoded
// again: member order and number literals survive (1.0e0 stays 1.0e0).
// The API's own integers (seq, length, appended, …) are JSON numbers.
//
// # Events
//
// POST /v1/sessions/{id}/events takes an NDJSON body
// (Content-Type: application/x-ndjson), one append input a line (package
// appendinput: type, data as native JSON, and optionally surfaceOp,
// sourceEventSeqs, ignorable), and answers the canonical envelope of each
// appended event, one a line. The first rejected line ends the request:
// the lines before it stay appended and the answer is its problem, with
// the line, the count appended and the first seq. GET of the same path
// answers the log as NDJSON, or, with Accept: text/event-stream or
// ?follow=true, as Server-Sent Events whose ids are the seqs, so an
// EventSource that reconnects resumes after the last event it saw.
//
// # Media types
//
// Every POST route requires its media type, application/json
// (application/x-ndjson for an append), whether the request has a body or
// not; anything else is UNSUPPORTED_MEDIA_TYPE (415) before the route does
// anything. A page of another site can send a POST without a CORS
// preflight only as text/plain, a form or multipart, so none of its writes
// reaches a handler. DELETE needs none: browsers preflight it.
//
// # Errors
//
// Every error is application/problem+json (RFC 9457) with the logbook code
// as "code" (and in the Logbook-Code header), its HTTP status from one
// table (Status), and the error's details. Bodies (a JSON body, each line
// of an NDJSON body) are limited to Options.MaxRequestBytes.
package httpapi
