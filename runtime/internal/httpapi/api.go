package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/docs"
	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Media types the API reads and writes.
const (
	jsonType     = "application/json"
	ndjsonType   = "application/x-ndjson"
	markdownType = "text/markdown; charset=utf-8"
	sseType      = "text/event-stream"
)

// DefaultHeartbeat is how often, by default, an idle event stream sends a
// comment so proxies keep it open.
const DefaultHeartbeat = 15 * time.Second

// Options configure an API. Every zero field takes the default it names.
type Options struct {
	// MaxRequestBytes bounds a JSON request body and each line of an NDJSON
	// body; a larger one is refused with REQUEST_TOO_LARGE (413) and
	// nothing of it is applied. Default sdk.MaxEventMessageBytes of
	// sdk.DefaultMaxEventBytes, the server's own default.
	MaxRequestBytes int
	// Heartbeat is how often an idle event stream (Server-Sent Events)
	// sends a comment line. Default DefaultHeartbeat (15 s).
	Heartbeat time.Duration
	// Tenant is the name of the tenant whose host the API serves, which
	// GET /v1/whoami reports. Default sdk.DefaultTenant.
	Tenant string
	// Tenants lists the tenants that hold sessions, sdk.DefaultTenant
	// first (service.Service.Tenants), which GET /v1/tenants answers; it
	// spans every tenant, so the route needs an operator. Default nil:
	// the API knows only sdk.DefaultTenant.
	Tenants func(ctx context.Context) ([]string, error)
}

// API is the /v1 resource API over a host's sessions, an http.Handler for
// the paths under /v1/. Authentication, shutdown and body deadlines are
// the mounting server's business.
type API struct {
	h    *host.Host
	opts Options
	mux  *http.ServeMux
}

// route is one path and method the API serves.
type route struct {
	method, pattern string
	handle          func(a *API, w http.ResponseWriter, r *http.Request)
	role            auth.Role // what a caller needs (Routes)
}

// Shorter names for the role column of routes.
const (
	read     = auth.RoleRead
	write    = auth.RoleWrite
	admin    = auth.RoleAdmin
	operator = auth.RoleOperator
)

// routes are every route of the API; docs/openapi.json documents each.
var routes = []route{
	{"POST", "/v1/sessions", (*API).createSession, write},
	{"GET", "/v1/sessions", (*API).listSessions, read},
	{"GET", "/v1/sessions/{id}", (*API).getSession, read},
	{"DELETE", "/v1/sessions/{id}", (*API).deleteSession, admin},
	{"POST", "/v1/sessions/{id}/events", (*API).appendEvents, write},
	{"POST", "/v1/sessions/{id}/events/group", (*API).appendGroup, write},
	{"GET", "/v1/sessions/{id}/events", (*API).readEvents, read},
	{"GET", "/v1/sessions/{id}/messages", (*API).messages, read},
	{"GET", "/v1/sessions/{id}/transcript", (*API).transcript, read},
	{"GET", "/v1/sessions/{id}/surface", (*API).surface, read},
	{"GET", "/v1/sessions/{id}/header", (*API).requestHeader, read},
	{"GET", "/v1/sessions/{id}/request", (*API).request, read},
	{"POST", "/v1/sessions/{id}/open", (*API).openSession, write},
	{"POST", "/v1/sessions/{id}/fork", (*API).fork, write},
	{"POST", "/v1/sessions/{id}/flush", (*API).flush, write},
	{"POST", "/v1/sessions/{id}/compact", (*API).compact, write},
	{"POST", "/v1/sessions/{id}/release", (*API).release, write},
	{"POST", "/v1/sessions/{id}/hold", (*API).hold, admin},
	{"POST", "/v1/sessions/{id}/release-hold", (*API).releaseHold, admin},
	{"GET", "/v1/sessions/{id}/inspect", (*API).inspect, read},
	{"GET", "/v1/sessions/{id}/why", (*API).why, read},
	{"GET", "/v1/sessions/{id}/shadowed", (*API).shadowed, read},
	{"GET", "/v1/sessions/{id}/tokens", (*API).tokens, read},
	{"GET", "/v1/sessions/{id}/lineage", (*API).lineage, read},
	{"GET", "/v1/whoami", (*API).whoami, read},
	{"GET", "/v1/tenants", (*API).listTenants, operator},
	{"GET", "/v1/openapi.json", (*API).openapi, read},
}

// Route is one route of the API: its method, its http.ServeMux path
// pattern, and the role a caller's credential needs for it (the roles of
// docs/operations.md, "Security model").
type Route struct {
	Method, Pattern string
	Role            auth.Role
}

// Routes returns every route of the API, in a new slice: the server's
// role check reads them, before the request reaches the API.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = Route{Method: rt.method, Pattern: rt.pattern, Role: rt.role}
	}
	return out
}

// New returns the API over h's sessions.
func New(h *host.Host, o Options) *API {
	if o.MaxRequestBytes <= 0 {
		o.MaxRequestBytes = sdk.MaxEventMessageBytes(sdk.DefaultMaxEventBytes)
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Tenant == "" {
		o.Tenant = sdk.DefaultTenant
	}
	a := &API{h: h, opts: o, mux: http.NewServeMux()}
	for _, rt := range routes {
		a.mux.HandleFunc(rt.method+" "+rt.pattern, func(w http.ResponseWriter, r *http.Request) {
			queryID(r)
			rt.handle(a, w, r)
		})
	}
	a.mux.HandleFunc("/", a.noRoute)
	return a
}

// ServeHTTP serves one request of the API.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// queryIDSegment is the {id} path segment that stands for the session id
// in the query parameter id: /v1/sessions/-/events?id=.. reads the events
// of session "..". A browser, and any client that parses URLs as the WHATWG
// URL standard says (Node's fetch), removes the path segments "." and "..",
// escaped (%2E, %2E%2E) or not, so it cannot name those two sessions in the
// path. Without the query parameter, the segment is the session "-".
const queryIDSegment = "-"

// queryID makes the query parameter id the request's session id when its
// {id} segment is queryIDSegment.
func queryID(r *http.Request) {
	if r.PathValue("id") != queryIDSegment {
		return
	}
	if q := r.URL.Query(); q.Has("id") {
		r.SetPathValue("id", q.Get("id"))
	}
}

// noRoute answers a request no route takes: METHOD_NOT_ALLOWED (405, with
// Allow) when the path is a route for other methods, else ROUTE_NOT_FOUND
// (404).
func (a *API) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{"GET", "POST", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := a.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		problemf(sdk.CodeMethodNotAllowed, "%s %s is not served; the route takes %s", r.Method, r.URL.Path, strings.Join(allow, ", ")).Write(w)
		return
	}
	problemf(sdk.CodeRouteNotFound, "no route %s; the routes are listed at /v1/openapi.json", r.URL.Path).Write(w)
}

// readJSON decodes an optional JSON body into dst. The request must be
// application/json whether it has a body or not (UNSUPPORTED_MEDIA_TYPE,
// checked before the body is read): a page of another site can send a
// POST without a preflight only with another media type, so the check is
// what keeps such a request from changing anything. An empty body leaves
// dst as it is; a body must be at most MaxRequestBytes
// (REQUEST_TOO_LARGE) and one JSON object (JSON_SYNTAX) of dst's members
// only (USAGE).
func (a *API) readJSON(r *http.Request, dst any) *Problem {
	if p := checkType(r, jsonType); p != nil {
		return p
	}
	body, p := a.readBody(r)
	if p != nil || len(bytes.TrimSpace(body)) == 0 {
		return p
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
			return problemf(sdk.CodeJSONSyntax, "the request body is not a JSON object: %v", err)
		}
		return problemf(sdk.CodeUsage, "the request body does not fit the route: %v", err)
	}
	if dec.More() {
		return problemf(sdk.CodeJSONSyntax, "the request body holds more than one JSON value")
	}
	return nil
}

// readBody reads a whole body of at most MaxRequestBytes.
func (a *API) readBody(r *http.Request) ([]byte, *Problem) {
	if r.ContentLength > int64(a.opts.MaxRequestBytes) {
		return nil, a.tooLarge()
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(a.opts.MaxRequestBytes)+1))
	if err != nil {
		return nil, NewProblem(&sdk.Error{Code: sdk.CodeIOError, Op: "http", Detail: "reading the request body", Err: err})
	}
	if len(b) > a.opts.MaxRequestBytes {
		return nil, a.tooLarge()
	}
	return b, nil
}

func (a *API) tooLarge() *Problem {
	return problemf(sdk.CodeRequestTooLarge, "the request body is larger than the limit of %d bytes", a.opts.MaxRequestBytes)
}

// checkType refuses (UNSUPPORTED_MEDIA_TYPE) a request whose Content-Type
// is not want (parameters such as charset allowed), with a body or
// without: every state-changing route but DELETE checks it before it does
// anything.
func checkType(r *http.Request, want string) *Problem {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != want {
		return problemf(sdk.CodeUnsupportedMediaType, "the request's Content-Type is %q; this route takes %s, with a body or without", ct, want)
	}
	return nil
}

// query reads the optional query parameters of a request.
type query struct {
	r *http.Request
	p *Problem // the first malformed parameter's
}

// seq reads an optional seq-like parameter (0 … 2^53−1): nil when absent;
// INVALID_SEQ otherwise.
func (q *query) seq(name string) *int64 {
	s := q.r.URL.Query().Get(name)
	if s == "" || q.p != nil {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > sdk.MaxSeq {
		q.p = problemf(sdk.CodeInvalidSeq, "query parameter %s=%q must be an integer in 0 … 2^53−1", name, s)
		return nil
	}
	return &n
}

// flag reads an optional boolean parameter ("true"/"false", "1"/"0");
// false when absent; USAGE otherwise.
func (q *query) flag(name string) bool {
	s := q.r.URL.Query().Get(name)
	if s == "" || q.p != nil {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.p = problemf(sdk.CodeUsage, "query parameter %s=%q must be true or false", name, s)
	}
	return b
}

// operationID reads the optional parameter operationId: "" when absent;
// present, it must be a valid operation id (sdk.ValidateOperationID), even
// empty, else OPERATION_ID_INVALID.
func (q *query) operationID() string {
	v := q.r.URL.Query()
	if !v.Has("operationId") || q.p != nil {
		return ""
	}
	s := v.Get("operationId")
	if err := sdk.ValidateOperationID(s); err != nil {
		q.p = NewProblem(err)
		return ""
	}
	return s
}

// writeDoc writes a response of status holding the JSON document b.
func writeDoc(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", jsonType)
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// openapi is GET /v1/openapi.json: the API's OpenAPI 3.1 document
// (docs/openapi.json).
func (a *API) openapi(w http.ResponseWriter, _ *http.Request) {
	writeDoc(w, http.StatusOK, bytes.TrimSpace(docs.OpenAPI()))
}
