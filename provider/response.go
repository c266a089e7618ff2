package provider

import (
	"bytes"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The response bodies are read with encoding/json rather than sdk/jsonv:
// a provider's answer may hold integers beyond 2^53 in a tool input, which
// logbook's own documents refuse, and the input is kept as raw text.

// openAICompletion is the part of a chat completion ParseOpenAIResponse reads.
type openAICompletion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message *struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// ParseOpenAIResponse reads an OpenAI chat completion (the response body of
// Chat Completions) into the reply of an assistant message: the
// completion's id as the message id, its model and provider (the name the
// caller gives, e.g. "openai") as the source, the first choice's text as a
// text block and its tool calls as tool-call blocks (arguments kept as
// sent), and the usage with cached prompt tokens as cacheRead. A body that
// is not a completion with a choice, or a reply with neither text nor tool
// calls, is PAYLOAD_INVALID.
func ParseOpenAIResponse(body []byte, provider string) (events.Reply, error) {
	const what = "OpenAI chat completion"
	var c openAICompletion
	if err := decode(body, &c, what); err != nil {
		return events.Reply{}, err
	}
	r := events.Reply{ID: c.ID, Model: events.Model{Provider: provider, Name: c.Model}}
	if len(c.Choices) == 0 || c.Choices[0].Message == nil {
		return events.Reply{}, sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s has no choices[0].message", what)
	}
	msg := c.Choices[0].Message
	if msg.Content != nil && *msg.Content != "" {
		r.Content = append(r.Content, events.Text(*msg.Content))
	}
	for i, tc := range msg.ToolCalls {
		if tc.ID == "" || tc.Function.Name == "" || tc.Function.Arguments == nil {
			return events.Reply{}, sdk.Errorf(sdk.CodePayloadInvalid, op,
				"tool call %d of the %s needs an id, function.name and function.arguments", i, what).WithIndex(i)
		}
		r.Content = append(r.Content, events.ToolCallBlock(events.Call{ID: tc.ID, Name: tc.Function.Name, Arguments: *tc.Function.Arguments}))
	}
	if u := c.Usage; u != nil {
		cached := count(u.PromptTokensDetails.CachedTokens)
		r.Usage = &events.Usage{Input: max(0, count(u.PromptTokens)-cached), Output: count(u.CompletionTokens), CacheRead: cached}
	}
	return r, checkReply(r, what)
}

// anthropicMessage is the part of a Messages response ParseAnthropicResponse
// reads.
type anthropicMessage struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Content *[]struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content"`
	Usage *struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// ParseAnthropicResponse reads an Anthropic message (the response body of
// Messages) into the reply of an assistant message: its id, its model and
// provider (the name the caller gives, e.g. "anthropic") as the source,
// text blocks as text, thinking blocks as reasoning with their signature,
// tool_use blocks as tool calls whose arguments are the input's JSON text
// as sent (whitespace removed, numbers untouched), and the usage (input,
// output, cache reads and writes). Redacted thinking and other block types
// have no logbook block and are left out. A body that is not a message, or
// a reply without text, reasoning or tool call, is PAYLOAD_INVALID.
func ParseAnthropicResponse(body []byte, provider string) (events.Reply, error) {
	const what = "Anthropic message"
	var m anthropicMessage
	if err := decode(body, &m, what); err != nil {
		return events.Reply{}, err
	}
	r := events.Reply{ID: m.ID, Model: events.Model{Provider: provider, Name: m.Model}}
	if m.Content == nil {
		return events.Reply{}, sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s has no content array", what)
	}
	for i, b := range *m.Content {
		switch b.Type {
		case "text":
			r.Content = append(r.Content, events.Text(b.Text))
		case "thinking":
			r.Content = append(r.Content, events.Reasoning(events.Thought{Text: b.Thinking, Signature: b.Signature}))
		case "tool_use":
			var input bytes.Buffer
			if b.ID == "" || b.Name == "" || bytes.IndexByte(bytes.TrimSpace(b.Input), '{') != 0 || json.Compact(&input, b.Input) != nil {
				return events.Reply{}, sdk.Errorf(sdk.CodePayloadInvalid, op,
					"tool_use block %d of the %s needs an id, a name and an object input", i, what).WithIndex(i)
			}
			r.Content = append(r.Content, events.ToolCallBlock(events.Call{ID: b.ID, Name: b.Name, Arguments: input.String()}))
		}
	}
	if u := m.Usage; u != nil {
		r.Usage = &events.Usage{
			Input:      count(u.InputTokens),
			Output:     count(u.OutputTokens),
			CacheRead:  count(u.CacheReadInputTokens),
			CacheWrite: count(u.CacheCreationInputTokens),
		}
	}
	return r, checkReply(r, what)
}

// decode unmarshals a response body that must be a JSON object.
func decode(body []byte, v any, what string) error {
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s is not a JSON object", what)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the %s is not valid JSON of its shape", what)
	}
	return nil
}

// checkReply rejects a reply an assistant message cannot hold.
func checkReply(r events.Reply, what string) error {
	switch {
	case r.ID == "":
		return sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s has no id", what)
	case r.Model.Name == "" || r.Model.Provider == "":
		return sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s has no model, or no provider was named (model %q, provider %q)", what, r.Model.Name, r.Model.Provider)
	case len(r.Content) == 0:
		return sdk.Errorf(sdk.CodePayloadInvalid, op, "the %s has no text and no tool call", what)
	}
	return nil
}

// count clamps a token count to a non-negative safe integer.
func count(n int64) int64 { return max(0, min(n, sdk.MaxSeq)) }
