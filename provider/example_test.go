package provider_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/provider"
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
