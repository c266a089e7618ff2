package provider

import (
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// op names this package in its errors.
const op = "provider"

// message is the part of a derived message the conversions read.
type message struct {
	role       string
	toolCallID string
	isError    bool
	provider   string // source.provider of an assistant message
	blocks     []block
}

// block is one content block: its type, the parsed block and, for a
// tool-call block, the call id the provider is sent (pair renames a
// repeated one).
type block struct {
	typ    string
	v      jsonv.Value
	callID string
}

// str returns the block's string member name, "" when absent.
func (b block) str(name string) string {
	s, _ := b.v.Get(name).Str()
	return s
}

// parseMessages reads derived messages: PAYLOAD_INVALID, with the index of
// the message, when one is not a JSON object with a string role and a
// content array of objects with a string type.
func parseMessages(raws [][]byte) ([]message, error) {
	out := make([]message, 0, len(raws))
	for i, raw := range raws {
		doc, err := jsonv.Parse(raw, jsonv.Options{})
		if err != nil {
			return nil, sdk.Wrapf(sdk.CodePayloadInvalid, op, err, "message %d is not valid JSON", i).WithIndex(i)
		}
		root := doc.Root()
		role, ok := root.Get("role").Str()
		content := root.Get("content")
		if !ok || content.Kind() != jsonv.Array {
			return nil, payloadInvalid(i, "message %d needs a string role and a content array", i)
		}
		m := message{role: role}
		m.toolCallID, _ = root.Get("toolCallId").Str()
		m.isError, _ = root.Get("isError").Bool()
		m.provider, _ = root.Get("source").Get("provider").Str()
		for j, v := range content.Elements() {
			typ, ok := v.Get("type").Str()
			if !ok {
				return nil, payloadInvalid(i, "content block %d of message %d is not an object with a string type", j, i)
			}
			b := block{typ: typ, v: v}
			if typ == "tool-call" {
				b.callID = b.str("id")
			}
			m.blocks = append(m.blocks, b)
		}
		switch role {
		case "system", "developer", "user", "assistant":
		case "tool":
			if m.toolCallID == "" {
				return nil, payloadInvalid(i, "tool message %d has no toolCallId", i)
			}
		default:
			return nil, payloadInvalid(i, "message %d has role %q; derived messages are system, developer, user, assistant or tool", i, role)
		}
		out = append(out, m)
	}
	return out, nil
}

// conversation reads derived messages (parseMessages) and pairs their
// tool calls and results as the provider formats need them (pair),
// leaving out what pair lists.
func conversation(msgs [][]byte) ([]message, error) {
	ms, err := parseMessages(msgs)
	if err != nil {
		return nil, err
	}
	ms, _, err = pair(ms)
	return ms, err
}

// note is the text a block that a provider has no place for becomes: a
// short bracketed note, or "" for a block that is dropped (reasoning, tool
// calls, which have their own places).
func note(b block) string {
	switch {
	case b.typ == "image":
		return "[image " + b.str("mediaType") + "]"
	case b.typ == "tool-addition":
		return "[tool added: " + b.str("toolName") + "]"
	case b.typ == "tool-removal":
		return "[tool removed: " + b.str("toolName") + "]"
	case strings.HasPrefix(b.typ, "plugin:"):
		return "[" + b.typ + " block]"
	}
	return ""
}

// visibleText joins with sep the non-empty text blocks and the notes of
// the blocks other than reasoning and tool calls.
func (m message) visibleText(sep string) string {
	var parts []string
	for _, b := range m.blocks {
		if t := b.str("text"); b.typ == "text" && t != "" {
			parts = append(parts, t)
		} else if n := note(b); n != "" {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, sep)
}

// hasImage reports whether m holds an image a provider takes (isImage).
func (m message) hasImage() bool {
	return slices.ContainsFunc(m.blocks, block.isImage)
}

// isImage reports whether b is an image of a media type every provider
// format takes as an image (JPEG, PNG, GIF, WebP); another image becomes
// a note.
func (b block) isImage() bool {
	if b.typ != "image" {
		return false
	}
	switch b.str("mediaType") {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

func payloadInvalid(index int, format string, args ...any) *sdk.Error {
	return sdk.Errorf(sdk.CodePayloadInvalid, op, format, args...).WithIndex(index)
}

// appendStr appends ,"name":"s" (or "name":"s" right after an opening
// brace) to b.
func appendStr(b []byte, name, s string) []byte {
	b = member(b, name)
	return jsonv.AppendString(b, s)
}

// member appends the member name and its colon, with a comma unless b
// ends with an opening brace.
func member(b []byte, name string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' {
		b = append(b, ',')
	}
	b = jsonv.AppendString(b, name)
	return append(b, ':')
}
