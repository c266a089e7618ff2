package provider

import "github.com/seed-e5e476df/logbook/sdk/jsonv"

// OpenAIResponsesInput converts derived messages to the input items of an
// OpenAI Responses request, as a JSON array: system, developer and user
// messages become message items (a user message with images has
// input_text and input_image parts); an assistant message becomes a
// message item of its text, if it has any, followed by a function_call
// item for each tool call, the arguments string unchanged; a tool result
// becomes a function_call_output item. Reasoning is dropped: the API takes
// back only reasoning items it issued, by their rs_ id, and a reasoning
// block records no such id. Tool calls and results are paired as for the
// other formats (Omissions). A message that is not a derived message is
// PAYLOAD_INVALID with its index.
func OpenAIResponsesInput(msgs [][]byte) ([]byte, error) {
	ms, err := conversation(msgs)
	if err != nil {
		return nil, err
	}
	return appendResponsesInput(nil, ms), nil
}

// OpenAIResponsesRequest builds the body of an OpenAI Responses request
// from the folded request header and the derived messages: model, input
// (OpenAIResponsesInput), and, when the header has them, tools (function
// tools with their parameters schema spliced in verbatim, an empty object
// schema when a tool has none, and strict false), max_output_tokens,
// temperature and reasoning.effort. The Responses API has no stop
// sequences, so the header's stop is not sent. A missing header is
// REQUEST_HEADER_MISSING; one without config.model is PAYLOAD_INVALID.
func OpenAIResponsesRequest(header []byte, msgs [][]byte) ([]byte, error) {
	h, ms, err := parseRequest(header, msgs)
	if err != nil {
		return nil, err
	}
	b := appendStr([]byte{'{'}, "model", h.model)
	b = appendResponsesInput(member(b, "input"), ms)
	if h.tools.Len() > 0 {
		b = append(member(b, "tools"), '[')
		for i, t := range h.tools.Elements() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendToolName(append(b, `{"type":"function"`...), t)
			if p := t.Get("parameters"); p.Kind() == jsonv.Object {
				b = p.AppendRaw(member(b, "parameters"))
			} else {
				b = append(member(b, "parameters"), `{"type":"object","properties":{}}`...)
			}
			b = append(b, `,"strict":false}`...)
		}
		b = append(b, ']')
	}
	if h.maxTokens.Exists() {
		b = h.maxTokens.AppendRaw(member(b, "max_output_tokens"))
	}
	if h.temperature.Exists() {
		b = h.temperature.AppendRaw(member(b, "temperature"))
	}
	if h.effort != "" {
		b = append(appendStr(append(member(b, "reasoning"), '{'), "effort", h.effort), '}')
	}
	return append(b, '}'), nil
}

// appendResponsesInput appends the input items of ms as a JSON array.
func appendResponsesInput(b []byte, ms []message) []byte {
	b = append(b, '[')
	n := 0
	item := func() {
		if n > 0 {
			b = append(b, ',')
		}
		n++
	}
	for _, m := range ms {
		switch m.role {
		case "system", "developer", "assistant":
			if text := m.visibleText("\n\n"); text != "" {
				item()
				b = appendStr(appendStr(append(b, `{"type":"message"`...), "role", m.role), "content", text)
				b = append(b, '}')
			}
			for _, bl := range m.blocks {
				if bl.typ != "tool-call" {
					continue
				}
				item()
				b = appendStr(append(b, `{"type":"function_call"`...), "call_id", bl.callID)
				b = appendStr(b, "name", bl.str("name"))
				b = append(bl.v.Get("arguments").AppendRaw(member(b, "arguments")), '}')
			}
		case "user":
			content, ok := userContent(m, inputParts)
			if !ok {
				continue
			}
			item()
			b = append(append(append(b, `{"type":"message","role":"user","content":`...), content...), '}')
		default: // tool
			item()
			b = appendStr(append(b, `{"type":"function_call_output"`...), "call_id", m.toolCallID)
			b = append(appendStr(b, "output", toolText(m)), '}')
		}
	}
	return append(b, ']')
}
