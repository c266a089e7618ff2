package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
)

// record is the part of a Claude Code line the mapping reads; the rest stays
// in the raw record only.
type record struct {
	Type              string       `json:"type"`
	Subtype           string       `json:"subtype"`
	UUID              string       `json:"uuid"`
	ParentUUID        *string      `json:"parentUuid"`
	SessionID         string       `json:"sessionId"`
	Version           string       `json:"version"`
	CWD               string       `json:"cwd"`
	IsSidechain       bool         `json:"isSidechain"`
	AgentID           string       `json:"agentId"`
	IsMeta            bool         `json:"isMeta"`
	IsCompactSummary  bool         `json:"isCompactSummary"`
	IsAPIErrorMessage bool         `json:"isApiErrorMessage"`
	RequestID         string       `json:"requestId"`
	Message           *apiMessage  `json:"message"`
	CompactMetadata   *compactMeta `json:"compactMetadata"`
}

// apiMessage is the Anthropic Messages API message a user or assistant
// line carries.
type apiMessage struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"` // a string or an array of blocks
	Usage   *apiUsage       `json:"usage"`
}

// apiUsage is the token usage of an API message.
type apiUsage struct {
	Input      json.Number `json:"input_tokens"`
	Output     json.Number `json:"output_tokens"`
	CacheRead  json.Number `json:"cache_read_input_tokens"`
	CacheWrite json.Number `json:"cache_creation_input_tokens"`
}

// compactMeta is a compact_boundary line's compactMetadata.
type compactMeta struct {
	PreTokens json.Number `json:"preTokens"`
}

// apiBlock is one content block of an API message; raw is the block as the
// line holds it.
type apiBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	raw json.RawMessage
}

// parse reads one line. damage is "" for a Claude Code line and otherwise
// says why the line is not one.
func parse(l foreign.Line) (r record, damage string) {
	text := bytes.TrimSuffix(l.Text, []byte{'\r'})
	switch {
	case !utf8.Valid(text):
		return r, "invalid UTF-8"
	case !json.Valid(text):
		if !l.Newline {
			return r, "torn: the last line ends without a line feed and is not complete JSON"
		}
		return r, "not JSON"
	case !claims(text):
		return r, "not a Claude Code line"
	}
	if err := json.Unmarshal(text, &r); err != nil {
		return record{}, fmt.Sprintf("malformed Claude Code line: %v", err)
	}
	return r, ""
}

// claims reports whether valid JSON text has the shape of a Claude Code
// line: an object with a string type and a member only Claude Code writes.
func claims(text []byte) bool {
	var probe struct {
		Type       *string          `json:"type"`
		SessionID  *json.RawMessage `json:"sessionId"`
		ParentUUID *json.RawMessage `json:"parentUuid"`
		LeafUUID   *json.RawMessage `json:"leafUuid"`
		MessageID  *json.RawMessage `json:"messageId"`
	}
	if t := bytes.TrimLeft(text, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return false
	}
	if json.Unmarshal(text, &probe) != nil || probe.Type == nil {
		return false
	}
	switch {
	case probe.SessionID != nil || probe.ParentUUID != nil:
		return true
	case *probe.Type == "summary":
		return probe.LeafUUID != nil
	case *probe.Type == "file-history-snapshot":
		return probe.MessageID != nil
	}
	return false
}

// blocks reads a content member: a string is one text block, an array its
// blocks (an element that is not a block object becomes a block of type
// ""), anything else none.
func blocks(content json.RawMessage) []apiBlock {
	c := bytes.TrimSpace(content)
	if len(c) == 0 {
		return nil
	}
	switch c[0] {
	case '"':
		var s string
		if json.Unmarshal(c, &s) != nil {
			return nil
		}
		return []apiBlock{{Type: "text", Text: s, raw: c}}
	case '[':
		var raws []json.RawMessage
		if json.Unmarshal(c, &raws) != nil {
			return nil
		}
		out := make([]apiBlock, 0, len(raws))
		for _, raw := range raws {
			var b apiBlock
			if json.Unmarshal(raw, &b) != nil {
				b = apiBlock{}
			}
			b.raw = raw
			out = append(out, b)
		}
		return out
	}
	return nil
}
