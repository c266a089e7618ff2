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
// (routes_test.go, methods_test.go): a route or method added later without
// one fails TestEveryRouteHasACase or TestEveryMethodHasACase before any
// server starts, so nothing reaches the API unproven.
//
// Besides the walk, it checks that lists and search return only the
// tenant's sessions across pages, that SSE follow (/v1) and Watch-backed
// Events follow (Connect) deliver only the tenant's events on the other
// host, and that /metrics names no session and no tenant.
package isolation
