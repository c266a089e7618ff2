package httpapi

import (
	"net/http"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk/headerjson"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// openSession is POST /v1/sessions/{id}/open: a resume of a stored session
// for write (host.Acquire: the stored log is read, an interrupted turn is
// closed and a torn tail cut, durably, before the session goes live), or
// the session as it is when it is live already. The answer is {id, header,
// nextSeq, alreadyLive, repaired: [envelope…], torn?: {bytes, fromSeq,
// artifact}}: repaired holds what the resume appended before its lifecycle
// marker (host.Opened.Repaired). The request is application/json (checkType); its
// body is not read.
func (a *API) openSession(w http.ResponseWriter, r *http.Request) {
	if p := checkType(r, jsonType); p != nil {
		p.Write(w)
		return
	}
	o, err := a.h.Acquire(r.Context(), r.PathValue("id"))
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	b := []byte(`{"id":`)
	b = jsonv.AppendString(b, o.Session.ID())
	b = append(b, `,"header":`...)
	b = append(b, headerjson.Encode(o.Session.Header())...)
	b = append(b, `,"nextSeq":`...)
	b = strconv.AppendInt(b, int64(o.Session.Len()), 10)
	b = append(b, `,"alreadyLive":`...)
	b = strconv.AppendBool(b, o.AlreadyLive)
	b = append(b, `,"repaired":[`...)
	for i, e := range o.Repaired() {
		if i > 0 {
			b = append(b, ',')
		}
		b = e.AppendEnvelope(b)
	}
	b = append(b, ']')
	if t := o.Repair.Torn; t.Bytes > 0 {
		b = append(b, `,"torn":{"bytes":`...)
		b = strconv.AppendInt(b, t.Bytes, 10)
		b = append(b, `,"fromSeq":`...)
		b = strconv.AppendInt(b, int64(t.FromSeq), 10)
		b = append(b, `,"artifact":`...)
		b = jsonv.AppendString(b, t.Artifact)
		b = append(b, '}')
	}
	writeDoc(w, http.StatusOK, append(b, '}'))
}
