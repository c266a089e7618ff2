package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/seed-e5e476df/logbook/sdk"
)

// tenantsReply is the body of GET /v1/tenants.
type tenantsReply struct {
	Tenants []string `json:"tenants"`
}

// listTenants is GET /v1/tenants: the tenants that hold sessions,
// sdk.DefaultTenant first (Options.Tenants), whichever tenant the request
// runs on. It spans tenants, so the route needs an operator (Routes).
func (a *API) listTenants(w http.ResponseWriter, r *http.Request) {
	names := []string{sdk.DefaultTenant}
	if a.opts.Tenants != nil {
		var err error
		if names, err = a.opts.Tenants(r.Context()); err != nil {
			NewProblem(err).Write(w)
			return
		}
	}
	b, _ := json.Marshal(tenantsReply{Tenants: names}) // strings always marshal
	writeDoc(w, http.StatusOK, b)
}
