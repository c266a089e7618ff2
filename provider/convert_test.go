package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got, indented, with testdata/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("%s differs (go test -run %s -update rewrites it):\n%s", path, t.Name(), buf.Bytes())
	}
}

// The requests of every shape are exactly the reviewed golden bodies.
func TestRequestsGolden(t *testing.T) {
	o, err := OpenAIRequest([]byte(testHeader), shapeMessages())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai-request.json", o)
	a, err := AnthropicRequest([]byte(testHeader), shapeMessages())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "anthropic-request.json", a)
	r, err := OpenAIResponsesRequest([]byte(testHeader), shapeMessages())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai-responses-request.json", r)
}

// Documents pass through byte for byte: tool arguments and schemas keep
// their number literals (1.50, an integer beyond 2^53), in both formats.
func TestDocumentsAreSpliced(t *testing.T) {
	o, _ := OpenAIRequest([]byte(testHeader), shapeMessages())
	a, _ := AnthropicRequest([]byte(testHeader), shapeMessages())
	for name, body := range map[string][]byte{"openai": o, "anthropic": a} {
		if !bytes.Contains(body, []byte(`"limit":{"type":"number","maximum":1.50}`)) {
			t.Errorf("%s: the schema was re-encoded: %s", name, body)
		}
	}
	if !bytes.Contains(o, []byte(`"arguments":"{\"path\":\"a.go\",\"limit\":1.50,\"big\":12345678901234567890}"`)) {
		t.Errorf("openai: the arguments were re-encoded: %s", o)
	}
	if !bytes.Contains(a, []byte(`"input":{"path":"a.go","limit":1.50,"big":12345678901234567890}`)) {
		t.Errorf("anthropic: the input was re-encoded: %s", a)
	}
}

// What a provider cannot express is mapped as docs/providers.md says.
func TestInexpressibleMappings(t *testing.T) {
	o, err := OpenAIMessages(shapeMessages())
	if err != nil {
		t.Fatal(err)
	}
	var om []map[string]any
	if err := json.Unmarshal(o, &om); err != nil {
		t.Fatal(err)
	}
	// OpenAI: the error flag is a prefix; reasoning is dropped, and an
	// assistant message of reasoning alone is left out; plugin blocks and
	// tool changes are notes; images in tool results are notes.
	find := func(role, key, value string) map[string]any {
		for _, m := range om {
			if m["role"] == role && m[key] == value {
				return m
			}
		}
		t.Fatalf("no %s message with %s = %q in %s", role, key, value, o)
		return nil
	}
	if c := find("tool", "tool_call_id", "call_2")["content"]; c != "[tool error] exit status 1" {
		t.Errorf("tool error content %q", c)
	}
	if c := find("tool", "tool_call_id", "call_1")["content"]; c != "package a\n[image image/jpeg]" {
		t.Errorf("tool image content %q", c)
	}
	if c := find("developer", "role", "developer")["content"]; c != "[tool added: run]\n\nrun is available." {
		t.Errorf("developer content %q", c)
	}
	if strings.Contains(string(o), "Look first") || strings.Contains(string(o), "only unsigned") {
		t.Errorf("reasoning reached OpenAI: %s", o)
	}
	if len(om) != len(shapes)-1 {
		t.Errorf("%d OpenAI messages of %d; only the reasoning-only one is left out", len(om), len(shapes))
	}

	system, msgs, err := AnthropicMessages(shapeMessages())
	if err != nil {
		t.Fatal(err)
	}
	if string(system) != `[{"type":"text","text":"You are a careful coding agent."}]` {
		t.Errorf("system %s", system)
	}
	var am []struct {
		Role    string           `json:"role"`
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(msgs, &am); err != nil {
		t.Fatal(err)
	}
	// Roles alternate; both results of the first step share one user
	// message, with the error flagged; the signed reasoning is a thinking
	// block and the unsigned is dropped; unparseable arguments are {}.
	for i := 1; i < len(am); i++ {
		if am[i].Role == am[i-1].Role {
			t.Fatalf("messages %d and %d are both %s: %s", i-1, i, am[i].Role, msgs)
		}
	}
	results := am[2].Content
	if results[0]["type"] != "tool_result" || results[1]["type"] != "tool_result" || results[1]["is_error"] != true || results[0]["is_error"] != nil {
		t.Errorf("results %v", results)
	}
	thinking := am[1].Content[0]
	if thinking["type"] != "thinking" || thinking["signature"] != "sig-1" || strings.Contains(string(msgs), "unsigned") {
		t.Errorf("reasoning %v in %s", thinking, msgs)
	}
	if in := am[1].Content[3]["input"]; len(in.(map[string]any)) != 0 {
		t.Errorf("input of unparseable arguments %v", in)
	}
}

// A request without a header is REQUEST_HEADER_MISSING; one without a
// model, and messages that are not derived messages, are PAYLOAD_INVALID
// naming the rule, in every provider format.
func TestRejectedInput(t *testing.T) {
	good := shapeMessages()
	cases := []struct {
		name   string
		header string
		msgs   [][]byte
		code   sdk.Code
		want   string
	}{
		{"no header", "null", good, sdk.CodeRequestHeaderMissing, "no request header"},
		{"no model", `{"config":{"provider":"p"}}`, good, sdk.CodePayloadInvalid, "no config.model"},
		{"not JSON", testHeader, [][]byte{[]byte(`{"role":`)}, sdk.CodePayloadInvalid, "message 0 is not valid JSON"},
		{"no content", testHeader, [][]byte{[]byte(`{"role":"user"}`)}, sdk.CodePayloadInvalid, "needs a string role and a content array"},
		{"bad role", testHeader, [][]byte{[]byte(`{"role":"robot","content":[]}`)}, sdk.CodePayloadInvalid, `role "robot"`},
		{"block without type", testHeader, [][]byte{[]byte(`{"role":"user","content":[{}]}`)}, sdk.CodePayloadInvalid, "content block 0 of message 0"},
		{"tool without call id", testHeader, [][]byte{[]byte(`{"role":"tool","content":[]}`)}, sdk.CodePayloadInvalid, "no toolCallId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, format := range providerFormats {
				out, err := Request(format, RequestParts{Header: []byte(c.header), Messages: c.msgs})
				var e *sdk.Error
				if !errors.As(err, &e) || e.Code != c.code || !strings.Contains(err.Error(), c.want) || out != nil {
					t.Errorf("%s: %s, %v; want %s with %q", format, out, err, c.code, c.want)
				}
			}
		})
	}
}

// TestOpenAIToolsRejects: tools that are not an array of objects are
// PAYLOAD_INVALID naming what is wrong; no tools is an empty array.
func TestOpenAIToolsRejects(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"ls"}`: "not an array",
		`[1]`:           "tool 0 is not an object",
		`[`:             "not valid JSON",
	} {
		out, err := OpenAITools([]byte(in))
		var e *sdk.Error
		if !errors.As(err, &e) || e.Code != sdk.CodePayloadInvalid || !strings.Contains(err.Error(), want) || out != nil {
			t.Errorf("OpenAITools(%s): %s, %v; want PAYLOAD_INVALID with %q", in, out, err, want)
		}
	}
	if out, err := OpenAITools(nil); err != nil || string(out) != "[]" {
		t.Errorf("OpenAITools(nil): %s, %v", out, err)
	}
}
