// Package server is `logbook serve`: the logbook.v1.Sessions API
// (sdk/proto/logbook/v1/sessions.proto) over the sessions of its tenants'
// hosts (runtime/internal/host), for harnesses in other languages and for
// scripts. The session service (runtime/service) starts it over its own
// hosts, one per tenant, so the server and the service share each
// tenant's table of live sessions.
//
// # Protocols
//
// One HTTP handler, built with Connect (connectrpc.com/connect), serves
// every operation three ways on one port:
//
//   - gRPC (HTTP/2 without TLS, "h2c"), for grpc-go, grpc-js, grpcio and
//     grpcurl, with server reflection (grpc.reflection.v1 and v1alpha);
//   - gRPC-Web, for browsers;
//   - Connect's JSON over HTTP: a unary call is a plain POST of the
//     request as JSON to /logbook.v1.Sessions/<Method> with
//     Content-Type: application/json.
//
// Beside them, under /v1/, the same port serves the resource API of
// package httpapi: sessions and logs as HTTP resources with native JSON
// and NDJSON bodies, problem+json errors and Server-Sent Events, described
// by docs/openapi.json. Both protocols translate onto the host of the
// request's tenant (runtime/internal/host), so they see the same live
// sessions, behind the same credentials and limits.
//
// # Credentials, roles and tenants
//
// Once a credential is configured (Options.Verifier; always off
// loopback), every request but /healthz and the viewer's files needs a
// bearer credential (401 UNAUTHENTICATED), whose principal
// (auth.Principal) must have the role its route needs (403
// PERMISSION_DENIED, decided on the headers before any session is looked
// up; the role table is httpapi.Routes for /v1 and rpcRoles for
// logbook.v1.Sessions, and a route missing from it needs operator). The
// request then runs on its principal's tenant, or the one an operator
// names (?tenant= on /v1, the Logbook-Tenant header on
// logbook.v1.Sessions): its handlers are built over that tenant's host
// alone (Options.Tenant), so another tenant's session is
// SESSION_NOT_FOUND exactly as a missing one, byte for byte. Audit
// records of its changes name the principal (httpapi.AuditBy).
//
// For example:
//
//	curl -H 'Content-Type: application/json' -d '{"sessionId":"s1"}' \
//	  http://127.0.0.1:7420/logbook.v1.Sessions/Inspect
//
// Connect rather than grpc-gateway: Connect serves gRPC and JSON from the
// same handler on net/http, so there is one server, one port, one place
// for authentication and size limits, and no proxy hop (grpc-gateway
// translates each JSON request into a second, loopback gRPC call to a
// separate grpc.Server, and needs google.api.http annotations and the
// googleapis protos in the build). Connect's JSON is protobuf's canonical
// JSON mapping of the same messages, so the JSON API cannot drift from the
// gRPC one, and it carries the streaming calls too (enveloped JSON
// messages).
//
// Event envelopes, event data, messages and headers are canonical JSON
// text in protobuf string fields: the string is exactly the canonical
// bytes, never re-encoded through protobuf's JSON maps
// (google.protobuf.Struct), so member order and number literals survive.
// The JSON encoding is protobuf's JSON mapping: lowerCamelCase names, such a
// document as a JSON string holding its text, 64-bit integers as strings,
// and fields at their zero value omitted. An append from a script:
//
//	curl -H 'Content-Type: application/json' \
//	  -d '{"sessionId":"s1","events":[{"type":"user/message","surfaceOp":{},
//	       "data":"{\"id\":\"u1\",\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"source\":{\"kind\":\"user\"}}"}]}' \
//	  http://127.0.0.1:7420/logbook.v1.Sessions/Append
//
// answers {"envelopes":["{\"seq\":0,\"time\":…,\"type\":\"user/message\",…}"]},
// whose envelopes decode with one more parse (jq '.envelopes[] | fromjson').
// A protobuf string is valid UTF-8, as canonical JSON always is: data that
// is not cannot travel in a request (a server refuses such a message as
// malformed, InvalidArgument without a logbook code).
//
// # Errors
//
// A failed call carries the error code as the reason of a
// google.rpc.ErrorInfo detail (domain "logbook"; metadata op, detail,
// session_id, seq, index, cause when set, and the details some codes add,
// such as SEQ_CONFLICT's "expected" and "actual" lengths) and in the
// Logbook-Code response header (a trailer on streams). Every error reply of
// Append, AppendGroup and AppendStream, whatever failed, also carries "appended" (how
// many of the call's events were appended before the failure) and
// "firstSeq" (the seq of the first of them, or the log length the append
// found; absent when the session could not be opened), so a client can
// tell a failed flush of appended events from an append that never
// happened.
//
// # Safe retries
//
// An append request may carry expected_seq, the log length its events must
// find: the check and the append happen under the session's append lock,
// so nothing lands between them, and a mismatch is SEQ_CONFLICT with
// nothing appended. A client that retries a failed append with the same
// expected_seq cannot duplicate it: either the first attempt's events are
// in the log (the retry's conflict shows a length that covers them) or they
// are not (the retry appends them). client.Session.AppendRetry does
// exactly that. AppendGroup appends its events all or nothing.
// The status code follows the logbook code (SESSION_NOT_FOUND → NotFound,
// SESSION_ALREADY_EXISTS → AlreadyExists, CORRUPT_LOG → DataLoss, …), as in
// the plugin protocol.
//
// # Ownership
//
// Create, Open, Fork, and an Append, AppendGroup, AppendStream or Compact
// on a session that is not live make it live in the server's host, which
// holds its write ownership (no other process can open it for write) until
// Release, shutdown, or Options.IdleRelease after the last request that
// used it (a request in flight keeps it; the next one resumes it); an
// append or compaction that fails releases a session it resumed again
// (host.Borrow), so a failed call leaves the session as it was. The
// store's max_live_sessions caps them: one more is TOO_MANY_LIVE_SESSIONS.
// Flush and Release of a session the server released for idleness answer
// as if it were still live (the flush's durable seqs at the release;
// success), until the session is live here again or deleted, or the
// server restarts (host.Host.ReleaseIdle); after the client's own Release
// they are SESSION_NOT_LIVE.
// The read calls (Messages, Transcript, Surface, Header, RequestHeader,
// Request, Why, Shadowed, Tokens, Events, Inspect, List, Lineage) read a
// session that is not live from storage, read-only, beside any writer.
//
// Every call has its /v1 route and every route its call, but for the
// deliberate differences that parity_test.go lists and docs/operations.md
// explains ("One API, two transports").
//
// # Health
//
// GET /healthz answers 200 while the process serves; GET /readyz answers
// 200 when the engine is ready (engine.Ready: every plugin process runs
// and every persistence backend answers a probe within a deadline), else
// 503 with an application/problem+json body naming what is not; each
// check's error text only for an operator's credential.
// grpc.health.v1.Health Check answers SERVING exactly when /readyz
// answers 200, and Watch sends each change (checking once a second) until
// shutdown ends it. /healthz never needs a credential; /readyz and
// grpc.health.v1 need one of any role once one is configured.
//
// # Metrics
//
// With Options.Metrics (runtime/internal/metrics), GET /metrics serves Prometheus
// metrics, behind a credential of any role once one is configured;
// every request is counted by route (the mux pattern, one per RPC method)
// and status, and every error reply by its logbook code: no session id
// and no tenant name appears.
//
// # Security and limits
//
// No web page can drive the server. Before the credential and before routing,
// on every route, a request whose Host the listener does not answer is
// refused with HOST_NOT_ALLOWED (on loopback: localhost, *.localhost, the
// loopback IPs, the listen address and Options.AllowedHosts; off
// loopback any Host unless AllowedHosts narrows it), so a page on a name
// rebound to 127.0.0.1 gets nowhere; and a request whose Origin is neither
// the server's own (host:port = Host) nor one of Options.AllowedOrigins is
// refused with ORIGIN_NOT_ALLOWED ("null" too). Both are 403 problem+json,
// or PermissionDenied in an RPC's own form. Only allowed origins get CORS
// headers. The /v1 API requires every POST's media type, body or not
// (package httpapi), so a cross-site "simple" request changes nothing.
//
// The server listens on 127.0.0.1:7420 by default. Credentials are
// decided on the headers: a refused request is answered at once, without
// waiting for its body; an address that is not loopback requires a
// configured credential. Each request message (each message of a
// stream) is limited to MaxRequestBytes.
//
// Slow clients are cut off: a request's headers must arrive within
// ReadHeaderTimeout, the request within ReadTimeout (a stream: each
// message within ReadTimeout of its first byte, the next one within
// IdleTimeout), and a connection waits IdleTimeout for its next request.
// Answers are not bounded: an Events stream follows for as long as its
// client stays.
//
// # Shutdown
//
// When Serve's context ends it stops accepting calls, ends live tails,
// gives calls in flight ShutdownTimeout, and then flushes and releases
// every session its host holds, so whatever it acknowledged is on disk.
package server
