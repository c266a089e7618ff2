package provider

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// DefaultMaxTokens is the max_tokens AnthropicRequest sends when the
// header's config has no maxTokens: the Messages API requires one.
const DefaultMaxTokens = 4096

// AnthropicMessages converts derived messages to an Anthropic Messages
// request's system blocks and messages, each as JSON: system is an array
// of text blocks (nil when there is no system text), messages an array of
// user and assistant messages. System messages, and developer messages
// before the first conversation message, become system blocks; a later
// developer message becomes user text. Tool calls become tool_use blocks
// whose input is the call's argument text spliced in (an argument text that
// is not a JSON object becomes {}); tool results become tool_result blocks
// with is_error; consecutive messages of one role are merged into one, so
// the results of one step share one user message. Reasoning with a
// signature, from an assistant message whose source provider is
// anthropic, becomes a thinking block; other reasoning is dropped (the
// API refuses thinking without a valid Anthropic signature). Text blocks
// of white space alone are dropped, and a message left without blocks is
// left out.
// docs/providers.md lists the rest. A message that is not a derived
// message is PAYLOAD_INVALID with its index.
func AnthropicMessages(msgs [][]byte) (system, messages []byte, err error) {
	ms, err := conversation(msgs)
	if err != nil {
		return nil, nil, err
	}
	system, messages = appendAnthropic(ms)
	return system, messages, nil
}

// AnthropicRequest builds the body of an Anthropic Messages request from
// the folded request header and the derived messages: model, max_tokens
// (the header's maxTokens, else DefaultMaxTokens), system when there is
// system text, messages, and, when the header has them, tools (with their
// parameters as input_schema, verbatim, with "type":"object" added when
// the schema has no type; {"type":"object"} when a tool has none), stop_sequences (the header's stop), and output_config.effort (its
// reasoningEffort). The Messages request has no temperature member, so the
// header's temperature is not sent. A missing header is
// REQUEST_HEADER_MISSING; one without config.model is PAYLOAD_INVALID.
func AnthropicRequest(header []byte, msgs [][]byte) ([]byte, error) {
	h, ms, err := parseRequest(header, msgs)
	if err != nil {
		return nil, err
	}
	system, messages := appendAnthropic(ms)
	b := appendStr([]byte{'{'}, "model", h.model)
	if h.maxTokens.Exists() {
		b = h.maxTokens.AppendRaw(member(b, "max_tokens"))
	} else {
		b = strconv.AppendInt(member(b, "max_tokens"), DefaultMaxTokens, 10)
	}
	if system != nil {
		b = append(member(b, "system"), system...)
	}
	b = append(member(b, "messages"), messages...)
	if h.tools.Len() > 0 {
		b = append(member(b, "tools"), '[')
		for i, t := range h.tools.Elements() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolName(append(b, '{'), t)
			b = appendInputSchema(member(b, "input_schema"), t.Get("parameters"))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	switch h.stop.Kind() {
	case jsonv.String:
		b = append(h.stop.AppendRaw(append(member(b, "stop_sequences"), '[')), ']')
	case jsonv.Array:
		b = h.stop.AppendRaw(member(b, "stop_sequences"))
	}
	if h.effort != "" {
		b = append(appendStr(append(member(b, "output_config"), '{'), "effort", h.effort), '}')
	}
	return append(b, '}'), nil
}

// appendAnthropic converts ms to the system blocks (nil: none) and the
// messages array.
func appendAnthropic(ms []message) (system, messages []byte) {
	var turns []turn
	conversation := false
	for _, m := range ms {
		switch {
		case m.role == "system" || (m.role == "developer" && !conversation):
			if text := m.visibleText("\n\n"); !blank(text) {
				if system == nil {
					system = []byte{'['}
				} else {
					system = append(system, ',')
				}
				system = textBlock(system, text)
			}
			continue
		}
		conversation = true
		role, blocks := anthropicBlocks(m)
		if len(blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].role == role {
			turns[n-1].blocks = append(append(turns[n-1].blocks, ','), blocks...)
			continue
		}
		turns = append(turns, turn{role: role, blocks: blocks})
	}
	if system != nil {
		system = append(system, ']')
	}
	messages = []byte{'['}
	for i, t := range turns {
		if i > 0 {
			messages = append(messages, ',')
		}
		messages = appendStr(append(messages, '{'), "role", t.role)
		messages = append(append(append(member(messages, "content"), '['), t.blocks...), "]}"...)
	}
	return system, append(messages, ']')
}

// turn is one Anthropic message being built: its role and its content
// blocks, comma-separated, without the brackets.
type turn struct {
	role   string
	blocks []byte
}

// anthropicBlocks returns the Anthropic role of m and its content blocks,
// comma-separated.
func anthropicBlocks(m message) (role string, b []byte) {
	add := func(block []byte) {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, block...)
	}
	switch m.role {
	case "assistant":
		for _, bl := range m.blocks {
			switch bl.typ {
			case "text":
				if text := bl.str("text"); !blank(text) {
					add(textBlock(nil, text))
				}
			case "reasoning":
				if sig := bl.str("signature"); sig != "" && m.provider == "anthropic" {
					t := appendStr([]byte(`{"type":"thinking"`), "thinking", bl.str("text"))
					add(append(appendStr(t, "signature", sig), '}'))
				}
			case "tool-call":
				t := appendStr([]byte(`{"type":"tool_use"`), "id", bl.callID)
				t = appendStr(t, "name", bl.str("name"))
				add(append(appendInput(member(t, "input"), bl.str("arguments")), '}'))
			default:
				if n := note(bl); n != "" {
					add(textBlock(nil, n))
				}
			}
		}
		return "assistant", b
	case "tool":
		t := appendStr([]byte(`{"type":"tool_result"`), "tool_use_id", m.toolCallID)
		if content := userBlocks(m); len(content) > 0 {
			t = append(append(append(member(t, "content"), '['), content...), ']')
		}
		if m.isError {
			t = append(member(t, "is_error"), "true"...)
		}
		return "user", append(t, '}')
	default: // user, or a developer message within the conversation
		return "user", userBlocks(m)
	}
}

// userBlocks returns the blocks of a user, developer or tool message,
// comma-separated: text, images as base64 image blocks, and notes for the
// rest.
func userBlocks(m message) []byte {
	var b []byte
	for _, bl := range m.blocks {
		var block []byte
		switch {
		case bl.typ == "text":
			text := bl.str("text")
			if blank(text) {
				continue
			}
			block = textBlock(nil, text)
		case bl.isImage():
			block = appendStr([]byte(`{"type":"image","source":{"type":"base64"`), "media_type", bl.str("mediaType"))
			block = append(appendStr(block, "data", bl.str("data")), "}}"...)
		default:
			n := note(bl)
			if n == "" {
				continue
			}
			block = textBlock(nil, n)
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, block...)
	}
	return b
}

// textBlock appends a text block.
func textBlock(b []byte, text string) []byte {
	b = appendStr(append(b, `{"type":"text"`...), "text", text)
	return append(b, '}')
}

// appendInputSchema appends a tool's parameters schema as an Anthropic
// input_schema, which must say "type": the schema spliced in as it is when
// it has a type, with "type":"object" put first when it has none (an
// empty {} among them), and {"type":"object"} when there is no schema.
func appendInputSchema(b []byte, p jsonv.Value) []byte {
	switch {
	case p.Kind() != jsonv.Object:
		return append(b, `{"type":"object"}`...)
	case p.Get("type").Exists():
		return p.AppendRaw(b)
	}
	if p.Len() == 0 {
		return append(b, `{"type":"object"}`...)
	}
	raw := p.AppendRaw(nil)
	return append(append(b, `{"type":"object",`...), raw[1:]...) // the members and the closing brace
}

// appendInput appends a tool call's argument text as a tool_use input: the
// text itself when it is a JSON object (spliced, so numbers keep their
// literals, even integers beyond 2^53), else {}.
func appendInput(b []byte, args string) []byte {
	trimmed := strings.TrimSpace(args)
	if !strings.HasPrefix(trimmed, "{") || !json.Valid([]byte(trimmed)) {
		return append(b, "{}"...)
	}
	return append(b, trimmed...)
}

// blank reports whether text has nothing but white space: Anthropic
// refuses text blocks without non-whitespace text.
func blank(text string) bool { return strings.TrimSpace(text) == "" }
