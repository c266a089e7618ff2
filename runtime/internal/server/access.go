package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// This file decides who may do what: the credential a request carries
// (Verifier), the role its route needs (the role table) and the tenant it
// runs on. The check order is the middleware's: authentication (401), the
// role (403, before any session is looked up), then the tenant, whose own
// host alone serves the request, so another tenant's session is as absent
// as one that never existed.

// Verifier authenticates the bearer credential of a request; auth.Verifier
// is the one `logbook serve` uses. Both methods are called concurrently.
type Verifier interface {
	// Configured reports whether any credential is configured: then every
	// request but HealthzPath and the viewer's files must carry one. Once
	// true it stays true.
	Configured() bool
	// Verify returns the principal of a bearer credential (the text after
	// "Bearer "), or an error when it is not a valid one.
	Verify(ctx context.Context, bearer string) (auth.Principal, error)
}

// TenantHeader is the request header (gRPC metadata logbook-tenant) by
// which an operator addresses another tenant on the logbook.v1.Sessions
// API; on the /v1 API it is the query parameter TenantParam.
const TenantHeader = "Logbook-Tenant"

// TenantParam is the /v1 query parameter by which an operator addresses
// another tenant.
const TenantParam = "tenant"

// sessionsPrefix starts the path of every logbook.v1.Sessions procedure.
const sessionsPrefix = "/" + logbookv1connect.SessionsName + "/"

// rpcRoles is the role each logbook.v1.Sessions procedure needs (the
// roles of docs/operations.md, "Security model"): a procedure missing
// here needs RoleOperator.
var rpcRoles = map[string]auth.Role{
	"Messages": auth.RoleRead, "Transcript": auth.RoleRead, "Surface": auth.RoleRead,
	"Header": auth.RoleRead, "Events": auth.RoleRead, "Inspect": auth.RoleRead,
	"List": auth.RoleRead, "RequestHeader": auth.RoleRead, "Request": auth.RoleRead,
	"Why": auth.RoleRead, "Shadowed": auth.RoleRead, "Tokens": auth.RoleRead,
	"Lineage": auth.RoleRead,

	"Create": auth.RoleWrite, "Open": auth.RoleWrite, "Append": auth.RoleWrite,
	"AppendStream": auth.RoleWrite, "AppendGroup": auth.RoleWrite, "Fork": auth.RoleWrite,
	"Flush": auth.RoleWrite, "Compact": auth.RoleWrite, "Release": auth.RoleWrite,

	"Delete": auth.RoleAdmin, "Hold": auth.RoleAdmin, "ReleaseHold": auth.RoleAdmin,
}

// serverRoles is the role each of the server's own routes needs (a
// pattern of the server's mux): health, metrics and reflection say
// nothing of any tenant's sessions, so any credential may read them.
var serverRoles = map[string]auth.Role{
	"GET " + ReadyzPath:                          auth.RoleRead,
	"GET " + MetricsPath:                         auth.RoleRead,
	"/grpc.reflection.v1.ServerReflection/":      auth.RoleRead,
	"/grpc.reflection.v1alpha.ServerReflection/": auth.RoleRead,
	"/grpc.health.v1.Health/":                    auth.RoleRead,
}

// access is the role table of one server: which role each request needs
// and whether it runs on a tenant.
type access struct {
	// mux is the server's, whose pattern names a request's route.
	mux *http.ServeMux
	// api matches the /v1 routes (httpapi.Routes), each to its role.
	api   *http.ServeMux
	roles map[string]auth.Role // by /v1 pattern
}

func newAccess(mux *http.ServeMux) *access {
	a := &access{mux: mux, api: http.NewServeMux(), roles: map[string]auth.Role{}}
	for _, rt := range httpapi.Routes() {
		pattern := rt.Method + " " + rt.Pattern
		a.api.Handle(pattern, http.NotFoundHandler()) // only matched, never served
		a.roles[pattern] = rt.Role
	}
	return a
}

// need returns the role r needs. A request no route serves needs
// RoleRead, whatever answers it (ROUTE_NOT_FOUND, METHOD_NOT_ALLOWED, an
// unknown procedure): it reaches no data. A route missing from the role
// tables needs RoleOperator (default deny).
func (a *access) need(r *http.Request) auth.Role {
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		_, pattern := a.api.Handler(r)
		return a.roleOf(pattern, a.roles)
	}
	if proc, ok := strings.CutPrefix(r.URL.Path, sessionsPrefix); ok {
		if !knownProcedure(proc) {
			return auth.RoleRead
		}
		return a.roleOf(proc, rpcRoles)
	}
	_, pattern := a.mux.Handler(r)
	return a.roleOf(pattern, serverRoles)
}

// roleOf returns the role of a matched pattern: RoleRead when nothing
// matched, RoleOperator when the table lacks it.
func (a *access) roleOf(pattern string, table map[string]auth.Role) auth.Role {
	if pattern == "" {
		return auth.RoleRead
	}
	if role, ok := table[pattern]; ok {
		return role
	}
	return auth.RoleOperator
}

// tenantRequest reports whether r runs on a tenant's sessions: the /v1
// API and logbook.v1.Sessions.
func tenantRequest(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/") || strings.HasPrefix(r.URL.Path, sessionsPrefix)
}

// tenantName returns the tenant a request runs on: the one it names
// (TenantParam on /v1, TenantHeader otherwise; TENANT_INVALID when not a
// tenant name) or else its principal's own (sdk.DefaultTenant for an
// operator). A request that names a tenant other than its principal's own
// is PERMISSION_DENIED unless the principal is an operator; without a
// principal (no credentials configured) it acts as one.
func tenantName(r *http.Request, p auth.Principal, authenticated bool) (string, error) {
	named, ok := "", false
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		q := r.URL.Query()
		named, ok = q.Get(TenantParam), q.Has(TenantParam)
	} else {
		vals := r.Header.Values(TenantHeader)
		if len(vals) > 1 {
			return "", sdk.Errorf(sdk.CodeTenantInvalid, "serve", "the request carries %d %s headers; send one", len(vals), TenantHeader)
		}
		if len(vals) == 1 {
			named, ok = strings.TrimSpace(vals[0]), true
		}
	}
	own := sdk.DefaultTenant
	if authenticated && p.Tenant != auth.AllTenants && p.Tenant != "" {
		own = p.Tenant
	}
	if !ok {
		return own, nil
	}
	if err := sdk.ValidateTenant(named); err != nil {
		return "", err
	}
	if named != own && authenticated && p.Role != auth.RoleOperator {
		return "", sdk.Errorf(sdk.CodePermissionDenied, "serve", "credential %q is scoped to tenant %q and may not address tenant %q", p.Name, own, named)
	}
	return named, nil
}

// bearer returns the credential of an Authorization header ("Bearer
// <credential>", the scheme in any case); "" when there is none.
func bearer(r *http.Request) string {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(cred)
}
