package compactorsummary

import (
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// message is the part of a derived message (docs/format.md) the two modes read.
type message struct {
	role       string
	sourceKind string
	toolCallID string
	isError    bool
	blocks     []block
}

// block is one content block. Text and reasoning blocks set text; tool
// calls set id, name and args; tool-addition and tool-removal set name;
// images set mediaType. Other blocks (plugin:*) set only typ.
type block struct {
	typ       string
	text      string
	id        string
	name      string
	args      string
	mediaType string
}

// parseMessage reads one derived message. index is its position in the
// request, for errors: PAYLOAD_INVALID when raw is not a JSON object with
// a string role and a content array of objects with a string type.
func parseMessage(raw []byte, index int) (message, error) {
	doc, err := jsonv.Parse(raw, jsonv.Options{})
	if err != nil {
		return message{}, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "a message of the request is not valid JSON").WithIndex(index)
	}
	root := doc.Root()
	role, ok := root.Get("role").Str()
	content := root.Get("content")
	if !ok || content.Kind() != jsonv.Array {
		return message{}, payloadInvalid(index, "a message of the request needs a string role and a content array")
	}
	m := message{role: role}
	m.sourceKind, _ = root.Get("source").Get("kind").Str()
	m.toolCallID, _ = root.Get("toolCallId").Str()
	m.isError, _ = root.Get("isError").Bool()
	for i, v := range content.Elements() {
		typ, ok := v.Get("type").Str()
		if !ok {
			return message{}, payloadInvalid(index, "content block %d is not an object with a string type", i)
		}
		b := block{typ: typ}
		switch typ {
		case "text", "reasoning":
			b.text, _ = v.Get("text").Str()
		case "tool-call":
			b.id, _ = v.Get("id").Str()
			b.name, _ = v.Get("name").Str()
			b.args, _ = v.Get("arguments").Str()
		case "tool-addition", "tool-removal":
			b.name, _ = v.Get("toolName").Str()
		case "image":
			b.mediaType, _ = v.Get("mediaType").Str()
		}
		m.blocks = append(m.blocks, b)
	}
	return m, nil
}

// toolCalls returns the message's tool-call blocks.
func (m message) toolCalls() []block {
	var out []block
	for _, b := range m.blocks {
		if b.typ == "tool-call" {
			out = append(out, b)
		}
	}
	return out
}

// visibleText renders the blocks a reader of the conversation sees as
// text, joined by sep: text blocks as they are, images, tool changes and
// plugin blocks as a short bracketed note. Reasoning and tool calls are
// left out.
func (m message) visibleText(sep string) string {
	var parts []string
	for _, b := range m.blocks {
		switch {
		case b.typ == "text":
			parts = append(parts, b.text)
		case b.typ == "image":
			parts = append(parts, "[image "+b.mediaType+"]")
		case b.typ == "tool-addition":
			parts = append(parts, "[tool added: "+b.name+"]")
		case b.typ == "tool-removal":
			parts = append(parts, "[tool removed: "+b.name+"]")
		case strings.HasPrefix(b.typ, "plugin:"):
			parts = append(parts, "["+b.typ+" block]")
		}
	}
	return strings.Join(parts, sep)
}

func payloadInvalid(index int, format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodePayloadInvalid, op, format, args...).WithIndex(index)
}
