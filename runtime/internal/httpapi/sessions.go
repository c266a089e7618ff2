package httpapi

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// List page sizes.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// createRequest is the body of POST /v1/sessions: the id and the header
// fields a new session may set (store.CreateOptions).
type createRequest struct {
	ID              string `json:"id"`
	CWD             string `json:"cwd"`
	Origin          string `json:"origin"`
	DelegationDepth int64  `json:"delegationDepth"`
	AgentPreset     string `json:"agentPreset"`
	ParentSession   string `json:"parentSession"`
	// Protocol is "strict" (the default) or "lenient" (docs/api.md).
	Protocol string `json:"protocol"`
	// Labels are the session's labels (docs/storage.md), set at create only.
	Labels map[string]string `json:"labels"`
}

// createSession is POST /v1/sessions: a new live session, held and
// flushed before the reply (201, the stored header).
func (a *API) createSession(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if p := a.readJSON(r, &req); p != nil {
		p.Write(w)
		return
	}
	sess, err := a.h.CreateStored(r.Context(), store.CreateOptions{
		ID: req.ID, CWD: req.CWD, Origin: req.Origin, DelegationDepth: req.DelegationDepth,
		AgentPreset: req.AgentPreset, ParentSession: req.ParentSession, Protocol: req.Protocol, Labels: req.Labels,
	})
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+url.PathEscape(sess.ID()))
	writeDoc(w, http.StatusCreated, headerjson.Encode(sess.Header()))
}

// listSessions is GET /v1/sessions?limit=&cursor=&order=: a page of the
// live and stored sessions, by id (order=id, the default), newest first
// (order=recent: by createdAt, then id) or most recently active first
// (order=activity: by lastActivity, unknown last, then id), and the cursor
// of the next page (null after the last).
func (a *API) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	order := cmp.Or(q.Get("order"), "id")
	if order != "id" && order != "recent" && order != "activity" {
		problemf(sdk.CodeUsage, "order=%q must be id, recent or activity", order).Write(w)
		return
	}
	limit := defaultPageSize
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageSize {
			problemf(sdk.CodeUsage, "limit=%q must be an integer in 1 … %d", s, maxPageSize).Write(w)
			return
		}
		limit = n
	}
	var after *pageKey
	if s := q.Get("cursor"); s != "" {
		k, ok := parseCursor(s, order)
		if !ok {
			problemf(sdk.CodeUsage, "cursor=%q is not a cursor of an order=%s listing; pass the nextCursor of the previous page", s, order).Write(w)
			return
		}
		after = &k
	}
	entries, err := a.h.List(r.Context())
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	keys := make([]pageKey, len(entries))
	for i, e := range entries {
		keys[i] = pageKey{order: order, id: e.ID, at: e.Header.CreatedAt}
		if order == "activity" {
			keys[i].at = e.LastActivity
		}
	}
	idx := make([]int, len(entries))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(x, y int) int { return keys[x].compare(keys[y]) })
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(idx, *after, func(i int, k pageKey) int {
			if c := keys[i].compare(k); c != 0 {
				return c
			}
			return -1 // an entry equal to the cursor comes before it: skip it
		})
	}
	end := min(len(idx), start+limit)
	b := []byte(`{"sessions":[`)
	for n, i := range idx[start:end] {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, entries[i])
	}
	b = append(b, `],"nextCursor":`...)
	if end < len(idx) {
		b = jsonv.AppendString(b, keys[idx[end-1]].cursor())
	} else {
		b = append(b, "null"...)
	}
	writeDoc(w, http.StatusOK, append(b, '}'))
}

// appendEntry appends one session of a listing: id, live, and the stored
// header and revision, lastActivity and eventCount when the backend knows
// them, and parent {id, seq} for a session with a parent (seq, its fork
// point, when it inherited events) — or the code and message of the error
// that keeps it from being read.
func appendEntry(b []byte, e store.ListEntry) []byte {
	b = append(b, `{"id":`...)
	b = jsonv.AppendString(b, e.ID)
	b = append(b, `,"live":`...)
	b = strconv.AppendBool(b, e.Live)
	if e.Err != nil {
		code := cmp.Or(sdk.CodeOf(e.Err), sdk.CodeIOError)
		b = append(b, `,"error":{"code":`...)
		b = jsonv.AppendString(b, string(code))
		b = append(b, `,"detail":`...)
		b = jsonv.AppendString(b, e.Err.Error())
		return append(b, "}}"...)
	}
	b = append(b, `,"header":`...)
	b = append(b, headerjson.Encode(e.Header)...)
	if e.Revision != "" {
		b = append(b, `,"revision":`...)
		b = jsonv.AppendString(b, e.Revision)
	}
	if e.LastActivity > 0 {
		b = append(b, `,"lastActivity":`...)
		b = strconv.AppendInt(b, e.LastActivity, 10)
	}
	if e.EventCount >= 0 {
		b = append(b, `,"eventCount":`...)
		b = strconv.AppendInt(b, e.EventCount, 10)
	}
	if p := e.Header.ParentSession; p != "" {
		b = append(b, `,"parent":{"id":`...)
		b = jsonv.AppendString(b, p)
		b = append(appendForkSeq(b, e.Header), '}')
	}
	return append(b, '}')
}

// pageKey is the position of a session in a listing's order.
type pageKey struct {
	order string
	id    string
	at    int64 // createdAt for "recent", lastActivity for "activity"
}

// compare orders keys: by id, or for "recent" and "activity" newest at
// first, then by id.
func (k pageKey) compare(o pageKey) int {
	if k.order != "id" {
		if c := cmp.Compare(o.at, k.at); c != 0 {
			return c
		}
	}
	return strings.Compare(k.id, o.id)
}

// cursor encodes the key as an opaque token: base64url of
// "<order>\n<at>\n<id>".
func (k pageKey) cursor() string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.order + "\n" + strconv.FormatInt(k.at, 10) + "\n" + k.id))
}

// parseCursor decodes a cursor of a listing in order.
func parseCursor(s, order string) (pageKey, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return pageKey{}, false
	}
	parts := strings.SplitN(string(raw), "\n", 3)
	if len(parts) != 3 || parts[0] != order {
		return pageKey{}, false
	}
	at, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return pageKey{}, false
	}
	return pageKey{order: order, at: at, id: parts[2]}, true
}

// getSession is GET /v1/sessions/{id}: the stored header, the log's
// length, whether the session is live here, and the torn tail a write
// open would cut (absent when there is none).
func (a *API) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, err := a.h.Stat(r.Context(), id)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeDoc(w, http.StatusOK, appendSession(nil, id, st))
}

// appendSession appends the description of a session GET
// /v1/sessions/{id} answers.
func appendSession(b []byte, id string, st host.Status) []byte {
	b = append(b, `{"id":`...)
	b = jsonv.AppendString(b, id)
	b = append(b, `,"header":`...)
	b = append(b, headerjson.Encode(st.Header)...)
	b = append(b, `,"length":`...)
	b = strconv.AppendInt(b, int64(st.Length), 10)
	b = append(b, `,"live":`...)
	b = strconv.AppendBool(b, st.Live)
	if torn := st.Torn; torn.Bytes > 0 {
		b = append(b, `,"torn":{"bytes":`...)
		b = strconv.AppendInt(b, torn.Bytes, 10)
		b = append(b, `,"fromSeq":`...)
		b = strconv.AppendInt(b, int64(torn.FromSeq), 10)
		b = append(b, `},"warning":`...)
		b = jsonv.AppendString(b, "the stored log ends in "+strconv.FormatInt(torn.Bytes, 10)+" torn bytes from seq "+strconv.FormatInt(int64(torn.FromSeq), 10)+"; the next write open (an append) cuts them and keeps a copy")
	}
	return append(b, '}')
}
