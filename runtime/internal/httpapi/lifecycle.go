package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The session lifecycle routes (docs/operations.md, "Deleting sessions,
// holds and retention"): every change is audited by the store's backends
// with by the request's principal (AuditBy).

// lifecycleRequest is the optional body of the hold routes.
type lifecycleRequest struct {
	Reason string `json:"reason"`
}

// deleteSession is DELETE /v1/sessions/{id}?reason=: the store's Delete
// (204). A session live in this server is ALREADY_OWNED (409): release
// it first; a read-only server (logbook view) refuses it with
// SESSION_READ_ONLY.
func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) {
	req := sdk.AuditRequest{Reason: r.URL.Query().Get("reason"), By: AuditBy(r.Context())}
	if _, err := a.h.Delete(r.Context(), r.PathValue("id"), req); err != nil {
		NewProblem(err).Write(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// hold is POST /v1/sessions/{id}/hold {reason}: the store's Hold.
func (a *API) hold(w http.ResponseWriter, r *http.Request) { a.setHold(w, r, true) }

// releaseHold is POST /v1/sessions/{id}/release-hold {reason}: the
// store's ReleaseHold.
func (a *API) releaseHold(w http.ResponseWriter, r *http.Request) { a.setHold(w, r, false) }

// setHold answers {changed, record}; record is left out when nothing
// changed.
func (a *API) setHold(w http.ResponseWriter, r *http.Request, held bool) {
	var req lifecycleRequest
	if p := a.readJSON(r, &req); p != nil {
		p.Write(w)
		return
	}
	rec, changed, err := a.h.SetHold(r.Context(), r.PathValue("id"), held, sdk.AuditRequest{Reason: req.Reason, By: AuditBy(r.Context())})
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	out := struct {
		Changed bool             `json:"changed"`
		Record  *sdk.AuditRecord `json:"record,omitempty"`
	}{Changed: changed}
	if changed {
		out.Record = &rec
	}
	b, _ := json.Marshal(out) // an AuditRecord always marshals
	writeDoc(w, http.StatusOK, b)
}
