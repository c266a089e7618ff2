package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/providerview"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// viewAt returns the session of a derived-view route: live, or read from
// storage; with ?at=, as it was right after event at (host.At).
func (a *API) viewAt(w http.ResponseWriter, r *http.Request, withAt bool) (*session.Session, bool) {
	var at *sdk.Seq
	if withAt {
		q := query{r: r}
		n := q.seq("at")
		if q.p != nil {
			q.p.Write(w)
			return nil, false
		}
		if n != nil {
			s := sdk.Seq(*n)
			at = &s
		}
	}
	sess, err := a.h.At(r.Context(), r.PathValue("id"), at)
	if err != nil {
		NewProblem(err).Write(w)
		return nil, false
	}
	return sess, true
}

// surfaceAt is viewAt with the session's surface.
func (a *API) surfaceAt(w http.ResponseWriter, r *http.Request, withAt bool) (*session.Session, session.SurfaceView, bool) {
	sess, ok := a.viewAt(w, r, withAt)
	if !ok {
		return nil, session.SurfaceView{}, false
	}
	surf, err := sess.Surface()
	if err != nil {
		NewProblem(err).Write(w)
		return nil, session.SurfaceView{}, false
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
	rendering, err := providerview.Messages(format, sess)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	markOmitted(w, rendering)
	b := rendering.Body
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
	b := []byte{'['}
	for i, e := range sess.Transcript().All() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, int64(e.Seq), 10)
		b = append(b, `,"type":`...)
		b = jsonv.AppendString(b, e.Type)
		b = append(b, `,"message":`...)
		b = append(b, e.Message.JSON()...)
		b = append(b, `,"onSurface":`...)
		b = strconv.AppendBool(b, surf.Contains(e.Seq))
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
	for i := range surf.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(surf.At(i)), 10)
	}
	writeDoc(w, http.StatusOK, append(b, ']'))
}

// requestHeader is GET /v1/sessions/{id}/header?at=: the folded request
// header, or null when the log has none.
func (a *API) requestHeader(w http.ResponseWriter, r *http.Request) {
	if sess, ok := a.viewAt(w, r, true); ok {
		writeDoc(w, http.StatusOK, sess.AppendRequestHeaderJSON(nil))
	}
}

// request is GET /v1/sessions/{id}/request?at=&format=: the request a
// model would be sent, {header, context, messages} (format logbook, the
// default), or the provider's body (openai, anthropic, openai-responses), as providerview.Request
// renders it: a provider format with no request header as of the asked
// seq is 409 REQUEST_HEADER_MISSING.
func (a *API) request(w http.ResponseWriter, r *http.Request) {
	format, ok := formatParam(w, r, provider.RequestFormats())
	if !ok {
		return
	}
	sess, ok := a.viewAt(w, r, true)
	if !ok {
		return
	}
	rendering, err := providerview.Request(format, sess)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	markOmitted(w, rendering)
	writeDoc(w, http.StatusOK, rendering.Body)
}

// markOmitted sets the Logbook-Omitted header of a provider rendering
// that left out parts no provider accepts where they stand
// (docs/providers.md, Omissions): the seqs of the messages concerned,
// comma-separated.
func markOmitted(w http.ResponseWriter, r providerview.Rendering) {
	if len(r.Omitted) == 0 {
		return
	}
	seqs := make([]string, len(r.Omitted))
	for i, o := range r.Omitted {
		seqs[i] = strconv.FormatInt(int64(o.Seq), 10)
	}
	w.Header().Set(omittedHeader, strings.Join(slices.Compact(seqs), ","))
}

// omittedHeader names the seqs of messages a provider rendering left
// parts of out.
const omittedHeader = "Logbook-Omitted"

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
	fr := store.ForkRequest{SourceID: r.PathValue("id"), ChildID: req.As}
	if req.At != nil {
		at, err := sdk.NewSeq("at", *req.At)
		if err != nil {
			NewProblem(err).Write(w)
			return
		}
		fr.Boundary = &at
	}
	child, err := a.h.Fork(r.Context(), fr)
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
	sess, res, err := a.h.Flush(r.Context(), r.PathValue("id"))
	if err != nil {
		p := NewProblem(err)
		p.Fenced = sess != nil && sess.Fenced() != nil
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
// releasing it again when the compaction fails: host.Compact); the answer
// is the events it appended, as NDJSON.
func (a *API) compact(w http.ResponseWriter, r *http.Request) {
	var req compactRequest
	if p := a.readJSON(r, &req); p != nil {
		p.Write(w)
		return
	}
	evs, err := a.h.Compact(r.Context(), r.PathValue("id"), req.StartSeq, req.EndSeq, req.SourceCommandID)
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
	if err := a.h.Release(r.Context(), r.PathValue("id")); err != nil {
		NewProblem(err).Write(w)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// inspect is GET /v1/sessions/{id}/inspect: the log's length, its open
// turn (null when none), the closers a resume would append, and the torn
// bytes a write open would cut; it never writes.
func (a *API) inspect(w http.ResponseWriter, r *http.Request) {
	in, err := a.h.Inspect(r.Context(), r.PathValue("id"))
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	b := []byte(`{"id":`)
	b = jsonv.AppendString(b, in.Session.ID())
	b = append(b, `,"header":`...)
	b = append(b, headerjson.Encode(in.Session.Header())...)
	b = append(b, `,"events":`...)
	b = strconv.AppendInt(b, int64(in.Stored.Len()), 10)
	b = append(b, `,"live":`...)
	b = strconv.AppendBool(b, in.Live)
	b = append(b, `,"openTurn":`...)
	if turn, ok := in.OpenTurn(); ok {
		b = strconv.AppendInt(b, turn, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"pendingRepair":[`...)
	for i, e := range in.Closers {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.AppendEnvelope(b)
	}
	b = append(b, `],"tornBytes":`...)
	b = strconv.AppendInt(b, in.Torn.Bytes, 10)
	if in.Torn.Bytes > 0 {
		b = append(b, `,"tornFromSeq":`...)
		b = strconv.AppendInt(b, int64(in.Torn.FromSeq), 10)
	}
	writeDoc(w, http.StatusOK, append(b, '}'))
}
