package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// lineage is GET /v1/sessions/{id}/lineage: the session's ancestors
// (nearest parent first, each with the seq it was forked at; a parent that
// is not stored is listed as missing and ends the walk), its direct
// children (by createdAt, then id), and the tree of every descendant of its
// oldest stored ancestor. It is computed from the listing's headers: a
// session whose header cannot be read is in no tree.
func (a *API) lineage(w http.ResponseWriter, r *http.Request) {
	b, err := Lineage(r.Context(), a.h, r.PathValue("id"))
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeDoc(w, http.StatusOK, b)
}

// Lineage returns the fork family of session id as the JSON GET
// /v1/sessions/{id}/lineage answers (see lineage); the Connect Lineage
// call answers it too.
func Lineage(ctx context.Context, h *host.Host, id string) ([]byte, error) {
	entries, err := h.List(ctx)
	if err != nil {
		return nil, err
	}
	l := newLineage(entries)
	if _, ok := l.headers[id]; !ok {
		for _, e := range entries {
			if e.ID == id && e.Err != nil {
				return nil, e.Err
			}
		}
		return nil, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "lineage", SessionID: id, Detail: "no session with this id is stored"}
	}
	return l.appendJSON(nil, id), nil
}

// appendJSON appends the answer of lineage for id, a session l holds.
func (l lineageIndex) appendJSON(b []byte, id string) []byte {
	b = append(b, `{"id":`...)
	b = jsonv.AppendString(b, id)
	b = append(b, `,"ancestors":[`...)
	root := id
	seen := map[string]bool{id: true}
	for cur := l.headers[id]; cur.ParentSession != "" && !seen[cur.ParentSession]; {
		if len(seen) > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonv.AppendString(b, cur.ParentSession)
		b = appendForkSeq(b, cur)
		parent, ok := l.headers[cur.ParentSession]
		if !ok {
			b = append(b, `,"missing":true}`...)
			break // the walk cannot go past a parent that is not stored
		}
		b = append(b, '}')
		root = cur.ParentSession
		seen[root] = true
		cur = parent
	}
	b = append(b, `],"children":[`...)
	for i, c := range l.children[id] {
		if i > 0 {
			b = append(b, ',')
		}
		h := l.headers[c]
		b = append(b, `{"id":`...)
		b = jsonv.AppendString(b, c)
		b = appendForkSeq(b, h)
		b = append(b, `,"createdAt":`...)
		b = strconv.AppendInt(b, h.CreatedAt, 10)
		b = append(b, '}')
	}
	b = append(b, `],"tree":`...)
	b = l.appendTree(b, root, false, map[string]bool{})
	return append(b, '}')
}

// appendForkSeq appends `,"seq":n` when h records the seq it was forked at
// in its parent.
func appendForkSeq(b []byte, h sdk.Header) []byte {
	if s, ok := h.ForkPoint(); ok {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(s), 10)
	}
	return b
}

// lineageIndex is the parent and child links of a listing.
type lineageIndex struct {
	headers  map[string]sdk.Header
	children map[string][]string // parent id → child ids, by createdAt then id
}

func newLineage(entries []store.ListEntry) lineageIndex {
	l := lineageIndex{headers: map[string]sdk.Header{}, children: map[string][]string{}}
	for _, e := range entries {
		if e.Err != nil {
			continue
		}
		l.headers[e.ID] = e.Header
		if p := e.Header.ParentSession; p != "" {
			l.children[p] = append(l.children[p], e.ID)
		}
	}
	for _, ids := range l.children {
		slices.SortFunc(ids, func(x, y string) int {
			return cmp.Or(cmp.Compare(l.headers[x].CreatedAt, l.headers[y].CreatedAt), strings.Compare(x, y))
		})
	}
	return l
}

// appendTree appends the tree rooted at id: {id, seq (unless root),
// children}. A session already placed (a damaged listing whose parent
// links form a cycle) is not descended into again.
func (l lineageIndex) appendTree(b []byte, id string, withSeq bool, placed map[string]bool) []byte {
	placed[id] = true
	b = append(b, `{"id":`...)
	b = jsonv.AppendString(b, id)
	if withSeq {
		b = appendForkSeq(b, l.headers[id])
	}
	b = append(b, `,"children":[`...)
	n := 0
	for _, c := range l.children[id] {
		if placed[c] {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = l.appendTree(b, c, true, placed)
	}
	return append(b, "]}"...)
}
