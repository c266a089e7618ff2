package provider

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// seed reads a response body of testdata/fuzz's seed corpus.
func seed(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "responses", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recorded returns the message an assistant/message input records.
func recorded(t testing.TB, r events.Reply) []byte {
	t.Helper()
	in := events.Assistant(1, 1, r)
	doc, err := jsonv.Parse(in.Data, jsonv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return doc.Root().Get("message").Bytes()
}

// answered returns msg followed by a tool result for each of its tool
// calls: a complete step, which the provider formats render.
func answered(t testing.TB, msg []byte) [][]byte {
	t.Helper()
	doc, err := jsonv.Parse(msg, jsonv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{msg}
	for _, b := range doc.Root().Get("content").Elements() {
		if typ, _ := b.Get("type").Str(); typ == "tool-call" {
			id := b.Get("id").Bytes() // the JSON string, quoted
			out = append(out, []byte(`{"id":"r","role":"tool","toolCallId":`+string(id)+`,"content":[],"source":{"kind":"tool","callId":`+string(id)+`}}`))
		}
	}
	return out
}

// An OpenAI completion becomes the reply it describes, which the builders
// record and the converters send back as it came.
func TestParseOpenAIResponse(t *testing.T) {
	body := seed(t, "openai-tool-calls.json")
	var sdkResp openai.ChatCompletion // the SDK reads the same body
	if err := json.Unmarshal(body, &sdkResp); err != nil || len(sdkResp.Choices[0].Message.ToolCalls) != 2 {
		t.Fatalf("the seed is not a completion the SDK reads: %v", err)
	}
	r, err := ParseOpenAIResponse(body, "openai")
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "chatcmpl-9" || r.Model != (events.Model{Provider: "openai", Name: "gpt-4.1-2025-04-14"}) ||
		*r.Usage != (events.Usage{Input: 70, Output: 12, CacheRead: 30}) || len(r.Content) != 3 {
		t.Fatalf("reply %+v usage %+v", r, r.Usage)
	}
	msg := recorded(t, r)
	want := `{"id":"chatcmpl-9","role":"assistant","content":[{"type":"text","text":"Reading it."},` +
		`{"type":"tool-call","id":"call_a","name":"read","arguments":"{\"path\":\"a.go\",\"limit\":1.50}"},` +
		`{"type":"tool-call","id":"call_b","name":"run","arguments":"{}"}],"source":{"kind":"model","provider":"openai","model":"gpt-4.1-2025-04-14"}}`
	if string(msg) != want {
		t.Fatalf("message\n got %s\nwant %s", msg, want)
	}
	back, err := OpenAIMessages(answered(t, msg))
	if err != nil || !strings.Contains(string(back), `"arguments":"{\"path\":\"a.go\",\"limit\":1.50}"`) {
		t.Fatalf("sent back as %s (%v)", back, err)
	}
}

// An Anthropic message becomes the reply it describes: thinking with its
// signature, the tool input's text as sent, every usage counter.
func TestParseAnthropicResponse(t *testing.T) {
	body := seed(t, "anthropic-tool-use.json")
	var sdkResp anthropic.Message
	if err := json.Unmarshal(body, &sdkResp); err != nil || len(sdkResp.Content) != 4 {
		t.Fatalf("the seed is not a message the SDK reads: %v", err)
	}
	r, err := ParseAnthropicResponse(body, "anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if *r.Usage != (events.Usage{Input: 100, Output: 40, CacheRead: 800, CacheWrite: 5}) {
		t.Fatalf("usage %+v", r.Usage)
	}
	msg := recorded(t, r)
	want := `{"id":"msg_01","role":"assistant","content":[{"type":"reasoning","text":"Check the file.","signature":"EqQB"},` +
		`{"type":"text","text":"Reading it."},{"type":"tool-call","id":"toolu_01","name":"read","arguments":"{\"path\":\"a.go\",\"limit\":1.50,\"big\":9007199254740993}"}],` +
		`"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4-20250514"}}`
	if string(msg) != want {
		t.Fatalf("message\n got %s\nwant %s", msg, want)
	}
	_, back, err := AnthropicMessages(answered(t, msg))
	if err != nil || !strings.Contains(string(back), `"input":{"path":"a.go","limit":1.50,"big":9007199254740993}`) ||
		!strings.Contains(string(back), `"signature":"EqQB"`) {
		t.Fatalf("sent back as %s (%v)", back, err)
	}
}

// A body that is not a usable answer is PAYLOAD_INVALID naming what is
// missing.
func TestParseResponseRejects(t *testing.T) {
	cases := []struct {
		name, body, want string
		parse            func([]byte, string) (events.Reply, error)
	}{
		{"openai not JSON", `{`, "not valid JSON of its shape", ParseOpenAIResponse},
		{"openai array", `[]`, "not a JSON object", ParseOpenAIResponse},
		{"openai no choice", `{"id":"x","model":"m","choices":[]}`, "no choices[0].message", ParseOpenAIResponse},
		{"openai empty", `{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":""}}]}`, "no text and no tool call", ParseOpenAIResponse},
		{"openai bad call", `{"id":"x","model":"m","choices":[{"message":{"tool_calls":[{"id":"c","function":{}}]}}]}`, "tool call 0", ParseOpenAIResponse},
		{"openai no id", `{"model":"m","choices":[{"message":{"content":"hi"}}]}`, "has no id", ParseOpenAIResponse},
		{"anthropic no content", `{"id":"x","model":"m"}`, "no content array", ParseAnthropicResponse},
		{"anthropic bad input", `{"id":"x","model":"m","content":[{"type":"tool_use","id":"t","name":"n","input":[]}]}`, "tool_use block 0", ParseAnthropicResponse},
		{"anthropic no model", `{"id":"x","content":[{"type":"text","text":"hi"}]}`, "no model", ParseAnthropicResponse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.parse([]byte(c.body), "p")
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != sdk.CodePayloadInvalid || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v; want PAYLOAD_INVALID with %q", err, c.want)
			}
		})
	}
}

// fuzzParser checks a parser on any input: no panic, and an accepted reply
// is one the builders record as a valid assistant message the converters
// take.
func fuzzParser(f *testing.F, parse func([]byte, string) (events.Reply, error), seeds ...string) {
	for _, s := range seeds {
		f.Add(seed(f, s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parse(body, "p")
		if err != nil {
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != sdk.CodePayloadInvalid {
				t.Fatalf("error without PAYLOAD_INVALID: %v", err)
			}
			return
		}
		msgs := answered(t, recorded(t, r))
		for format := range strings.SplitSeq("openai anthropic openai-responses", " ") {
			if _, err := Messages(format, msgs); err != nil && !errors.Is(err, sdk.CodeToolCallRepeated) {
				t.Fatalf("the recorded reply is not a message: %v\n%s", err, msgs[0])
			}
		}
	})
}

func FuzzParseOpenAIResponse(f *testing.F) {
	fuzzParser(f, ParseOpenAIResponse, "openai-tool-calls.json", "openai-text.json")
}

func FuzzParseAnthropicResponse(f *testing.F) {
	fuzzParser(f, ParseAnthropicResponse, "anthropic-tool-use.json", "anthropic-text.json")
}
