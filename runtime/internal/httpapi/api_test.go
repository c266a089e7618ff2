package httpapi_test

import (
	"bytes"
	"encoding/json"
	"github.com/seed-e5e476df/logbook/sdk"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lossless is a document whose number literals and member order a decode
// and re-encode would change.
const lossless = `{"n":1.0e0,"big":123456789012345678901.0,"b":1,"a":2}`

// losslessLines are inputs that carry lossless as an event's data and
// inside a message's plugin block (in the turn it opens).
func losslessLines() []byte {
	return ndjson(
		`{"type":"app/note","ignorable":true,"data":`+lossless+`}`,
		turnLine(1),
		`{"type":"user/message","surfaceOp":"append","data":{"id":"u1","role":"user","content":[{"type":"plugin:x","doc":`+lossless+`}],"source":{"kind":"user"}}}`,
	)
}

// The sessions and events routes against a real `logbook serve`: create,
// describe, list with pages, append NDJSON and read it back, each document
// byte for byte through every route that returns it.
func TestV1SessionsAndEvents(t *testing.T) {
	s := startServe(t)
	created := s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"s1","cwd":"/tmp"}`))
	var h struct {
		ID  string `json:"id"`
		CWD string `json:"cwd"`
	}
	if err := json.Unmarshal(created.body, &h); err != nil || h.ID != "s1" || h.CWD != "/tmp" {
		t.Fatalf("create answered %s (%v)", created.body, err)
	}
	if loc := created.header.Get("Location"); loc != "/v1/sessions/s1" {
		t.Errorf("Location %q", loc)
	}
	s.failed(t, 409, "SESSION_ALREADY_EXISTS", "POST", "/v1/sessions", "application/json", []byte(`{"id":"s1"}`))

	app := s.ok(t, 200, "POST", "/v1/sessions/s1/events?flush=true", "application/x-ndjson", losslessLines())
	if ct := app.header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("append Content-Type %q", ct)
	}
	envs := lines(app.body)
	if len(envs) != 3 || !bytes.HasPrefix(envs[0], []byte(`{"seq":0,"time":`)) || !bytes.Contains(envs[0], []byte(`"data":`+lossless)) {
		t.Fatalf("append answered %s", app.body)
	}
	read := s.ok(t, 200, "GET", "/v1/sessions/s1/events", "", nil)
	if !bytes.Equal(read.body, app.body) {
		t.Fatalf("the events read back differ from the append's answer:\n%s\n%s", read.body, app.body)
	}
	if got := s.ok(t, 200, "GET", "/v1/sessions/s1/events?from=1&to=2", "", nil).body; !bytes.Equal(got, append(envs[1], '\n')) {
		t.Errorf("from=1&to=2 answered %s", got)
	}
	sse := s.ok(t, 200, "GET", "/v1/sessions/s1/events?follow=true&to=2", "", nil).body
	if want := "id: 0\ndata: " + string(envs[0]) + "\n\nid: 1\ndata: " + string(envs[1]) + "\n\n"; string(sse) != want {
		t.Errorf("the event stream differs from the append's answer:\n%s\n%s", sse, want)
	}
	for _, route := range []string{"messages", "transcript", "request", "messages?at=2", "request?at=2"} {
		if got := s.ok(t, 200, "GET", "/v1/sessions/s1/"+route, "", nil).body; !bytes.Contains(got, []byte(lossless)) {
			t.Errorf("%s lost the document's bytes: %s", route, got)
		}
	}
	// The stored log after a release, read by the server from storage.
	s.ok(t, 204, "POST", "/v1/sessions/s1/release", "application/json", nil)
	if got := s.ok(t, 200, "GET", "/v1/sessions/s1/events", "", nil).body; !bytes.Equal(got, app.body) {
		t.Fatalf("the stored events differ from the append's answer:\n%s\n%s", got, app.body)
	}
	var d struct {
		ID     string          `json:"id"`
		Length int64           `json:"length"`
		Live   bool            `json:"live"`
		Header json.RawMessage `json:"header"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/s1", "", nil).body, &d); err != nil || d.ID != "s1" || d.Length != 3 || d.Live || !bytes.Contains(d.Header, []byte(`"id":"s1"`)) {
		t.Fatalf("GET /v1/sessions/s1: %+v (%v)", d, err)
	}
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/nope", "", nil)
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/nope/events", "", nil)
}

// GET /v1/sessions pages through every session once, by id and newest
// first, with nextCursor null after the last page.
func TestV1ListPages(t *testing.T) {
	s := startServe(t)
	var ids []string
	for i := range 5 {
		id := "p" + strconv.Itoa(i)
		s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"`+id+`"}`))
		ids = append(ids, id)
	}
	for _, order := range []string{"id", "recent"} {
		var got []string
		var created []int64
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatalf("order=%s: more pages than sessions", order)
			}
			path := "/v1/sessions?limit=2&order=" + order
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			var page struct {
				Sessions []struct {
					ID     string `json:"id"`
					Live   bool   `json:"live"`
					Header struct {
						CreatedAt int64 `json:"createdAt"`
					} `json:"header"`
				} `json:"sessions"`
				NextCursor *string `json:"nextCursor"`
			}
			if err := json.Unmarshal(s.ok(t, 200, "GET", path, "", nil).body, &page); err != nil {
				t.Fatal(err)
			}
			if len(page.Sessions) > 2 {
				t.Fatalf("a page of %d entries with limit=2", len(page.Sessions))
			}
			for _, e := range page.Sessions {
				if !e.Live {
					t.Errorf("%s is not live", e.ID)
				}
				got = append(got, e.ID)
				created = append(created, e.Header.CreatedAt)
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		want := strings.Join(ids, ",")
		if order == "recent" {
			// Newest first; sessions of one millisecond by id.
			if len(got) != len(ids) {
				t.Fatalf("order=recent listed %v", got)
			}
			for i := 1; i < len(got); i++ {
				if created[i] > created[i-1] || created[i] == created[i-1] && got[i] < got[i-1] {
					t.Fatalf("order=recent listed %v created at %v: not newest first", got, created)
				}
			}
			continue
		}
		if strings.Join(got, ",") != want {
			t.Errorf("order=%s listed %v, want %s", order, got, want)
		}
	}
	s.failed(t, 400, "USAGE", "GET", "/v1/sessions?cursor=garbage", "", nil)
	s.failed(t, 400, "USAGE", "GET", "/v1/sessions?limit=0", "", nil)
	s.failed(t, 400, "USAGE", "GET", "/v1/sessions?order=oldest", "", nil)
}

// The first rejected line of an append ends the request with its
// problem; the lines before it stay appended, and the problem says how
// many (appended), from where (firstSeq), and which line failed.
func TestV1AppendStopsAtTheFirstRejectedLine(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", nil, "X-Unused", "")
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"a"}`))
	s.ok(t, 200, "POST", "/v1/sessions/a/events", "application/x-ndjson", ndjson(turnLine(1), userLine("u0", "zero")))
	body := ndjson(userLine("u1", "one"), "", userLine("u2", "two"), `{"type":"user/message","data":{"id":"u3"}}`, userLine("u4", "four"))
	p := s.failed(t, 422, "PAYLOAD_INVALID", "POST", "/v1/sessions/a/events?flush=true", "application/x-ndjson", body)
	if p.Appended == nil || *p.Appended != 2 || p.FirstSeq == nil || *p.FirstSeq != 2 || p.Line == nil || *p.Line != 4 || p.Index == nil || *p.Index != 2 {
		t.Fatalf("problem %+v: want appended 2, firstSeq 2, line 4, index 2", p)
	}
	if n := s.length(t, "a"); n != 4 {
		t.Fatalf("the log holds %d events, want 4 (the lines before the rejected one)", n)
	}
	// Expected seq: a stale one is SEQ_CONFLICT with both lengths and
	// nothing appended; the right one appends.
	p = s.failed(t, 409, "SEQ_CONFLICT", "POST", "/v1/sessions/a/events?expectedSeq=1", "application/x-ndjson", ndjson(userLine("u5", "five")))
	if p.Expected == nil || *p.Expected != 1 || p.Actual == nil || *p.Actual != 4 || p.Appended == nil || *p.Appended != 0 || p.FirstSeq == nil || *p.FirstSeq != 4 {
		t.Fatalf("SEQ_CONFLICT problem %+v", p)
	}
	if n := s.length(t, "a"); n != 4 {
		t.Fatalf("a refused expectedSeq appended: length %d", n)
	}
	got := lines(s.ok(t, 200, "POST", "/v1/sessions/a/events?expectedSeq=4", "application/x-ndjson", ndjson(userLine("u5", "five"))).body)
	if len(got) != 1 || !bytes.HasPrefix(got[0], []byte(`{"seq":4,`)) {
		t.Fatalf("expectedSeq=4 answered %s", got)
	}
}

// Bad input is refused with a problem of the right status and code, and
// nothing is appended.
func TestV1BadInputChangesNothing(t *testing.T) {
	// max_event_bytes 1 KiB: a request is limited to 2 × 1 KiB + 1 MiB.
	cfg := filepath.Join(t.TempDir(), "small.hcl")
	if err := os.WriteFile(cfg, []byte("max_event_bytes = 1024\npersistence \"jsonl\" {\n  compression = \"zstd\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--config", cfg)
	over := strings.Repeat("x", 1<<20+4096)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"b"}`))
	cases := []struct {
		name, code, method, path, ctype string
		status                          int
		body                            []byte
	}{
		{"malformed line", "JSON_SYNTAX", "POST", "/v1/sessions/b/events", "application/x-ndjson", 400, ndjson(`{"type":"user/message",`)},
		{"line not an object", "JSON_SYNTAX", "POST", "/v1/sessions/b/events", "application/x-ndjson", 400, ndjson(`[1]`)},
		{"unknown member", "ENVELOPE_INVALID", "POST", "/v1/sessions/b/events", "application/x-ndjson", 400, ndjson(`{"type":"app/x","ignorable":true,"data":1,"seq":0}`)},
		{"duplicate key in data", "JSON_DUPLICATE_KEY", "POST", "/v1/sessions/b/events", "application/x-ndjson", 422, ndjson(`{"type":"app/x","ignorable":true,"data":{"a":1,"a":2}}`)},
		{"wrong content type", "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/sessions/b/events", "application/json", 415, ndjson(userLine("u1", "x"))},
		{"no content type", "UNSUPPORTED_MEDIA_TYPE", "POST", "/v1/sessions/b/events", "", 415, ndjson(userLine("u1", "x"))},
		{"oversized line", "EVENT_TOO_LARGE", "POST", "/v1/sessions/b/events", "application/x-ndjson", 413, ndjson(`{"type":"app/x","ignorable":true,"data":"` + over + `"}`)},
		{"oversized body", "REQUEST_TOO_LARGE", "POST", "/v1/sessions", "application/json", 413, []byte(`{"id":"` + over + `"}`)},
		{"malformed JSON body", "JSON_SYNTAX", "POST", "/v1/sessions", "application/json", 400, []byte(`{"id":`)},
		{"unknown body member", "USAGE", "POST", "/v1/sessions", "application/json", 400, []byte(`{"name":"x"}`)},
		{"bad expectedSeq", "INVALID_SEQ", "POST", "/v1/sessions/b/events?expectedSeq=-1", "application/x-ndjson", 400, ndjson(userLine("u1", "x"))},
		{"bad from", "INVALID_SEQ", "GET", "/v1/sessions/b/events?from=x", "", 400, nil},
		{"unknown route", "ROUTE_NOT_FOUND", "GET", "/v1/nothing", "", 404, nil},
		{"unknown session route", "ROUTE_NOT_FOUND", "GET", "/v1/sessions/b/nothing", "", 404, nil},
		{"wrong method", "METHOD_NOT_ALLOWED", "PUT", "/v1/sessions/b", "", 405, nil},
		{"append to a missing session", "SESSION_NOT_FOUND", "POST", "/v1/sessions/none/events", "application/x-ndjson", 404, ndjson(userLine("u1", "x"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := s.failed(t, c.status, c.code, c.method, c.path, c.ctype, c.body)
			if strings.HasSuffix(c.path, "/events") && c.method == "POST" && (p.Appended == nil || *p.Appended != 0) {
				t.Errorf("an append's problem without appended 0: %+v", p)
			}
			if n := s.length(t, "b"); n != 0 {
				t.Fatalf("the log holds %d events after a refused request", n)
			}
		})
	}
}

// With a token, a /v1 request without it is refused with 401
// UNAUTHENTICATED, problem+json, before anything runs.
func TestV1RequiresTheToken(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--token-file", tok)
	s.failed(t, 401, "UNAUTHENTICATED", "POST", "/v1/sessions", "application/json", []byte(`{"id":"t"}`))
	s.failed(t, 401, "UNAUTHENTICATED", "GET", "/v1/sessions", "", nil)
	s.token = "0123456789abcdef0123"
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/t", "", nil) // nothing was created
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"t"}`))
}

// Against a real serve: every operation of docs/openapi.json reaches a
// handler (whatever it answers, it is not ROUTE_NOT_FOUND or
// METHOD_NOT_ALLOWED), a method the document does not list for a path is
// METHOD_NOT_ALLOWED, and GET /v1/openapi.json answers the committed file.
func TestV1ServesTheDocument(t *testing.T) {
	s := startServe(t)
	got := s.ok(t, 200, "GET", "/v1/openapi.json", "", nil)
	if want, _ := os.ReadFile("../../../docs/openapi.json"); !bytes.Equal(got.body, want) {
		t.Fatalf("GET /v1/openapi.json differs from docs/openapi.json (%d vs %d bytes)", len(got.body), len(want))
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(got.body, &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		url := strings.ReplaceAll(path, "{id}", "probe")
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			_, listed := ops[strings.ToLower(method)]
			r := s.do(t, method, url, "", nil, "Accept", "application/json")
			code := r.header.Get("Logbook-Code")
			switch {
			case listed && (code == "ROUTE_NOT_FOUND" || code == "METHOD_NOT_ALLOWED"):
				t.Errorf("%s %s is documented but answered %s", method, path, code)
			case !listed && code != "METHOD_NOT_ALLOWED":
				t.Errorf("%s %s is not documented but answered %d %s", method, path, r.status, code)
			}
		}
	}
}

// A stored log that ends in a torn tail is described with the torn bytes,
// the seq they start at and a warning, and its length is the valid
// prefix's; the next append's resume cuts the tail.
func TestV1DescribesATornTail(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "plain.hcl")
	if err := os.WriteFile(cfg, []byte("persistence \"jsonl\" {\n  compression = \"none\"\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServeIn(t, dir, "--config", cfg)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"t"}`))
	s.ok(t, 200, "POST", "/v1/sessions/t/events", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "a"), userLine("u2", "b"), turnEndLine(1)))
	s.ok(t, 204, "POST", "/v1/sessions/t/release", "application/json", nil)
	f, err := os.OpenFile(filepath.Join(dir, "t", "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	const partial = `{"seq":4,"time":1,"type":"turn/st`
	if _, err := f.WriteString(partial); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var d struct {
		Length int64 `json:"length"`
		Live   bool  `json:"live"`
		Torn   *struct {
			Bytes   int64 `json:"bytes"`
			FromSeq int64 `json:"fromSeq"`
		} `json:"torn"`
		Warning string `json:"warning"`
	}
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/t", "", nil).body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Length != 4 || d.Live || d.Torn == nil || d.Torn.Bytes != int64(len(partial)) || d.Torn.FromSeq != 4 || !strings.Contains(d.Warning, "torn") {
		t.Fatalf("GET /v1/sessions/t: %+v", d)
	}
	// The append resumes the session: the tail is cut (and recorded), the
	// description shows no torn tail any more.
	s.ok(t, 200, "POST", "/v1/sessions/t/events", "application/x-ndjson", ndjson(turnLine(2), userLine("u3", "c")))
	d.Torn = nil
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/t", "", nil).body, &d); err != nil || d.Torn != nil || !d.Live {
		t.Fatalf("after the resume: %+v (%v)", d, err)
	}
}

// The sessions "." and ".." are reached at their escaped path segments
// (%2E, %2E%2E), and, as a browser must (it removes those segments,
// escaped or not), at the segment "-" with the id in the query; "-"
// without the query is the session "-".
func TestV1DotSessionIDs(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"-"}`))
	for _, id := range []string{".", ".."} {
		escaped := "/v1/sessions/" + strings.ReplaceAll(id, ".", "%2E")
		s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"`+id+`"}`))
		s.ok(t, 200, "POST", escaped+"/events", "application/x-ndjson", ndjson(turnLine(1), userLine("u1", "first in "+id)))
		s.ok(t, 200, "POST", "/v1/sessions/-/events?id="+id, "application/x-ndjson", ndjson(userLine("u2", "second in "+id)))
		for _, at := range []struct{ info, events string }{
			{escaped, escaped + "/events"},
			{"/v1/sessions/-?id=" + id, "/v1/sessions/-/events?id=" + id},
		} {
			var d struct {
				ID     string `json:"id"`
				Length int64  `json:"length"`
			}
			if err := json.Unmarshal(s.ok(t, 200, "GET", at.info, "", nil).body, &d); err != nil || d.ID != id || d.Length != 3 {
				t.Errorf("GET %s: %+v (%v), want session %q of 3 events", at.info, d, err, id)
			}
			if got := s.ok(t, 200, "GET", at.events, "", nil).body; !bytes.Contains(got, []byte(`"first in `+id+`"`)) || !bytes.Contains(got, []byte(`"second in `+id+`"`)) {
				t.Errorf("GET %s: %s", at.events, got)
			}
		}
	}
	if got := s.length(t, "-"); got != 0 {
		t.Errorf("session - holds %d events, want 0", got)
	}
	s.failed(t, 404, "SESSION_NOT_FOUND", "GET", "/v1/sessions/-/surface?id=nope", "", nil)
}
