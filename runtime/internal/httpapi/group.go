package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/seed-e5e476df/logbook/runtime/internal/appendinput"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// appendGroup is POST /v1/sessions/{id}/events/group?flush=&expectedSeq=&operationId=:
// the NDJSON body's append inputs (as appendEvents reads them) appended as
// one atomic group (docs/compaction.md), resuming the session when it is
// not live (and releasing it again when the request fails: host.Append).
// The whole body is at most MaxRequestBytes, as one Connect request is.
// The members are validated together and committed with consecutive seqs,
// or nothing is appended and the answer is the problem of the first
// rejected member, with its line and index, appended 0 and no firstSeq
// (as the Connect AppendGroup's error carries none). With expectedSeq the
// group's first member must get that seq, else SEQ_CONFLICT; flush flushes
// the appended group before the answer, 200 with the envelopes as NDJSON.
// With operationId the group is appended once (appendOperation).
func (a *API) appendGroup(w http.ResponseWriter, r *http.Request) {
	p, ok := appendParams(w, r)
	if ok {
		a.group(w, r, p)
	}
}

// group appends the body of r as one atomic group, with the parameters p
// (appendGroup). An operation id makes it appendOperation: a replay
// answers 200 with ReplayHeader and the original append's envelopes; a
// conflict's problem keeps the original's firstSeq.
func (a *API) group(w http.ResponseWriter, r *http.Request, p appendArgs) {
	body, prob := a.readBody(r)
	if prob != nil {
		prob.withAppended(host.AppendResult{}).Write(w)
		return
	}
	ins, lines, err := readGroup(body, a.opts.MaxRequestBytes)
	if err != nil {
		groupProblem(err, lines).Write(w)
		return
	}
	res, err := a.h.Append(r.Context(), r.PathValue("id"), host.AppendRequest{
		Inputs: ins, Expected: (*sdk.Offset)(p.expected), Group: true, Flush: p.flush, OperationID: p.operationID,
	})
	if err != nil {
		groupProblem(err, lines).withAppended(res).Write(w)
		return
	}
	if res.Replayed {
		w.Header().Set(ReplayHeader, "true")
	}
	writeEnvelopes(w, res.Events)
}

// ReplayHeader is the response header of an append under an operation id
// the session already held with the same events: "true", and the body is
// the original append's envelopes (docs/format.md, "Operation ids").
const ReplayHeader = "Logbook-Replay"

// appendArgs are the query parameters of an append.
type appendArgs struct {
	flush       bool
	expected    *int64
	operationID string // "" = none
}

// appendParams reads the query parameters flush, expectedSeq and
// operationId of an append (a malformed id is OPERATION_ID_INVALID, found
// before the body is read) and checks its media type (NDJSON); when any is
// wrong it answers the problem, appended 0, and returns ok false.
func appendParams(w http.ResponseWriter, r *http.Request) (appendArgs, bool) {
	q := query{r: r}
	args := appendArgs{flush: q.flag("flush"), expected: q.seq("expectedSeq"), operationID: q.operationID()}
	p := q.p
	if p == nil {
		p = checkType(r, ndjsonType)
	}
	if p != nil {
		p.withAppended(host.AppendResult{}).Write(w)
		return appendArgs{}, false
	}
	return args, true
}

// readGroup parses the input lines of a group's body, skipping blank
// lines, and returns them with the line of each. A line that is not an
// input is a *lineError (its index the count of inputs before it).
func readGroup(body []byte, maxLine int) ([]session.AppendInput, []int, error) {
	var (
		ins   []session.AppendInput
		lines []int
	)
	lr := appendinput.NewReader(bytes.NewReader(body), int64(maxLine))
	for {
		text, err := lr.Next()
		if err == io.EOF {
			return ins, lines, nil
		}
		if err == nil {
			if len(bytes.TrimSpace(text)) == 0 {
				continue
			}
			var in session.AppendInput
			if in, err = appendinput.Parse(text); err == nil {
				ins = append(ins, in)
				lines = append(lines, lr.Line())
				continue
			}
		}
		return nil, nil, &lineError{line: lr.Line(), index: len(ins), err: err}
	}
}

// groupProblem is the problem of a refused group, appended 0 and no
// firstSeq: with the line and index of the member at fault, from a
// *lineError or the session's error (its Index, a position in the group).
func groupProblem(err error, lines []int) *Problem {
	p := NewProblem(err).withAppended(host.AppendResult{})
	var le *lineError
	if errors.As(err, &le) {
		p.Line, p.Index = &le.line, &le.index
	} else if p.Index != nil && *p.Index >= 0 && *p.Index < len(lines) {
		p.Line = &lines[*p.Index]
	}
	return p
}
