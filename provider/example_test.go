package provider_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/sdk"
)

var (
	header = []byte(`{"config":{"provider":"openai","model":"gpt-4.1","maxTokens":1024},` +
		`"tools":[{"name":"ls","description":"list files","parameters":{"type":"object"}}]}`)
	messages = [][]byte{
		[]byte(`{"id":"s","role":"system","content":[{"type":"text","text":"Be brief."}],"source":{"kind":"system-prompt"}}`),
		[]byte(`{"id":"u1","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"prompt"}}`),
		[]byte(`{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"ls","arguments":"{\"path\":\".\"}"}],"source":{"kind":"model","provider":"openai","model":"gpt-4.1"}}`),
		[]byte(`{"id":"r1","role":"tool","toolCallId":"c1","isError":true,"content":[{"type":"text","text":"permission denied"}],"source":{"kind":"tool","callId":"c1"}}`),
	}
)

func ExampleOpenAIMessages() {
	b, err := provider.OpenAIMessages(messages)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)
	// Output:
	// [{"role":"system","content":"Be brief."},{"role":"user","content":"list the files"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"path\":\".\"}"}}]},{"role":"tool","tool_call_id":"c1","content":"[tool error] permission denied"}]
}

func ExampleOpenAITools() {
	b, err := provider.OpenAITools([]byte(`[{"name":"ls","description":"list files","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]`))
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)
	// Output:
	// [{"type":"function","function":{"name":"ls","description":"list files","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]
}

func ExampleOpenAIRequest() {
	b, err := provider.OpenAIRequest(header, messages[:2])
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)
	// Output:
	// {"model":"gpt-4.1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"list the files"}],"tools":[{"type":"function","function":{"name":"ls","description":"list files","parameters":{"type":"object"}}}],"max_completion_tokens":1024}
}

func ExampleAnthropicMessages() {
	system, msgs, err := provider.AnthropicMessages(messages)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n%s\n", system, msgs)
	// Output:
	// [{"type":"text","text":"Be brief."}]
	// [{"role":"user","content":[{"type":"text","text":"list the files"}]},{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"ls","input":{"path":"."}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"permission denied"}],"is_error":true}]}]
}

func ExampleAnthropicRequest() {
	b, err := provider.AnthropicRequest(header, messages[:2])
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)
	// Output:
	// {"model":"gpt-4.1","max_tokens":1024,"system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"list the files"}]}],"tools":[{"name":"ls","description":"list files","input_schema":{"type":"object"}}]}
}

func ExampleParseOpenAIResponse() {
	r, err := provider.ParseOpenAIResponse([]byte(`{"id":"chatcmpl-1","model":"gpt-4.1","choices":[{"message":{"role":"assistant","content":"Two files."}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`), "openai")
	if err != nil {
		panic(err)
	}
	in := events.Assistant(1, 2, r)
	fmt.Printf("%s %s\n", in.Type, in.Data)
	// Output:
	// assistant/message {"turn":1,"step":2,"message":{"id":"chatcmpl-1","role":"assistant","content":[{"type":"text","text":"Two files."}],"source":{"kind":"model","provider":"openai","model":"gpt-4.1"}},"stream":[],"usage":{"input":12,"output":3}}
}

func ExampleParseAnthropicResponse() {
	r, err := provider.ParseAnthropicResponse([]byte(`{"id":"msg_1","model":"claude-sonnet-4","content":[{"type":"tool_use","id":"toolu_1","name":"ls","input":{"path": "."}}],"usage":{"input_tokens":12,"output_tokens":3}}`), "anthropic")
	if err != nil {
		panic(err)
	}
	in := events.Assistant(1, 1, r)
	fmt.Printf("%s %s\n", in.Type, in.Data)
	// Output:
	// assistant/message {"turn":1,"step":1,"message":{"id":"msg_1","role":"assistant","content":[{"type":"tool-call","id":"toolu_1","name":"ls","arguments":"{\"path\":\".\"}"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[],"usage":{"input":12,"output":3}}
}

func ExampleMessages() {
	b, err := provider.Messages(provider.FormatMarkdown, messages[1:])
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)
	// Output:
	// ## user
	//
	// list the files
	//
	// ## assistant
	//
	// **→ ls** (call c1)
	//
	// ```json
	// {"path":"."}
	// ```
	//
	// ## tool (call c1) — error
	//
	// permission denied
}

func ExampleCheckFormat() {
	fmt.Println(provider.CheckFormat("messages", "--format", "gemini", provider.MessageFormats()))
	// Output:
	// messages: USAGE: --format "gemini" is not one of logbook, openai, anthropic, openai-responses, markdown
}

// An embedder builds the request from what it holds: the header value it
// wrote and the messages' JSON (here as session.Messages returns them).
func ExampleRequest() {
	h, err := provider.HeaderJSON(events.Header{Config: events.Config{Provider: "openai", Model: "gpt-4.1", MaxTokens: 512}})
	if err != nil {
		panic(err)
	}
	body, err := provider.Request(provider.FormatResponses, provider.RequestParts{Header: h, Messages: messages})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", body)
	// Output:
	// {"model":"gpt-4.1","input":[{"type":"message","role":"system","content":"Be brief."},{"type":"message","role":"user","content":"list the files"},{"type":"function_call","call_id":"c1","name":"ls","arguments":"{\"path\":\".\"}"},{"type":"function_call_output","call_id":"c1","output":"[tool error] permission denied"}],"max_output_tokens":512}
}

// Calls without results at the end (a step still open) are
// TOOL_CALLS_PENDING; the logbook format still renders.
func ExampleRequest_pending() {
	_, err := provider.Request(provider.FormatAnthropic, provider.RequestParts{Header: header, Messages: messages[:3]})
	fmt.Println(err)
	fmt.Println(sdk.ErrorOf(err).Meta["callIds"])
	_, err = provider.Request(provider.FormatLogbook, provider.RequestParts{Header: header, Messages: messages[:3]})
	fmt.Println(err)
	// Output:
	// provider: TOOL_CALLS_PENDING: calls c1 of message 2 have no result yet (a step is open); a provider needs every call answered: render the logbook format, or wait for the results (index 2)
	// ["c1"]
	// <nil>
}

// A result whose call was shadowed (or a lenient log's orphan) is left
// out of the provider formats; Omissions says what, for a warning.
func ExampleOmissions() {
	orphan := [][]byte{messages[1], messages[3]}
	omitted, err := provider.Omissions(orphan)
	if err != nil {
		panic(err)
	}
	for _, o := range omitted {
		fmt.Println(o)
	}
	b, _ := provider.OpenAIMessages(orphan)
	fmt.Printf("%s\n", b)
	// Output:
	// message 1: tool result for call "c1" left out (TOOL_RESULT_UNMATCHED)
	// [{"role":"user","content":"list the files"}]
}

// CheckRequest checks a body against the rules every provider body obeys.
func ExampleCheckRequest() {
	fmt.Println(provider.CheckRequest(provider.FormatOpenAI, []byte(`{"model":"m","messages":[{"role":"tool","tool_call_id":"c9","content":"x"}]}`)))
	// Output:
	// provider: PAYLOAD_INVALID: messages[0]: the result for c9 answers no unanswered call right before it (index 0)
}
