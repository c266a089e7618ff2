package codex

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// The damage reasons a Step may carry.
const (
	damageUTF8    = "invalid UTF-8"
	damageEmpty   = "empty line"
	damageTorn    = "torn: the last line has no line feed and is not complete JSON"
	damageNotJSON = "not JSON"
	damageForeign = "not a Codex rollout line"
)

// kind is what a rollout line holds.
type kind int

const (
	kindUnknown      kind = iota // a Codex envelope of a type this mapper does not know
	kindSessionMeta              // session_meta, or the bare meta line of an old rollout
	kindTurnContext              // turn_context
	kindResponseItem             // response_item, or a bare item of an old rollout
	kindEventMsg                 // event_msg
	kindCompacted                // compacted
	kindState                    // {"record_type":"state"} of an old rollout
)

// rolloutTypes are the envelope types Codex writes, by kind.
var rolloutTypes = map[string]kind{
	"session_meta":                       kindSessionMeta,
	"turn_context":                       kindTurnContext,
	"response_item":                      kindResponseItem,
	"event_msg":                          kindEventMsg,
	"compacted":                          kindCompacted,
	"world_state":                        kindUnknown,
	"inter_agent_communication":          kindUnknown,
	"inter_agent_communication_metadata": kindUnknown,
}

// legacyItems are the response item types an old rollout writes bare.
var legacyItems = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"web_search_call": true,
}

// line is one parsed rollout line.
type line struct {
	kind    kind
	payload json.RawMessage // the item itself for a bare line of an old rollout
	legacy  bool            // a line of an old rollout, without envelope
}

// parseLine reads one rollout line. A non-empty damage says why it is not
// one (the reasons above); newline is false for a last line without its
// line feed.
func parseLine(text []byte, newline bool) (line, string) {
	if !utf8.Valid(text) {
		return line{}, damageUTF8
	}
	trimmed := bytes.TrimSpace(text)
	if len(trimmed) == 0 {
		if !newline {
			return line{}, damageTorn
		}
		return line{}, damageEmpty
	}
	if !json.Valid(trimmed) {
		if !newline {
			return line{}, damageTorn
		}
		return line{}, damageNotJSON
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(trimmed, &m) != nil {
		return line{}, damageForeign // valid JSON, but not an object
	}
	typ, hasType := str(m["type"])
	if p, ok := m["payload"]; ok && hasType && m["timestamp"] != nil {
		k, known := rolloutTypes[typ]
		if !known {
			k = kindUnknown
		}
		return line{kind: k, payload: p}, ""
	}
	if _, ok := m["record_type"]; ok && !hasType {
		return line{kind: kindState, legacy: true}, ""
	}
	if hasType && legacyItems[typ] && m["payload"] == nil && (typ != "message" || m["role"] != nil) {
		return line{kind: kindResponseItem, payload: trimmed, legacy: true}, ""
	}
	if id, ok := str(m["id"]); ok && id != "" && !hasType && m["timestamp"] != nil {
		return line{kind: kindSessionMeta, payload: trimmed, legacy: true}, ""
	}
	return line{}, damageForeign
}

// str decodes a JSON string; ok is false for anything else.
func str(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
