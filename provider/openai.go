package provider

import (
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// OpenAIMessages converts derived messages (each a canonical message JSON,
// as session.MessageList holds them) to the messages array of an OpenAI
// Chat Completions request, as JSON. System and developer messages keep
// their roles; user messages carry their text, and their images as
// image_url parts; assistant messages carry their text and tool_calls
// (reasoning is dropped); tool results become tool messages with their
// tool_call_id. docs/providers.md lists what has no OpenAI form. A message
// that is not a derived message is PAYLOAD_INVALID with its index.
func OpenAIMessages(msgs [][]byte) ([]byte, error) {
	ms, err := conversation(msgs)
	if err != nil {
		return nil, err
	}
	return appendOpenAIMessages(nil, ms), nil
}

// OpenAIRequest builds the body of an OpenAI Chat Completions request from
// the folded request header (its canonical EpochHeader JSON) and the
// derived messages: model, messages, and, when the header has them, tools
// (as functions with their parameters schema spliced in verbatim),
// max_completion_tokens, temperature, stop and reasoning_effort. A missing
// header is REQUEST_HEADER_MISSING; one without config.model is
// PAYLOAD_INVALID.
func OpenAIRequest(header []byte, msgs [][]byte) ([]byte, error) {
	h, ms, err := parseRequest(header, msgs)
	if err != nil {
		return nil, err
	}
	b := appendStr([]byte{'{'}, "model", h.model)
	b = appendOpenAIMessages(member(b, "messages"), ms)
	if h.tools.Len() > 0 {
		b = appendOpenAITools(member(b, "tools"), h.tools)
	}
	if h.maxTokens.Exists() {
		b = h.maxTokens.AppendRaw(member(b, "max_completion_tokens"))
	}
	if h.temperature.Exists() {
		b = h.temperature.AppendRaw(member(b, "temperature"))
	}
	if h.stop.Exists() {
		b = h.stop.AppendRaw(member(b, "stop"))
	}
	if h.effort != "" {
		b = appendStr(b, "reasoning_effort", h.effort)
	}
	return append(b, '}'), nil
}

// OpenAITools converts a JSON array of tool schemas (the tools of a
// request header, docs/format.md) to the tools array of an OpenAI Chat
// Completions request: function tools with their name, description and
// parameters schema spliced in verbatim. Empty input is an empty array;
// anything but an array of objects is PAYLOAD_INVALID.
func OpenAITools(tools []byte) ([]byte, error) {
	if len(tools) == 0 {
		return []byte("[]"), nil
	}
	doc, err := jsonv.Parse(tools, jsonv.Options{})
	if err != nil {
		return nil, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "the tools are not valid JSON")
	}
	root := doc.Root()
	if root.Kind() != jsonv.Array {
		return nil, sdk.Errorf(sdk.CodePayloadInvalid, op, "the tools are not an array")
	}
	for i, t := range root.Elements() {
		if t.Kind() != jsonv.Object {
			return nil, sdk.Errorf(sdk.CodePayloadInvalid, op, "tool %d is not an object", i)
		}
	}
	return appendOpenAITools(nil, root), nil
}

// appendOpenAITools appends the tool schemas of the array tools as
// OpenAI function tools.
func appendOpenAITools(b []byte, tools jsonv.Value) []byte {
	b = append(b, '[')
	for i, t := range tools.Elements() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendToolName(append(b, `{"type":"function","function":{`...), t)
		if p := t.Get("parameters"); p.Kind() == jsonv.Object {
			b = p.AppendRaw(member(b, "parameters"))
		}
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendOpenAIMessages appends the chat messages of ms as a JSON array.
func appendOpenAIMessages(b []byte, ms []message) []byte {
	b = append(b, '[')
	n := 0
	for _, m := range ms {
		start := len(b)
		if n > 0 {
			b = append(b, ',')
		}
		var ok bool
		b, ok = appendOpenAIMessage(b, m)
		if !ok {
			b = b[:start]
			continue
		}
		n++
	}
	return append(b, ']')
}

// appendOpenAIMessage appends one chat message; ok is false when m has
// nothing OpenAI can be sent (an assistant message of reasoning alone, a
// system, developer or user message without text or image).
func appendOpenAIMessage(b []byte, m message) (_ []byte, ok bool) {
	switch m.role {
	case "system", "developer":
		text := m.visibleText("\n\n")
		if text == "" {
			return b, false
		}
		b = appendStr(append(b, '{'), "role", m.role)
		return append(appendStr(b, "content", text), '}'), true
	case "user":
		content, ok := userContent(m, chatParts)
		if !ok {
			return b, false
		}
		b = appendStr(append(b, '{'), "role", "user")
		return append(append(member(b, "content"), content...), '}'), true
	case "assistant":
		text := m.visibleText("\n\n")
		calls := 0
		for _, bl := range m.blocks {
			if bl.typ == "tool-call" {
				calls++
			}
		}
		if text == "" && calls == 0 {
			return b, false
		}
		b = appendStr(append(b, '{'), "role", "assistant")
		if text != "" {
			b = appendStr(b, "content", text)
		}
		if calls > 0 {
			b = append(member(b, "tool_calls"), '[')
			i := 0
			for _, bl := range m.blocks {
				if bl.typ != "tool-call" {
					continue
				}
				if i > 0 {
					b = append(b, ',')
				}
				i++
				b = appendStr(append(b, '{'), "id", bl.callID)
				b = append(b, `,"type":"function","function":{`...)
				b = appendStr(b, "name", bl.str("name"))
				b = bl.v.Get("arguments").AppendRaw(member(b, "arguments"))
				b = append(b, "}}"...)
			}
			b = append(b, ']')
		}
		return append(b, '}'), true
	default: // tool
		b = appendStr(append(b, '{'), "role", "tool")
		b = appendStr(b, "tool_call_id", m.toolCallID)
		return append(appendStr(b, "content", toolText(m)), '}'), true
	}
}

// toolText is the text of a tool result for the OpenAI formats, which take
// text only and have no error flag: the text blocks and notes one per
// line, after "[tool error] " when the result is an error, and
// "(no output)" when there is nothing.
func toolText(m message) string {
	text := m.visibleText("\n")
	if m.isError {
		text = "[tool error] " + text
	}
	if text == "" {
		text = "(no output)"
	}
	return text
}

// dataURL is the data: URL of an image block.
func dataURL(bl block) string {
	return "data:" + bl.str("mediaType") + ";base64," + bl.str("data")
}

// userParts names the parts of a user message's content in one OpenAI
// format.
type userParts struct {
	text  string                  // the type of a text part
	image func(url string) []byte // an image part of a data URL, without its closing brace
}

// chatParts are Chat Completions' parts; inputParts the Responses API's.
var (
	chatParts = userParts{"text", func(url string) []byte {
		return append(appendStr([]byte(`{"type":"image_url","image_url":{`), "url", url), '}')
	}}
	inputParts = userParts{"input_text", func(url string) []byte {
		return appendStr([]byte(`{"type":"input_image","detail":"auto"`), "image_url", url)
	}}
)

// userContent returns a user message's content in an OpenAI format: its
// text as a string, or, when it holds an image a provider takes, an array
// of parts (text and notes as text parts, images with a data URL); ok is
// false when it has neither text nor image.
func userContent(m message, p userParts) (_ []byte, ok bool) {
	if !m.hasImage() {
		text := m.visibleText("\n\n")
		return jsonv.AppendString(nil, text), text != ""
	}
	b := []byte{'['}
	for _, bl := range m.blocks {
		var part []byte
		switch {
		case bl.typ == "text" && bl.str("text") != "":
			part = appendStr([]byte(`{"type":"`+p.text+`"`), "text", bl.str("text"))
		case bl.isImage():
			part = p.image(dataURL(bl))
		case note(bl) != "":
			part = appendStr([]byte(`{"type":"`+p.text+`"`), "text", note(bl))
		default:
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(b, part...), '}')
	}
	return append(b, ']'), true
}
