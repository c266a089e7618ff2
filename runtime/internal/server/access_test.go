package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Every logbook.v1.Sessions procedure and every /v1 route has a role in
// the table, and the roles are those of the security model: read for
// views, write for changes, admin for delete and holds, operator for the
// one route that spans tenants (GET /v1/tenants).
func TestRoleTableCoversEveryRoute(t *testing.T) {
	methods := logbookv1.File_logbook_v1_sessions_proto.Services().ByName("Sessions").Methods()
	for i := range methods.Len() {
		name := string(methods.Get(i).Name())
		if _, ok := rpcRoles[name]; !ok {
			t.Errorf("logbook.v1.Sessions/%s has no role (it would need operator)", name)
		}
	}
	for name := range rpcRoles {
		if !knownProcedure(name) {
			t.Errorf("the role table names %s, which logbook.v1.Sessions does not have", name)
		}
	}
	want := map[string]auth.Role{
		"POST /v1/sessions": auth.RoleWrite, "DELETE /v1/sessions/{id}": auth.RoleAdmin,
		"POST /v1/sessions/{id}/open": auth.RoleWrite, "POST /v1/sessions/{id}/hold": auth.RoleAdmin,
		"GET /v1/whoami": auth.RoleRead, "GET /v1/openapi.json": auth.RoleRead,
		"GET /v1/sessions/{id}/events": auth.RoleRead, "GET /v1/tenants": auth.RoleOperator,
	}
	for _, rt := range httpapi.Routes() {
		if rt.Role == auth.RoleOperator && rt.Method+" "+rt.Pattern != "GET /v1/tenants" {
			t.Errorf("%s %s needs an operator: only a route that spans tenants does", rt.Method, rt.Pattern)
		}
		if rt.Role < auth.RoleRead || rt.Role > auth.RoleOperator {
			t.Errorf("%s %s has role %v", rt.Method, rt.Pattern, rt.Role)
		}
		if w, ok := want[rt.Method+" "+rt.Pattern]; ok && w != rt.Role {
			t.Errorf("%s %s has role %v, want %v", rt.Method, rt.Pattern, rt.Role, w)
		}
	}
	for proc, w := range map[string]auth.Role{"Events": auth.RoleRead, "Open": auth.RoleWrite, "AppendStream": auth.RoleWrite, "ReleaseHold": auth.RoleAdmin} {
		if rpcRoles[proc] != w {
			t.Errorf("%s has role %v, want %v", proc, rpcRoles[proc], w)
		}
	}
}

// A request's role: its route's; read where no route serves it; operator
// for a served route missing from the tables (default deny).
func TestRoleOfARequest(t *testing.T) {
	mux := http.NewServeMux()
	mountSessions(mux, http.NotFoundHandler())
	mux.Handle("/v1/", http.NotFoundHandler())
	mux.Handle("GET /debug/unlisted", http.NotFoundHandler())
	a := newAccess(mux)
	for _, c := range []struct {
		method, path string
		want         auth.Role
	}{
		{"GET", "/v1/sessions/x/events", auth.RoleRead},
		{"GET", "/v1/sessions/-/events?id=..", auth.RoleRead},
		{"POST", "/v1/sessions/x/events", auth.RoleWrite},
		{"DELETE", "/v1/sessions/x", auth.RoleAdmin},
		{"GET", "/v1/no-such-route", auth.RoleRead},
		{"PUT", "/v1/sessions/x", auth.RoleRead},
		{"POST", "/logbook.v1.Sessions/Delete", auth.RoleAdmin},
		{"POST", "/logbook.v1.Sessions/Append", auth.RoleWrite},
		{"POST", "/logbook.v1.Sessions/NoSuchMethod", auth.RoleRead},
		{"GET", "/debug/unlisted", auth.RoleOperator},
		{"GET", "/nothing-here", auth.RoleRead},
	} {
		if got := a.need(httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%s %s needs %v, want %v", c.method, c.path, got, c.want)
		}
	}
}
