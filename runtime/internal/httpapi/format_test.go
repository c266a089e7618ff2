package httpapi_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/provider"
)

// The messages and request routes take format= as `logbook messages` and
// `logbook request` take --format: the provider bodies the provider
// package builds from the same derived messages and header, markdown as
// text/markdown, and any other value USAGE naming the allowed ones.
func TestV1MessageAndRequestFormats(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"f"}`))
	s.ok(t, 200, "POST", "/v1/sessions/f/events", "application/x-ndjson", ndjson(
		`{"type":"request/header","data":{"header":{"config":{"provider":"openai","model":"gpt-4.1","maxTokens":100},"tools":[{"name":"ls","parameters":{"type":"object"}}]},"reason":"initial"}}`,
		`{"type":"turn/start","data":{"turn":1}}`,
		userLine("u1", "list the files"),
	))
	var raws []json.RawMessage
	if err := json.Unmarshal(s.ok(t, 200, "GET", "/v1/sessions/f/messages?format=logbook", "", nil).body, &raws); err != nil || len(raws) != 1 {
		t.Fatalf("messages?format=logbook: %d (%v)", len(raws), err)
	}
	msgs := [][]byte{raws[0]}
	for _, format := range []string{"openai", "anthropic", "markdown"} {
		want, err := provider.Messages(format, msgs)
		if err != nil {
			t.Fatal(err)
		}
		r := s.ok(t, 200, "GET", "/v1/sessions/f/messages?format="+format, "", nil)
		if !bytes.Equal(bytes.TrimSpace(r.body), want) {
			t.Errorf("messages?format=%s = %s, want %s", format, r.body, want)
		}
		if ct := r.header.Get("Content-Type"); (format == "markdown") != strings.HasPrefix(ct, "text/markdown") {
			t.Errorf("messages?format=%s: Content-Type %q", format, ct)
		}
	}
	header := []byte(`{"config":{"provider":"openai","model":"gpt-4.1","maxTokens":100},"tools":[{"name":"ls","parameters":{"type":"object"}}]}`)
	for format, build := range map[string]func([]byte, [][]byte) ([]byte, error){"openai": provider.OpenAIRequest, "anthropic": provider.AnthropicRequest} {
		want, err := build(header, msgs)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.ok(t, 200, "GET", "/v1/sessions/f/request?format="+format, "", nil).body; !bytes.Equal(bytes.TrimSpace(got), want) {
			t.Errorf("request?format=%s = %s, want %s", format, got, want)
		}
	}
	if got := s.ok(t, 200, "GET", "/v1/sessions/f/request?format=logbook", "", nil).body; !bytes.Equal(got, s.ok(t, 200, "GET", "/v1/sessions/f/request", "", nil).body) {
		t.Errorf("request?format=logbook differs from the default: %s", got)
	}
	for _, tc := range []struct{ path, allowed string }{
		{"/v1/sessions/f/messages?format=gemini", `format "gemini" is not one of logbook, openai, anthropic, openai-responses, markdown`},
		{"/v1/sessions/f/messages?format=", `format "" is not one of`},
		{"/v1/sessions/f/request?format=markdown", `format "markdown" is not one of logbook, openai, anthropic, openai-responses`},
		{"/v1/sessions/absent/request?format=gemini", `format "gemini"`},
	} {
		if p := s.failed(t, 400, "USAGE", "GET", tc.path, "", nil); !strings.Contains(p.Detail, tc.allowed) {
			t.Errorf("%s: detail %q, want %q", tc.path, p.Detail, tc.allowed)
		}
	}
}
