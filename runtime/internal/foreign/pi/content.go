package pi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// callID is the logbook call id of a pi tool call id (a tool call's id, a
// tool result's toolCallId): the id itself when it is 1 to
// sdk.MaxCallIDBytes bytes long, else "call-h" and the first 16 hex digits
// of its SHA-256, so that a call and its result still pair and the store
// takes both.
func callID(id string) string {
	if id != "" && len(id) <= sdk.MaxCallIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call-h" + hex.EncodeToString(sum[:8])
}

// userBlocks converts a user-side content member (a string, or an array of
// text and image blocks) to logbook blocks. Blocks of other types, and
// images whose data is not base64, are left out (the raw record keeps
// them).
func userBlocks(raw json.RawMessage) []events.Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []events.Block{events.Text(s)}
	}
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return []events.Block{}
	}
	out := make([]events.Block, 0, len(bs))
	for _, b := range bs {
		switch b.Type {
		case "text":
			out = append(out, events.Text(b.Text))
		case "image":
			if data, err := base64.StdEncoding.DecodeString(b.Data); err == nil && b.MimeType != "" {
				out = append(out, events.Image(b.MimeType, data))
			}
		}
	}
	return out
}

// assistantBlocks converts an assistant message's content: text, thinking
// (as reasoning, with its signature) and tool calls (their arguments
// object as compact JSON text). It returns the calls too.
func assistantBlocks(raw json.RawMessage) ([]events.Block, []events.Call) {
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return []events.Block{}, nil
	}
	out := make([]events.Block, 0, len(bs))
	var calls []events.Call
	for _, b := range bs {
		switch b.Type {
		case "text":
			out = append(out, events.Text(b.Text))
		case "thinking":
			out = append(out, events.Reasoning(events.Thought{Text: b.Thinking, Signature: b.ThinkingSignature}))
		case "toolCall":
			if b.ID == "" || b.Name == "" {
				continue
			}
			c := events.Call{ID: callID(b.ID), Name: b.Name, Arguments: compact(b.Arguments)}
			calls = append(calls, c)
			out = append(out, events.ToolCallBlock(c))
		}
	}
	return out, calls
}

// compact returns a JSON value as compact text ("{}" when absent).
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// systemText renders a system message as one text: its content, then the
// values of its named sections in file order, separated by blank lines
// (empty parts left out).
func systemText(m *message) string {
	var parts []string
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		parts = append(parts, s)
	} else {
		var bs []block
		_ = json.Unmarshal(m.Content, &bs)
		var texts []string
		for _, b := range bs {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		parts = append(parts, strings.Join(texts, "\n"))
	}
	parts = append(parts, sectionValues(m.Sections)...)
	kept := parts[:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

// sectionValues returns the string values of a sections object in the
// order written (a null value removes a section: it has no text).
func sectionValues(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []string
	for d.More() {
		if _, err := d.Token(); err != nil { // the name
			return out
		}
		var v *string
		if err := d.Decode(&v); err != nil {
			return out
		}
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// bashText renders a bash execution the user ran ("!cmd") as the context
// text the model is given: the command, its output and how it ended.
func bashText(m *message) string {
	var b strings.Builder
	b.WriteString("$ ")
	b.WriteString(m.Command)
	b.WriteString("\n")
	b.WriteString(m.Output)
	switch {
	case m.Cancelled:
		b.WriteString("\n(cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		b.WriteString("\n(exit code " + strconv.FormatFloat(*m.ExitCode, 'f', -1, 64) + ")")
	}
	return b.String()
}

// count converts a usage number to a token count (0 when it is not a
// non-negative integer).
func count(f float64) int64 {
	if f < 0 || f > 1<<53-1 || f != float64(int64(f)) {
		return 0
	}
	return int64(f)
}
