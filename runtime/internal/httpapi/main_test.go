package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// logbookBin is the logbook binary the tests run `logbook serve` from.
var logbookBin string

func TestMain(m *testing.M) { testbin.Main(m, &logbookBin) }

// serveTimeout bounds a start and an exit of serve.
const serveTimeout = 60 * time.Second

// server is a running `logbook serve` and a client of its /v1 API.
type server struct {
	p     *testserve.Process
	base  string // http://host:port
	token string
}

// startServe runs `logbook serve` over a fresh data directory (the
// embedded default profile, JSONL+zstd) with args, and kills it when the
// test ends.
func startServe(t testing.TB, args ...string) *server {
	t.Helper()
	return startServeIn(t, t.TempDir(), args...)
}

// startServeIn is startServe over the data directory dir.
func startServeIn(t testing.TB, dir string, args ...string) *server {
	t.Helper()
	p, err := testserve.Start(logbookBin, serveTimeout, append([]string{"--data", dir}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(serveTimeout) })
	return &server{p: p, base: "http://" + p.Addr()}
}

// reply is a response read to its end.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request to the API (path from /v1/…) and reads the answer.
func (s *server) do(t testing.TB, method, path, ctype string, body []byte, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// ok sends a request and fails the test unless it is answered with want.
func (s *server) ok(t testing.TB, want int, method, path, ctype string, body []byte, hdr ...string) reply {
	t.Helper()
	r := s.do(t, method, path, ctype, body, hdr...)
	if r.status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

// problem is the decoded problem+json of an error answer.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Code     string `json:"code"`
	Line     *int   `json:"line"`
	Index    *int   `json:"index"`
	Appended *int64 `json:"appended"`
	FirstSeq *int64 `json:"firstSeq"`
	Expected *int64 `json:"expected"`
	Actual   *int64 `json:"actual"`
}

// failed sends a request, expects a problem+json answer with status and
// code, and returns it.
func (s *server) failed(t testing.TB, status int, code, method, path, ctype string, body []byte, hdr ...string) problem {
	t.Helper()
	r := s.do(t, method, path, ctype, body, hdr...)
	if r.status != status {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s %s: Content-Type %q, want application/problem+json: %s", method, path, ct, r.body)
	}
	var p problem
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("%s %s: the problem does not decode: %v: %s", method, path, err, r.body)
	}
	if p.Code != code || p.Status != status || p.Type != "urn:logbook:error:"+code || p.Title == "" || p.Detail == "" {
		t.Fatalf("%s %s: problem %+v, want code %s status %d", method, path, p, code, status)
	}
	if got := r.header.Get("Logbook-Code"); got != code {
		t.Errorf("%s %s: Logbook-Code %q, want %s", method, path, got, code)
	}
	return p
}

// lines splits an NDJSON body into its lines.
func lines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// userLine is the append input of a user/message with text.
func userLine(id, text string) string {
	return `{"type":"user/message","surfaceOp":"append","data":{"id":"` + id + `","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}}`
}

// turnLine is the append input of the turn/start of turn n: user messages
// need an open turn (docs/format.md, "The agent-loop protocol").
func turnLine(n int) string { return `{"type":"turn/start","data":{"turn":` + strconv.Itoa(n) + `}}` }

// turnEndLine is the append input of the turn/end of turn n, completed.
func turnEndLine(n int) string {
	return `{"type":"turn/end","data":{"turn":` + strconv.Itoa(n) + `,"reason":{"kind":"completed"}}}`
}

// ndjson joins input lines into a body.
func ndjson(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// length returns the log length GET /v1/sessions/{id} reports.
func (s *server) length(t testing.TB, id string) int64 { return s.describe(t, id).Length }

// live reports whether GET /v1/sessions/{id} says the session is live.
func (s *server) live(t testing.TB, id string) bool { return s.describe(t, id).Live }

// describe returns what GET /v1/sessions/{id} says of a session's log.
func (s *server) describe(t testing.TB, id string) (d struct {
	Length int64 `json:"length"`
	Live   bool  `json:"live"`
}) {
	t.Helper()
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/"+id, "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	return d
}
