package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The agent-loop rules at /v1, over one real serve: each rule's event is
// answered 409 with its code and Meta and changes nothing, alone and as a
// member of POST …/events/group; the legal patterns are accepted; the
// operation cases append once under ?operationId= of POST …/events.
func TestV1ProtocolCases(t *testing.T) {
	protocolcases.Run(t, v1Door{startServe(t)}, protocolcases.Options{Groups: true, Lenient: true, Operations: true})
}

// v1Door drives the /v1 API of a serve.
type v1Door struct{ s *server }

func (d v1Door) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	body := `{"id":"` + id + `"}`
	if lenient {
		body = `{"id":"` + id + `","protocol":"lenient"}`
	}
	h := d.s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(body)).body
	if lenient && !bytes.Contains(h, []byte(`"protocol":"lenient"`)) {
		t.Fatalf("created with protocol lenient, the header is %s", h)
	}
	return v1Session{d.s, "/v1/sessions/" + id}
}

// v1Session is a session at /v1/sessions/{id}.
type v1Session struct {
	s    *server
	path string
}

func (s v1Session) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	return s.append(t, "/events", ins)
}

func (s v1Session) AppendGroup(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	return s.append(t, "/events/group", ins)
}

// AppendOnce posts ins to …/events?operationId=id: a replay is 200 with
// Logbook-Replay: true; a conflict's firstSeq, a member of the problem,
// joins its Meta.
func (s v1Session) AppendOnce(t testing.TB, id string, ins []protocolcases.Input) ([]sdk.Seq, bool, *protocolcases.Refusal) {
	r, seqs, ref := s.post(t, "/events?operationId="+url.QueryEscape(id), ins)
	if ref == nil && r.header.Get("Logbook-Replay") != "" && r.header.Get("Logbook-Replay") != "true" {
		t.Errorf("Logbook-Replay: %q, want true or absent", r.header.Get("Logbook-Replay"))
	}
	return seqs, r.header.Get("Logbook-Replay") == "true", ref
}

// append posts ins as NDJSON to the session's path sub; a rule's refusal
// must be a 409 problem whose Logbook-Code header names its code.
func (s v1Session) append(t testing.TB, sub string, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	t.Helper()
	_, seqs, ref := s.post(t, sub, ins)
	return seqs, ref
}

// post is append, with the response.
func (s v1Session) post(t testing.TB, sub string, ins []protocolcases.Input) (reply, []sdk.Seq, *protocolcases.Refusal) {
	t.Helper()
	var body bytes.Buffer
	for _, in := range ins {
		body.Write(in.Line())
		body.WriteByte('\n')
	}
	r := s.s.do(t, "POST", s.path+sub, "application/x-ndjson", body.Bytes())
	if r.status == http.StatusOK {
		return r, envelopeSeqs(t, r.body), nil
	}
	var p struct {
		Code     sdk.Code          `json:"code"`
		Status   int               `json:"status"`
		Detail   string            `json:"detail"`
		Index    *int              `json:"index"`
		FirstSeq *int64            `json:"firstSeq"`
		Meta     map[string]string `json:"meta"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil || r.header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("POST %s: status %d, not a problem (%v): %s", sub, r.status, err, r.body)
	}
	if slices.Contains(protocolcases.Codes, p.Code) && (r.status != http.StatusConflict || p.Status != r.status) {
		t.Errorf("POST %s: %s answered status %d (problem status %d), want 409", sub, p.Code, r.status, p.Status)
	}
	if got := r.header.Get("Logbook-Code"); got != string(p.Code) {
		t.Errorf("POST %s: Logbook-Code %q, problem code %s", sub, got, p.Code)
	}
	if want := httpapi.Status(p.Code); r.status != want {
		t.Errorf("POST %s: %s answered status %d, want %d", sub, p.Code, r.status, want)
	}
	if p.FirstSeq != nil {
		if p.Meta == nil {
			p.Meta = map[string]string{}
		}
		p.Meta["firstSeq"] = strconv.FormatInt(*p.FirstSeq, 10)
	}
	return r, nil, &protocolcases.Refusal{Code: p.Code, Meta: p.Meta, Index: p.Index, Text: p.Detail}
}

func (s v1Session) Log(t testing.TB) []string {
	var out []string
	for _, l := range lines(s.s.ok(t, 200, "GET", s.path+"/events", "", nil).body) {
		out = append(out, string(l))
	}
	return out
}

// envelopeSeqs returns the seqs of an NDJSON body of envelopes.
func envelopeSeqs(t testing.TB, body []byte) []sdk.Seq {
	t.Helper()
	var out []sdk.Seq
	for _, l := range lines(body) {
		var e struct{ Seq sdk.Seq }
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("an envelope that does not decode: %v: %s", err, l)
		}
		out = append(out, e.Seq)
	}
	return out
}
