package isolation

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// Every route of docs/openapi.json builds a request from its case and
// schema: the id in the path (escaped) when the route names a session, the
// required query parameters, and a JSON body that parses.
func TestEveryRouteBuilds(t *testing.T) {
	s, err := loadSpec(openapiPath)
	if err != nil {
		t.Fatal(err)
	}
	const id = "a b/c"
	creates := 0
	for _, r := range s.routes {
		c, err := s.routeCall(r, id)
		if err != nil {
			t.Errorf("%s %s: %v", r.Method, r.Path, err)
			continue
		}
		if want := strings.Contains(r.Path, "{id}"); c.NamesSession != want || want && !strings.Contains(c.Target, url.PathEscape(id)) {
			t.Errorf("%s: target %s, names a session %v", c.Name, c.Target, c.NamesSession)
		}
		if c.BodyType == "application/json" && !json.Valid(c.Body) {
			t.Errorf("%s: body %q is not JSON", c.Name, c.Body)
		}
		if c.Creates {
			creates++
			if !strings.Contains(string(c.Body), `"a b/c"`) {
				t.Errorf("%s makes a session, but its body %s does not name it", c.Name, c.Body)
			}
		}
		for _, p := range r.Params {
			if p.In == "query" && p.Required && !strings.Contains(c.Target, p.Name+"=") {
				t.Errorf("%s: target %s lacks the required %s", c.Name, c.Target, p.Name)
			}
		}
	}
	if creates != 1 {
		t.Errorf("%d routes make a session by the id they name, want 1 (createSession)", creates)
	}
}

// Every Sessions method builds a request from its case with the session
// id in its session field, and it survives the JSON and binary encodings.
func TestEveryMethodBuilds(t *testing.T) {
	methods := sessionsService().Methods()
	for i := range methods.Len() {
		m := methods.Get(i)
		c, err := methodCall(m, "s-1")
		if err != nil {
			t.Errorf("%s: %v", m.Name(), err)
			continue
		}
		if f := sessionField(m, methodCases[m.Name()]); f != nil && c.Request.Get(f).String() != "s-1" {
			t.Errorf("%s: %s = %q", m.Name(), f.Name(), c.Request.Get(f).String())
		}
		if _, err := c.JSON(); err != nil {
			t.Errorf("%s: JSON: %v", m.Name(), err)
		}
		if _, err := c.Binary(); err != nil {
			t.Errorf("%s: binary: %v", m.Name(), err)
		}
		if want := "/logbook.v1.Sessions/" + string(m.Name()); c.Procedure() != want {
			t.Errorf("procedure %s, want %s", c.Procedure(), want)
		}
	}
	if _, err := methodCall(sessionsService().Methods().ByName("List"), "s-1"); err != nil {
		t.Fatal(err)
	}
	if c, _ := methodCall(sessionsService().Methods().ByName("List"), "s-1"); c.NamesSession {
		t.Error("List names a session")
	}
}

// minimal gives the smallest value a schema accepts, and refuses what it
// cannot satisfy (a pattern, a string format) so the case must say it.
func TestMinimalFromSchema(t *testing.T) {
	s := &spec{doc: map[string]any{"components": map[string]any{"schemas": map[string]any{
		"N": map[string]any{"type": "integer", "minimum": 3.0},
	}}}}
	for _, c := range []struct {
		name, schema, want string
		ok                 bool
	}{
		{"required properties only", `{"type":"object","required":["a","n"],"properties":{"a":{"type":"string","minLength":2},"n":{"$ref":"#/components/schemas/N"},"x":{"type":"string"}}}`, `{"a":"xx","n":3}`, true},
		{"the first enum value", `{"type":"string","enum":["b","a"]}`, `"b"`, true},
		{"const", `{"const":true}`, `true`, true},
		{"minItems of minimal items", `{"type":"array","minItems":2,"items":{"type":"boolean"}}`, `[false,false]`, true},
		{"the first of a oneOf", `{"oneOf":[{"type":"integer"},{"type":"string"}]}`, `0`, true},
		{"a pattern is not guessed", `{"type":"string","pattern":"^[a-z]+$"}`, ``, false},
		{"a required property the object does not describe", `{"type":"object","required":["a"]}`, ``, false},
		{"an unresolvable ref", `{"$ref":"#/components/schemas/missing"}`, ``, false},
	} {
		var schema map[string]any
		if err := json.Unmarshal([]byte(c.schema), &schema); err != nil {
			t.Fatal(err)
		}
		v, ok := s.minimal(schema)
		if ok != c.ok {
			t.Errorf("%s: ok %v, want %v (%v)", c.name, ok, c.ok, v)
			continue
		}
		if got, _ := json.Marshal(v); ok && string(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// Two problem documents that differ only in the id they name are equal
// once masked; a different code or status is not.
func TestMaskedBodiesCompareShapes(t *testing.T) {
	ids := []string{"b-1", "nowhere-b-1"}
	theirs := v1Answer(404, []byte(`{"code":"SESSION_NOT_FOUND","detail":"session b-1 not found","sessionId":"b-1","status":404}`), ids)
	missing := v1Answer(404, []byte(`{"status":404,"sessionId":"nowhere-b-1","detail":"session nowhere-b-1 not found","code":"SESSION_NOT_FOUND"}`), ids)
	if theirs != missing {
		t.Errorf("masked answers differ:\n%v\n%v", theirs, missing)
	}
	if theirs.Code != "SESSION_NOT_FOUND" || !strings.Contains(theirs.Body, `"{id}"`) {
		t.Errorf("answer %v", theirs)
	}
	other := v1Answer(404, []byte(`{"code":"SESSION_NOT_FOUND","detail":"session b-1 not found","sessionId":"b-1","status":404,"tenant":"b"}`), ids)
	if other == missing {
		t.Error("a body with one member more compares equal")
	}
}

// A Connect error's ErrorInfo detail is decoded: its reason is the code
// and the ids inside it are masked; a stream's end-of-stream error reads
// the same with the code's HTTP status.
func TestConnectErrorsDecoded(t *testing.T) {
	info, err := proto.Marshal(&errdetails.ErrorInfo{Domain: "logbook", Reason: "SESSION_NOT_FOUND", Metadata: map[string]string{"session_id": "b-1"}})
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"code": "not_found", "message": "SESSION_NOT_FOUND: b-1", "details": []any{
		map[string]any{"type": "google.rpc.ErrorInfo", "value": base64.RawStdEncoding.EncodeToString(info)},
	}}
	unary := connectError(404, obj, []string{"b-1"})
	if unary.Code != "SESSION_NOT_FOUND" || strings.Contains(unary.Body, "b-1") {
		t.Errorf("unary %v", unary)
	}
	msg, _ := json.Marshal(map[string]any{"error": obj})
	end, err := endOfStream(append(envelope(0, []byte(`{}`)), envelope(2, msg)...))
	if err != nil {
		t.Fatal(err)
	}
	if stream := connectError(200, end, []string{"b-1"}); stream != unary {
		t.Errorf("stream %v, unary %v", stream, unary)
	}
	if _, err := endOfStream(envelope(0, []byte(`{}`))[:3]); err == nil {
		t.Error("a torn envelope read")
	}
}

// grpcStatus agrees with Connect's mapping of the codes the walk checks.
func TestGRPCStatus(t *testing.T) {
	for c, want := range map[codes.Code]int{codes.OK: 200, codes.NotFound: 404, codes.PermissionDenied: 403, codes.Unauthenticated: 401, codes.InvalidArgument: 400} {
		if got := grpcStatus(c); got != want {
			t.Errorf("%s: %d, want %d", c, got, want)
		}
	}
}
