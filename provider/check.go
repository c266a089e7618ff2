package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
)

// CheckRequest checks a request body in format (openai, anthropic or
// openai-responses: what Request renders) against the rules of
// docs/providers.md "What every provider body obeys": every tool call is
// answered by results right after it and every result answers such a
// call, call ids are unique, no message or text block is empty, Anthropic
// roles alternate with tool_result blocks first, thinking blocks are
// signed, and images are of a type the provider takes. It returns nil, or
// PAYLOAD_INVALID naming the first broken rule, with the Index of the
// offending message or input item. Another format is USAGE. The tests of
// the renderers check every body they render with it; an embedder may
// check a body it built itself.
func CheckRequest(format string, body []byte) error {
	var req struct {
		Messages []map[string]any `json:"messages"`
		Input    []map[string]any `json:"input"`
		System   []map[string]any `json:"system"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the %s body is not a JSON object of the request's members", format)
	}
	switch format {
	case FormatOpenAI:
		return checkChat(req.Messages)
	case FormatAnthropic:
		return checkAnthropic(req.System, req.Messages)
	case FormatResponses:
		return checkResponses(req.Input)
	}
	return CheckFormat(op, "format", format, []string{FormatOpenAI, FormatAnthropic, FormatResponses})
}

// broken is the PAYLOAD_INVALID of CheckRequest: rule broken at index i
// of what (messages, input).
func broken(what string, i int, format string, args ...any) error {
	return sdk.Errorf(sdk.CodePayloadInvalid, op, "%s[%d]: %s", what, i, fmt.Sprintf(format, args...)).WithIndex(i)
}

// str returns the string member name of v, "" when absent or another kind.
func str(v map[string]any, name string) string {
	s, _ := v[name].(string)
	return s
}

// objects returns the array member name of v as objects; ok is false when
// it is absent, not an array, or holds something else.
func objects(v map[string]any, name string) (out []map[string]any, ok bool) {
	arr, ok := v[name].([]any)
	if !ok {
		return nil, false
	}
	for _, e := range arr {
		o, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		out = append(out, o)
	}
	return out, true
}

// calls tracks the tool calls of a body: ids are unique across it, and
// the calls of one assistant message are answered, each once, before
// anything else.
type calls struct {
	seen    map[string]bool
	pending []string // calls of the last assistant message without an answer
}

// announce records call id, announced at index i.
func (c *calls) announce(what string, i int, id string) error {
	if id == "" {
		return broken(what, i, "a tool call without an id")
	}
	if c.seen[id] {
		return broken(what, i, "call id %s is used twice", id)
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	c.seen[id] = true
	c.pending = append(c.pending, id)
	return nil
}

// answer records a result for id at index i: it must answer a pending call.
func (c *calls) answer(what string, i int, id string) error {
	k := slices.Index(c.pending, id)
	if k < 0 {
		return broken(what, i, "the result for %s answers no unanswered call right before it", id)
	}
	c.pending = slices.Delete(c.pending, k, k+1)
	return nil
}

// settled fails when calls are still unanswered at index i (something
// other than a result, or the end).
func (c *calls) settled(what string, i int) error {
	if len(c.pending) > 0 {
		return broken(what, i, "calls %s are not answered before it", strings.Join(c.pending, ", "))
	}
	return nil
}

// checkChat checks Chat Completions messages.
func checkChat(msgs []map[string]any) error {
	const what = "messages"
	var c calls
	for i, m := range msgs {
		role := str(m, "role")
		if role != "tool" {
			if err := c.settled(what, i); err != nil {
				return err
			}
		}
		switch role {
		case "system", "developer", "user":
			if err := checkChatContent(what, i, m["content"], role == "user"); err != nil {
				return err
			}
		case "assistant":
			tcs, _ := objects(m, "tool_calls")
			text, hasText := m["content"].(string)
			if hasText && text == "" || !hasText && m["content"] != nil {
				return broken(what, i, "assistant content is empty or not a string")
			}
			if !hasText && len(tcs) == 0 {
				return broken(what, i, "an assistant message with neither content nor tool calls")
			}
			for _, tc := range tcs {
				fn, _ := tc["function"].(map[string]any)
				if _, ok := fn["arguments"].(string); !ok || str(fn, "name") == "" || str(tc, "type") != "function" {
					return broken(what, i, "a tool call needs type function, a name and an arguments string")
				}
				if err := c.announce(what, i, str(tc, "id")); err != nil {
					return err
				}
			}
		case "tool":
			if str(m, "content") == "" {
				return broken(what, i, "a tool message without content")
			}
			if err := c.answer(what, i, str(m, "tool_call_id")); err != nil {
				return err
			}
		default:
			return broken(what, i, "role %q", role)
		}
	}
	return c.settled(what, len(msgs))
}

// checkChatContent checks the content of a system, developer or user
// message: a non-empty string, or (user only) a non-empty array of text
// parts with text and image_url parts with a data URL of a taken type.
func checkChatContent(what string, i int, content any, parts bool) error {
	if _, ok := content.([]any); ok && !parts {
		return broken(what, i, "content is not a string")
	}
	return checkParts(what, i, content, chatPartTypes)
}

// partTypes names the parts of a message's content in one OpenAI format,
// for checkParts.
type partTypes struct {
	text, image string
	url         func(image map[string]any) string // an image part's URL
}

var (
	chatPartTypes = partTypes{"text", "image_url", func(p map[string]any) string {
		url, _ := p["image_url"].(map[string]any)
		return str(url, "url")
	}}
	inputPartTypes = partTypes{"input_text", "input_image", func(p map[string]any) string { return str(p, "image_url") }}
)

// checkParts checks a message's content in an OpenAI format: a non-empty
// string, or a non-empty array of text parts with text and image parts
// with a data URL of a taken type.
func checkParts(what string, i int, content any, t partTypes) error {
	if s, ok := content.(string); ok {
		if s == "" {
			return broken(what, i, "empty content")
		}
		return nil
	}
	arr, ok := content.([]any)
	if !ok || len(arr) == 0 {
		return broken(what, i, "content is neither a non-empty string nor a non-empty array of parts")
	}
	for _, p := range arr {
		part, _ := p.(map[string]any)
		switch typ := str(part, "type"); typ {
		case t.text:
			if str(part, "text") == "" {
				return broken(what, i, "an empty %s part", typ)
			}
		case t.image:
			if !takenDataURL(t.url(part)) {
				return broken(what, i, "an %s part without a data URL of a JPEG, PNG, GIF or WebP image", typ)
			}
		default:
			return broken(what, i, "a part of type %q", typ)
		}
	}
	return nil
}

// takenDataURL reports whether url is a base64 data URL of an image type
// the providers take.
func takenDataURL(url string) bool {
	for _, t := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
		if strings.HasPrefix(url, "data:"+t+";base64,") {
			return true
		}
	}
	return false
}

// checkAnthropic checks Anthropic Messages system blocks and messages.
func checkAnthropic(system, msgs []map[string]any) error {
	for i, b := range system {
		if str(b, "type") != "text" || blank(str(b, "text")) {
			return broken("system", i, "a system block that is not a text block with text")
		}
	}
	const what = "messages"
	var c calls
	for i, m := range msgs {
		role := str(m, "role")
		if role != "user" && role != "assistant" {
			return broken(what, i, "role %q", role)
		}
		if i > 0 && str(msgs[i-1], "role") == role {
			return broken(what, i, "two %s messages in a row; roles alternate", role)
		}
		blocks, ok := objects(m, "content")
		if !ok || len(blocks) == 0 {
			return broken(what, i, "no content blocks")
		}
		results := role == "user" // tool_result blocks may open a user message
		for _, b := range blocks {
			typ := str(b, "type")
			if typ != "tool_result" && results {
				if err := c.settled(what, i); err != nil {
					return err
				}
				results = false
			}
			switch {
			case typ == "text":
				if blank(str(b, "text")) {
					return broken(what, i, "a text block without non-whitespace text")
				}
			case typ == "image" && role == "user":
				if err := checkAnthropicImage(what, i, b); err != nil {
					return err
				}
			case typ == "tool_result" && results:
				if err := c.answer(what, i, str(b, "tool_use_id")); err != nil {
					return err
				}
				inner, _ := objects(b, "content")
				for _, ib := range inner {
					switch str(ib, "type") {
					case "text":
						if blank(str(ib, "text")) {
							return broken(what, i, "a tool_result text block without non-whitespace text")
						}
					case "image":
						if err := checkAnthropicImage(what, i, ib); err != nil {
							return err
						}
					default:
						return broken(what, i, "a tool_result block of type %q", str(ib, "type"))
					}
				}
			case typ == "tool_use" && role == "assistant":
				if _, ok := b["input"].(map[string]any); !ok || str(b, "name") == "" {
					return broken(what, i, "a tool_use block needs a name and an input object")
				}
				if err := c.announce(what, i, str(b, "id")); err != nil {
					return err
				}
			case typ == "thinking" && role == "assistant":
				if str(b, "signature") == "" {
					return broken(what, i, "a thinking block without a signature")
				}
			default:
				return broken(what, i, "a %s block in a %s message, or tool_result blocks after other blocks", typ, role)
			}
		}
		if role == "user" {
			if err := c.settled(what, i); err != nil {
				return err
			}
		}
	}
	return c.settled(what, len(msgs))
}

// checkAnthropicImage checks an image block: a base64 source of a taken
// media type, with data.
func checkAnthropicImage(what string, i int, b map[string]any) error {
	src, _ := b["source"].(map[string]any)
	if str(src, "type") != "base64" || str(src, "data") == "" || !takenDataURL("data:"+str(src, "media_type")+";base64,") {
		return broken(what, i, "an image block without a base64 source of a JPEG, PNG, GIF or WebP image")
	}
	return nil
}

// checkResponses checks Responses input items.
func checkResponses(items []map[string]any) error {
	const what = "input"
	var c calls
	prev := ""
	for i, it := range items {
		typ := str(it, "type")
		if typ != "function_call_output" && (typ != "function_call" || prev == "function_call_output") {
			if err := c.settled(what, i); err != nil {
				return err
			}
		}
		switch typ {
		case "message":
			switch role := str(it, "role"); role {
			case "system", "developer", "assistant":
				if str(it, "content") == "" {
					return broken(what, i, "a %s message without text", role)
				}
			case "user":
				if err := checkParts(what, i, it["content"], inputPartTypes); err != nil {
					return err
				}
			default:
				return broken(what, i, "role %q", role)
			}
		case "function_call":
			if _, ok := it["arguments"].(string); !ok || str(it, "name") == "" {
				return broken(what, i, "a function_call needs a name and an arguments string")
			}
			if err := c.announce(what, i, str(it, "call_id")); err != nil {
				return err
			}
		case "reasoning":
			if _, ok := objects(it, "summary"); !strings.HasPrefix(str(it, "id"), "rs_") || !ok && it["summary"] != nil {
				return broken(what, i, "a reasoning item needs the rs_ id the API issued and a summary array")
			}
		case "function_call_output":
			if str(it, "output") == "" {
				return broken(what, i, "a function_call_output without output")
			}
			if err := c.answer(what, i, str(it, "call_id")); err != nil {
				return err
			}
		default:
			return broken(what, i, "an item of type %q", typ)
		}
		prev = typ
	}
	return c.settled(what, len(items))
}
