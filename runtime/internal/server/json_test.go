package server_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// post sends one JSON request to the JSON API, the way a script would:
// a plain HTTP POST with Content-Type: application/json.
func post(t *testing.T, r *running, token, method, body string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+"/logbook.v1.Sessions/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, req)
}

// do sends req and returns the answer's status, header and body.
func do(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, out
}

// jsonString renders s as a JSON string literal, as any JSON library
// would embed a document's text in a request.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The JSON API: the same operations as plain HTTP POSTs of JSON, every
// JSON document (header, event data, envelope, message) as a JSON string
// holding its canonical text, byte for byte, and errors as JSON with the
// logbook code in the Logbook-Code header and in the ErrorInfo detail.
func TestJSONAPI(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})

	code, _, body := post(t, r, "", "Create", `{"sessionId":"j1"}`)
	var created struct{ Header string }
	if code != http.StatusOK || json.Unmarshal(body, &created) != nil || !strings.HasPrefix(string(body), `{"header":"{\"type\":\"session\",`) {
		t.Fatalf("create: %d %s", code, body)
	}
	var header struct{ Type, ID string }
	if err := json.Unmarshal([]byte(created.Header), &header); err != nil || header.Type != "session" || header.ID != "j1" {
		t.Fatalf("the header member %q is not the session header's JSON text (%v)", created.Header, err)
	}

	// Data written as a string holding its JSON text travels byte for
	// byte: member order, number literals, escapes and non-ASCII text stay.
	data := `{"id":"u1","role":"user","content":[{"type":"text","text":"from curl: \"1.50\" ≠ 1.5\n"}],"source":{"kind":"user"},"plugin:x":{"b":1.50,"a":1E3,"n":-1.0e-7,"pi":3.14159265358979323846264338327950288}}`
	var opened struct{ Envelopes []string } // the turn/start of the turn the message is in
	code, _, body = post(t, r, "", "Append", `{"sessionId":"j1","events":[{"type":"turn/start","data":"{\"turn\":1}"}]}`)
	if code != http.StatusOK || json.Unmarshal(body, &opened) != nil || len(opened.Envelopes) != 1 {
		t.Fatalf("append of the turn/start: %d %s", code, body)
	}
	code, _, body = post(t, r, "", "Append", `{"sessionId":"j1","events":[{"type":"user/message","data":`+jsonString(t, data)+`,"surfaceOp":{}}],"flush":true}`)
	var appended struct {
		Envelopes []string
		Flush     struct {
			Participated bool
			Backends     []struct {
				Name       string
				DurableSeq string // int64 is a string in protobuf JSON; 0 is omitted
			}
		}
	}
	if code != http.StatusOK || json.Unmarshal(body, &appended) != nil {
		t.Fatalf("append: %d %s", code, body)
	}
	if !strings.HasPrefix(string(body), `{"envelopes":["{\"seq\":1,\"time\":`) {
		t.Fatalf("the envelopes are not readable JSON text in the reply: %s", body)
	}
	if len(appended.Envelopes) != 1 || !strings.HasSuffix(appended.Envelopes[0], `"type":"user/message","data":`+data+`,"surfaceOp":"append"}`) {
		t.Fatalf("envelopes %q", appended.Envelopes)
	}
	// The member's string is the envelope object itself.
	var env struct {
		Seq       *int64
		Type      string
		Data      json.RawMessage
		SurfaceOp string
	}
	if err := json.Unmarshal([]byte(appended.Envelopes[0]), &env); err != nil || env.Seq == nil || *env.Seq != 1 || env.Type != "user/message" || env.SurfaceOp != "append" {
		t.Fatalf("envelope %q decodes to %+v (%v)", appended.Envelopes[0], env, err)
	}
	if string(env.Data) != data {
		t.Fatalf("data did not round-trip byte for byte:\n got %s\nwant %s", env.Data, data)
	}
	if !appended.Flush.Participated || appended.Flush.Backends[0].Name != "jsonl" || appended.Flush.Backends[0].DurableSeq != "1" {
		t.Fatalf("flush %+v", appended.Flush)
	}

	// A rejected event: HTTP 400, the code in the header and the detail.
	code, hdr, body := post(t, r, "", "Append", `{"sessionId":"j1","events":[{"type":"user/message","data":"{\"id\":1,}","surfaceOp":{}}]}`)
	var cerr struct {
		Code    string
		Message string
		Details []struct{ Type string }
	}
	if code != http.StatusBadRequest || hdr.Get("Logbook-Code") != "JSON_SYNTAX" || json.Unmarshal(body, &cerr) != nil {
		t.Fatalf("bad data: %d %v %s", code, hdr, body)
	}
	if cerr.Code != "invalid_argument" || !strings.Contains(cerr.Message, "JSON_SYNTAX") || len(cerr.Details) != 1 || cerr.Details[0].Type != "google.rpc.ErrorInfo" {
		t.Fatalf("error body %s", body)
	}
	code, hdr, _ = post(t, r, "", "Inspect", `{"sessionId":"missing"}`)
	if code != http.StatusNotFound || hdr.Get("Logbook-Code") != "SESSION_NOT_FOUND" {
		t.Fatalf("inspect of an unknown session: %d %v", code, hdr)
	}
	code, _, body = post(t, r, "", "Inspect", `{"sessionId":"j1"}`)
	if code != http.StatusOK || !strings.Contains(string(body), `"events":"2"`) || !strings.Contains(string(body), `"live":true`) ||
		!strings.Contains(string(body), `"header":`+jsonString(t, created.Header)) {
		t.Fatalf("inspect: %d %s", code, body)
	}
	if code, _, body = post(t, r, "", "List", `{}`); code != http.StatusOK || !strings.Contains(string(body), `"id":"j1"`) || !strings.Contains(string(body), `"header":`+jsonString(t, created.Header)) {
		t.Fatalf("list: %d %s", code, body)
	}
	var msgs struct{ Messages []string }
	if code, _, body = post(t, r, "", "Messages", `{"sessionId":"j1"}`); code != http.StatusOK || json.Unmarshal(body, &msgs) != nil || len(msgs.Messages) != 1 {
		t.Fatalf("messages: %d %s", code, body)
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(msgs.Messages[0]), &msg); err != nil || string(msg["plugin:x"]) != `{"b":1.50,"a":1E3,"n":-1.0e-7,"pi":3.14159265358979323846264338327950288}` {
		t.Fatalf("message %q (%v)", msgs.Messages[0], err)
	}

	// A server stream over HTTP/1.1 with Connect's enveloped JSON: each
	// message is a flag byte, a big-endian length and the JSON.
	req := envelope(0, `{"sessionId":"j1"}`)
	hreq, _ := http.NewRequest(http.MethodPost, r.url+"/logbook.v1.Sessions/Events", bytes.NewReader(req))
	hreq.Header.Set("Content-Type", "application/connect+json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream, _ := io.ReadAll(resp.Body)
	var chunks []string
	for len(stream) >= 5 {
		n := binary.BigEndian.Uint32(stream[1:5])
		chunks = append(chunks, string(stream[5:5+n]))
		stream = stream[5+n:]
	}
	// protojson varies its whitespace from build to build on purpose, so
	// the messages are compared as JSON values; the envelopes inside them
	// are logbook's own bytes and compare exactly.
	var streamed struct{ Envelopes []string }
	if len(chunks) != 2 || json.Unmarshal([]byte(chunks[0]), &streamed) != nil || strings.TrimSpace(chunks[1]) != "{}" ||
		!slices.Equal(streamed.Envelopes, []string{opened.Envelopes[0], appended.Envelopes[0]}) {
		t.Fatalf("events stream %q", chunks)
	}
}

// Data that is not valid UTF-8 cannot be a protobuf string: a binary
// request carrying it is refused as malformed (InvalidArgument, no logbook
// code) before any of its events is appended, as the proto's comment says.
func TestInvalidUTF8Data(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	if code, _, body := post(t, r, "", "Create", `{"sessionId":"u"}`); code != http.StatusOK {
		t.Fatalf("create: %d %s", code, body)
	}
	// SessionsAppendRequest{session_id: "u", events: [ok, bad]}, encoded by
	// hand: a protobuf library would refuse to encode it.
	input := func(data string) []byte {
		var in []byte
		in = protowire.AppendTag(in, 1, protowire.BytesType)
		in = protowire.AppendString(in, "user/message")
		in = protowire.AppendTag(in, 2, protowire.BytesType)
		in = protowire.AppendString(in, data)
		in = protowire.AppendTag(in, 3, protowire.BytesType)
		return protowire.AppendBytes(in, nil) // surface_op {}
	}
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendString(msg, "u")
	msg = protowire.AppendTag(msg, 2, protowire.BytesType)
	msg = protowire.AppendBytes(msg, input(string(userData("u1", "fine"))))
	msg = protowire.AppendTag(msg, 2, protowire.BytesType)
	msg = protowire.AppendBytes(msg, input(`{"id":"u2","text":"`+"\xff"+`"}`))
	req, _ := http.NewRequest(http.MethodPost, r.url+"/logbook.v1.Sessions/Append", bytes.NewReader(msg))
	req.Header.Set("Content-Type", "application/proto")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Logbook-Code") != "" || !strings.Contains(string(body), "invalid UTF-8") {
		t.Fatalf("invalid UTF-8 data: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if code, _, body := post(t, r, "", "Inspect", `{"sessionId":"u"}`); code != http.StatusOK || strings.Contains(string(body), `"events"`) {
		t.Fatalf("inspect after the refused request: %d %s; want no events", code, body)
	}
}

func envelope(flags byte, msg string) []byte {
	b := []byte{flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}
