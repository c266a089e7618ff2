package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/sdk"
)

// whoamiReply is the body of GET /v1/whoami.
type whoamiReply struct {
	Name   string `json:"name"`
	Tenant string `json:"tenant"`
	Role   string `json:"role"`
}

// whoami is GET /v1/whoami: the request's principal (auth.FromContext) and
// the tenant the request runs on. Without a principal (a server with no
// credential configured) the name is "" and the role operator, which is
// what such a server lets every request do.
func (a *API) whoami(w http.ResponseWriter, r *http.Request) {
	out := whoamiReply{Tenant: a.opts.Tenant, Role: auth.RoleOperator.String()}
	if p, ok := auth.FromContext(r.Context()); ok {
		out.Name, out.Role = p.Name, p.Role.String()
	}
	b, _ := json.Marshal(out) // three strings always marshal
	writeDoc(w, http.StatusOK, b)
}

// AuditBy returns the by of the audit records a request's changes make:
// the name of its principal (auth.FromContext), else sdk.ByAPI.
func AuditBy(ctx context.Context) string {
	if p, ok := auth.FromContext(ctx); ok && p.Name != "" {
		return p.Name
	}
	return sdk.ByAPI
}
