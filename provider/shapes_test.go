package provider

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/seed-e5e476df/logbook/sdk"
)

// testHeader is a folded request header with every config member the
// conversions map, and a schema whose numbers must survive verbatim.
const testHeader = `{"config":{"provider":"anthropic","model":"claude-sonnet-4","maxTokens":2048,"temperature":0.50,"stop":["END"],"reasoningEffort":"high"},` +
	`"tools":[{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"number","maximum":1.50}},"required":["path"]}},` +
	`{"name":"run"}]}`

// shapes are derived messages of every shape the demo and the corpus
// write, and the rest of the vocabulary: the system prompt, a developer
// tool change, user text with an image and a plugin block, signed and
// unsigned reasoning, parallel tool calls with number-heavy arguments, a
// tool error, a tool result with an image, a compaction checkpoint, and a
// turn repaired with a synthetic tool error.
var shapes = []string{
	`{"id":"sys","role":"system","content":[{"type":"text","text":"You are a careful coding agent."}],"source":{"kind":"system-prompt"}}`,
	`{"id":"u1","role":"user","content":[{"type":"text","text":"What is in the screenshot?"},{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="},{"type":"plugin:mark","x":1}],"source":{"kind":"prompt"}}`,
	`{"id":"a1","role":"assistant","content":[{"type":"reasoning","text":"Look first.","signature":"sig-1"},{"type":"reasoning","text":"unsigned"},{"type":"text","text":"Reading both."},` +
		`{"type":"tool-call","id":"call_1","name":"read","arguments":"{\"path\":\"a.go\",\"limit\":1.50,\"big\":12345678901234567890}"},{"type":"tool-call","id":"call_2","name":"run","arguments":"not json"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}`,
	`{"id":"r1","role":"tool","toolCallId":"call_1","content":[{"type":"text","text":"package a"},{"type":"image","mediaType":"image/jpeg","data":"/9j/"}],"source":{"kind":"tool","callId":"call_1"}}`,
	`{"id":"r2","role":"tool","toolCallId":"call_2","isError":true,"content":[{"type":"text","text":"exit status 1"}],"source":{"kind":"tool","callId":"call_2"}}`,
	`{"id":"d1","role":"developer","content":[{"type":"tool-addition","toolName":"run"},{"type":"text","text":"run is available."}],"source":{"kind":"tool-change"}}`,
	`{"id":"a2","role":"assistant","content":[{"type":"tool-call","id":"call_3","name":"run","arguments":"{\"cmd\":\"go test\"}"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}`,
	`{"id":"r3","role":"tool","toolCallId":"call_3","isError":true,"content":[{"type":"text","text":"the tool call was interrupted: the runtime stopped before it finished"}],"source":{"kind":"tool","callId":"call_3"}}`,
	`{"id":"a3","role":"assistant","content":[{"type":"reasoning","text":"only unsigned thought"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}`,
	`{"id":"ck","role":"user","content":[{"type":"text","text":"## Summary of the earlier conversation\n- read a.go"}],"source":{"kind":"compact-checkpoint","compactionId":"c1"}}`,
	`{"id":"a4","role":"assistant","content":[{"type":"text","text":"Done."},{"type":"plugin:cite","ref":"a.go"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}}`,
}

func shapeMessages() [][]byte {
	out := make([][]byte, len(shapes))
	for i, s := range shapes {
		out[i] = []byte(s)
	}
	return out
}

// corpusRequest returns the folded header and the derived messages of a
// generated agent session of 400 events (testdata/corpus-request.json, as
// `logbook request --at` prints them for the session internal/corpus
// writes with seed 11).
func corpusRequest(t testing.TB) (header []byte, msgs [][]byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Header   json.RawMessage   `json:"header"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		msgs = append(msgs, m)
	}
	return req.Header, msgs
}

// sdkKeeps unmarshals body into the SDK's request params p, marshals p
// again, and fails unless the two are equal JSON values: every member was
// understood and none was dropped or added.
func sdkKeeps(t *testing.T, body []byte, p interface {
	json.Marshaler
	json.Unmarshaler
}) {
	t.Helper()
	if err := p.UnmarshalJSON(body); err != nil {
		t.Fatalf("the SDK cannot read the request: %v\n%s", err, body)
	}
	again, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	if err := json.Unmarshal(again, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("the SDK changed the request:\n sent %s\n kept %s", body, again)
	}
}

// The requests of every shape, and of a corpus session, are what the
// official SDKs' request params hold, member for member.
func TestRequestsMatchTheSDKs(t *testing.T) {
	ch, cm := corpusRequest(t)
	cases := []struct {
		name   string
		header []byte
		msgs   [][]byte
	}{
		{"every shape", []byte(testHeader), shapeMessages()},
		{"corpus", ch, cm},
	}
	for _, c := range cases {
		t.Run(c.name+"/openai", func(t *testing.T) {
			body, err := OpenAIRequest(c.header, c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			sdkKeeps(t, body, &openai.ChatCompletionNewParams{})
		})
		t.Run(c.name+"/anthropic", func(t *testing.T) {
			body, err := AnthropicRequest(c.header, c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			sdkKeeps(t, body, &anthropic.MessageNewParams{})
		})
		t.Run(c.name+"/openai-responses", func(t *testing.T) {
			body, err := OpenAIResponsesRequest(c.header, c.msgs)
			if err != nil {
				t.Fatal(err)
			}
			sdkKeeps(t, body, &responses.ResponseNewParams{})
		})
		for _, format := range providerFormats {
			t.Run(c.name+"/"+format+"/checked", func(t *testing.T) {
				body, err := Request(format, RequestParts{Header: c.header, Messages: c.msgs})
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckRequest(format, body); err != nil {
					t.Fatalf("%v\n%s", err, body)
				}
			})
		}
	}
}

// providerFormats are the formats of a provider's body.
var providerFormats = []string{FormatOpenAI, FormatAnthropic, FormatResponses}

// The logbook request is {header, context, messages} with every part
// spliced in as given and a missing header or context as null; the
// providers' bodies come from the header and the messages.
func TestRequestRendersEachFormat(t *testing.T) {
	msgs := shapeMessages()[:2]
	got, err := Request(FormatLogbook, RequestParts{Context: []byte(`{"cwd":"/w"}`), Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"header":null,"context":{"cwd":"/w"},"messages":[` + shapes[0] + `,` + shapes[1] + `]}`
	if string(got) != want {
		t.Errorf("logbook request\n got %s\nwant %s", got, want)
	}
	for format, convert := range map[string]func([]byte, [][]byte) ([]byte, error){FormatOpenAI: OpenAIRequest, FormatAnthropic: AnthropicRequest, FormatResponses: OpenAIResponsesRequest} {
		got, err := Request(format, RequestParts{Header: []byte(testHeader), Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := convert([]byte(testHeader), msgs); string(got) != string(want) {
			t.Errorf("%s request\n got %s\nwant %s", format, got, want)
		}
	}
	if _, err := Request(FormatMarkdown, RequestParts{}); !errors.Is(err, sdk.CodeUsage) {
		t.Errorf("markdown request: %v, want USAGE", err)
	}
}
