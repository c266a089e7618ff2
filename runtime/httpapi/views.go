package httpapi

import (
	"net/http"
	"strconv"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// atParam reads the ?at= of a derived-view route (withAt), or writes its
// problem.
func atParam(w http.ResponseWriter, r *http.Request, withAt bool) (*sdk.Seq, bool) {
	if !withAt {
		return nil, true
	}
	q := query{r: r}
	n := q.seq("at")
	if q.p != nil {
		q.p.Write(w)
		return nil, false
	}
	if n == nil {
		return nil, true
	}
	at := sdk.Seq(*n)
	return &at, true
}

// viewAt returns the session of a derived-view route: live, or read from
// storage; with ?at=, as it was right after event at (service.View).
func (a *API) viewAt(w http.ResponseWriter, r *http.Request, withAt bool) (*service.Session, bool) {
	at, ok := atParam(w, r, withAt)
	if !ok {
		return nil, false
	}
	sess, err := a.svc.View(r.Context(), r.PathValue("id"), at)
	if err != nil {
		NewProblem(err).Write(w)
		return nil, false
	}
	return sess, true
}

// sessionAt is viewAt for the derived views the service does not offer
// (request, provenance, shadowed nodes, token estimates), which read the
// engine's session itself.
func (a *API) sessionAt(w http.ResponseWriter, r *http.Request, withAt bool) (*session.Session, bool) {
	at, ok := atParam(w, r, withAt)
	if !ok {
		return nil, false
	}
	sess, err := a.h.At(r.Context(), r.PathValue("id"), at)
	if err != nil {
		NewProblem(err).Write(w)
		return nil, false
	}
	return sess, true
}

// surfaceAt is viewAt with the session's surface.
func (a *API) surfaceAt(w http.ResponseWriter, r *http.Request, withAt bool) (*service.Session, []sdk.Seq, bool) {
	sess, ok := a.viewAt(w, r, withAt)
	if !ok {
		return nil, nil, false
	}
	surf, err := sess.Surface()
	if err != nil {
		NewProblem(err).Write(w)
		return nil, nil, false
	}
	return sess, surf, true
}

// messages is GET /v1/sessions/{id}/messages?at=&format=: the derived
// messages in a format of provider.MessageFormats (default logbook: a
// JSON array of each message exactly as derived; markdown is text/markdown).
func (a *API) messages(w http.ResponseWriter, r *http.Request) {
	format, ok := formatParam(w, r, provider.MessageFormats())
	if !ok {
		return
	}
	sess, ok := a.viewAt(w, r, true)
	if !ok {
		return
	}
	ml, err := sess.Messages()
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	msgs := make([][]byte, len(ml))
	for i, m := range ml {
		msgs[i] = m
	}
	b, err := provider.Messages(format, msgs)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	if format == provider.FormatMarkdown {
		h := w.Header()
		h.Set("Content-Type", markdownType)
		h.Set("Content-Length", strconv.Itoa(len(b)+1))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(b, '\n'))
		return
	}
	writeDoc(w, http.StatusOK, b)
}

// formatParam returns the format query parameter (default logbook), or
// writes a USAGE problem naming the allowed values when it is not one.
func formatParam(w http.ResponseWriter, r *http.Request, allowed []string) (string, bool) {
	format := provider.FormatLogbook
	if r.URL.Query().Has("format") {
		format = r.URL.Query().Get("format")
	}
	if err := provider.CheckFormat("http", "format", format, allowed); err != nil {
		NewProblem(err).Write(w)
		return "", false
	}
	return format, true
}

// transcript is GET /v1/sessions/{id}/transcript: the append-origin
// surface events, each {seq, type, message, onSurface}, message as
// recorded.
func (a *API) transcript(w http.ResponseWriter, r *http.Request) {
	sess, surf, ok := a.surfaceAt(w, r, false)
	if !ok {
		return
	}
	on := make(map[sdk.Seq]bool, len(surf))
	for _, seq := range surf {
		on[seq] = true
	}
	b := []byte{'['}
	for i, e := range sess.Transcript() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, int64(e.Seq), 10)
		b = append(b, `,"type":`...)
		b = jsonv.AppendString(b, e.Type)
		b = append(b, `,"message":`...)
		b = append(b, e.Message...)
		b = append(b, `,"onSurface":`...)
		b = strconv.AppendBool(b, on[e.Seq])
		b = append(b, '}')
	}
	writeDoc(w, http.StatusOK, append(b, ']'))
}

// surface is GET /v1/sessions/{id}/surface?at=: the surface nodes' seqs in
// surface order.
func (a *API) surface(w http.ResponseWriter, r *http.Request) {
	_, surf, ok := a.surfaceAt(w, r, true)
	if !ok {
		return
	}
	b := []byte{'['}
	for i, seq := range surf {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(seq), 10)
	}
	writeDoc(w, http.StatusOK, append(b, ']'))
}

// requestHeader is GET /v1/sessions/{id}/header?at=: the folded request
// header, or null when the log has none.
func (a *API) requestHeader(w http.ResponseWriter, r *http.Request) {
	if sess, ok := a.viewAt(w, r, true); ok {
		writeDoc(w, http.StatusOK, sess.RequestHeaderJSON())
	}
}

// request is GET /v1/sessions/{id}/request?at=&format=: the request a
// model would be sent, {header, context, messages} (format logbook, the
// default), or the provider's body (openai, anthropic).
func (a *API) request(w http.ResponseWriter, r *http.Request) {
	format, ok := formatParam(w, r, provider.RequestFormats())
	if !ok {
		return
	}
	sess, ok := a.sessionAt(w, r, true)
	if !ok {
		return
	}
	b, err := provider.SessionRequest(format, sess)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeDoc(w, http.StatusOK, b)
}

// forkRequest is the body of POST /v1/sessions/{id}/fork.
type forkRequest struct {
	At *int64 `json:"at"` // the last event the child keeps; default the source's last
	As string `json:"as"` // the child's id; default a generated one
}

// fork is POST /v1/sessions/{id}/fork: a live child of a live or stored
// session, held (201, the child's stored header).
func (a *API) fork(w http.ResponseWriter, r *http.Request) {
	var req forkRequest
	if p := a.readJSON(r, &req); p != nil {
		p.Write(w)
		return
	}
	fr := service.ForkRequest{Source: r.PathValue("id"), As: req.As}
	if req.At != nil {
		at, err := sdk.NewSeq("at", *req.At)
		if err != nil {
			NewProblem(err).Write(w)
			return
		}
		fr.At = &at
	}
	child, err := a.svc.Fork(r.Context(), fr)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+child.ID())
	writeDoc(w, http.StatusCreated, headerjson.Encode(child.Header()))
}

// flush is POST /v1/sessions/{id}/flush: a flush of a live session on
// every backend, {participated, backends: [{name, durableSeq}]}; one the
// server released for idleness answers its final flush (host.Flush). The
// request is application/json (checkType); its body is not read.
func (a *API) flush(w http.ResponseWriter, r *http.Request) {
	if p := checkType(r, jsonType); p != nil {
		p.Write(w)
		return
	}
	res, fenced, err := a.svc.Flush(r.Context(), r.PathValue("id"))
	if err != nil {
		p := NewProblem(err)
		p.Fenced = fenced
		p.Write(w)
		return
	}
	b := []byte(`{"participated":`)
	b = strconv.AppendBool(b, res.Participated)
	b = append(b, `,"backends":[`...)
	for i, be := range res.Backends {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonv.AppendString(b, be.Name)
		b = append(b, `,"durableSeq":`...)
		b = strconv.AppendInt(b, int64(be.DurableSeq), 10)
		b = append(b, '}')
	}
	writeDoc(w, http.StatusOK, append(b, "]}"...))
}

// compactRequest is the body of POST /v1/sessions/{id}/compact.
type compactRequest struct {
	StartSeq        *sdk.Seq `json:"startSeq"`
	EndSeq          *sdk.Seq `json:"endSeq"`
	SourceCommandID string   `json:"sourceCommandId"`
}

// compact is POST /v1/sessions/{id}/compact: a manual compaction with the
// engine's compactor, resuming the session when it is not live (and
// releasing it again when the compaction fails: host.Borrow); the answer
// is the events it appended, as NDJSON.
func (a *API) compact(w http.ResponseWriter, r *http.Request) {
	var req compactRequest
	if p := a.readJSON(r, &req); p != nil {
		p.Write(w)
		return
	}
	evs, err := a.svc.Compact(r.Context(), r.PathValue("id"), service.CompactOptions{Start: req.StartSeq, End: req.EndSeq, SourceCommandID: req.SourceCommandID})
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeEnvelopes(w, evs)
}

// release is POST /v1/sessions/{id}/release: a flush and release of a
// live session (204), or of one the server released for idleness
// (host.Release). The request is application/json (checkType); its
// body is not read.
func (a *API) release(w http.ResponseWriter, r *http.Request) {
	if p := checkType(r, jsonType); p != nil {
		p.Write(w)
		return
	}
	if err := a.svc.Release(r.Context(), r.PathValue("id")); err != nil {
		NewProblem(err).Write(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inspect is GET /v1/sessions/{id}/inspect: the log's length, its open
// turn (null when none), the closers a resume would append, and the torn
// bytes a write open would cut; it never writes.
func (a *API) inspect(w http.ResponseWriter, r *http.Request) {
	in, err := a.svc.Inspect(r.Context(), r.PathValue("id"))
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	b := []byte(`{"id":`)
	b = jsonv.AppendString(b, in.ID)
	b = append(b, `,"header":`...)
	b = append(b, headerjson.Encode(in.Header)...)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, int64(in.Events), 10)
	b = append(b, `,"live":`...)
	b = strconv.AppendBool(b, in.Live)
	b = append(b, `,"openTurn":`...)
	if in.OpenTurn != nil {
		b = strconv.AppendInt(b, *in.OpenTurn, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"pendingRepair":[`...)
	for i, e := range in.PendingRepair {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.Envelope...)
	}
	b = append(b, `],"tornBytes":`...)
	b = strconv.AppendInt(b, in.Torn.Bytes, 10)
	if in.Torn.Bytes > 0 {
		b = append(b, `,"tornFromSeq":`...)
		b = strconv.AppendInt(b, int64(in.Torn.FromSeq), 10)
	}
	writeDoc(w, http.StatusOK, append(b, '}'))
}
