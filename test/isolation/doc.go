// Package isolation holds the generated isolation test of tenants (issue
// 30): it walks every route of docs/openapi.json and every method of the
// logbook.v1.Sessions service (from its generated descriptor) against real
// `logbook serve` processes over JSONL, SQLite and PostgreSQL (two hosts on
// one schema), and proves for each that
//
//   - tenant A's credential on tenant B's session gets SESSION_NOT_FOUND
//     with the same status and the same body, once the ids are masked, as
//     an id that exists nowhere;
//   - a credential whose role is below the route's gets 403
//     PERMISSION_DENIED, whether the session exists or not;
//   - a revoked token and an expired JWT get 401 UNAUTHENTICATED.
//
// Every route and every method must have a case in the test's tables
// (routeCases and methodCases, cases_test.go: the role it requires and
// what of its request the schema cannot give): a route or method added
// later without one fails TestEveryRouteHasACase or
// TestEveryMethodHasACase before any server starts, and the walk itself
// refuses to build a request without one. TestProbesReachTheSession
// proves, on a serve without credentials, that every request reaches the
// session it names (an id that exists nowhere gets its case's code, a
// stored one is found), so the tenant check cannot pass on a request the
// server refused for its shape.
//
// Besides the walk, it checks that lists (/v1 page by page, gRPC whole)
// and `logbook search --tenant` return only the tenant's sessions, that
// an SSE follower (/v1) and an Events follower (gRPC) on the last host
// (the second PostgreSQL host, fed through the backend's Watch) of a
// session id both tenants hold see only their tenant's events, that a
// revoked token is refused on every host within revocationBound, that
// /healthz alone is public, that whoami tells each credential its scope,
// that an operator's GET /v1/tenants lists both tenants,
// that /metrics names no session and no tenant, and that B's session is
// unchanged after the walk.
package isolation
