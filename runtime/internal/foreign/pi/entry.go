package pi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
)

// entryTypes are the line types pi writes (the header and every entry
// type of v1 to v3).
var entryTypes = map[string]bool{
	"session": true, "message": true, "model_change": true,
	"thinking_level_change": true, "compaction": true, "branch_summary": true,
	"context_edit": true, "custom_message": true, "custom": true,
	"label": true, "session_info": true, "usage": true,
}

// entry is one line of a pi file: the header or an entry. Members that
// only some types have are zero in the others.
type entry struct {
	Type string `json:"type"`
	// ID is the entry's id (v2, v3) or the header's session id; nil in a
	// v1 entry.
	ID *string `json:"id"`
	// ParentID is the parent entry's id: absent (v1), null (a root) or a
	// string.
	ParentID json.RawMessage `json:"parentId"`

	// header
	Version *int   `json:"version"`
	CWD     string `json:"cwd"`

	// message
	Message *message `json:"message"`

	// model_change, thinking_level_change
	Provider      string `json:"provider"`
	ModelID       string `json:"modelId"`
	ThinkingLevel string `json:"thinkingLevel"`

	// compaction, branch_summary
	Summary             string  `json:"summary"`
	FirstKeptEntryID    *string `json:"firstKeptEntryId"`
	FirstKeptEntryIndex *int    `json:"firstKeptEntryIndex"`
	TokensBefore        float64 `json:"tokensBefore"`

	// context_edit
	TargetID    string          `json:"targetId"`
	Replacement json.RawMessage `json:"replacement"`

	// custom_message
	Content json.RawMessage `json:"content"`
}

// message is the "message" member of a message entry.
type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or an array of blocks

	// assistant
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Usage        *usage `json:"usage"`
	StopReason   string `json:"stopReason"`
	ErrorMessage string `json:"errorMessage"`

	// toolResult
	ToolCallID string `json:"toolCallId"`
	IsError    bool   `json:"isError"`

	// system
	Sections     json.RawMessage `json:"sections"`
	ToolsAdded   []tool          `json:"toolsAdded"`
	ToolsRemoved []struct {
		Name string `json:"name"`
	} `json:"toolsRemoved"`

	// bashExecution
	Command            string   `json:"command"`
	Output             string   `json:"output"`
	ExitCode           *float64 `json:"exitCode"`
	Cancelled          bool     `json:"cancelled"`
	ExcludeFromContext bool     `json:"excludeFromContext"`
}

// usage is an assistant message's token usage.
type usage struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// tool is a tool definition of a system message.
type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// block is one content block of a message.
type block struct {
	Type              string          `json:"type"`
	Text              string          `json:"text"`
	Thinking          string          `json:"thinking"`
	ThinkingSignature string          `json:"thinkingSignature"`
	Data              string          `json:"data"`
	MimeType          string          `json:"mimeType"`
	ID                string          `json:"id"`
	Name              string          `json:"name"`
	Arguments         json.RawMessage `json:"arguments"`
}

// errNotPi marks a line that is JSON but not a pi line.
var errNotPi = errors.New("not a pi session line")

// parse reads one line. The error says why the line is damaged: it is
// torn, not UTF-8, not JSON or not pi's; a blank line is (nil, nil).
func parse(l foreign.Line) (*entry, error) {
	text := bytes.TrimRight(l.Text, "\r")
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	if !utf8.Valid(text) {
		return nil, errors.New("invalid UTF-8")
	}
	if !json.Valid(text) {
		if !l.Newline {
			return nil, errors.New("torn: the last line is incomplete JSON without a line feed")
		}
		return nil, errors.New("not JSON")
	}
	var e entry
	if err := json.Unmarshal(text, &e); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotPi, err)
	}
	if !entryTypes[e.Type] {
		return nil, fmt.Errorf("%w: type %q", errNotPi, e.Type)
	}
	if e.Type == "session" && e.ID == nil {
		return nil, fmt.Errorf("%w: a session header without an id", errNotPi)
	}
	if e.Type == "message" && e.Message == nil {
		return nil, fmt.Errorf("%w: a message entry without a message", errNotPi)
	}
	return &e, nil
}

// parent returns the entry's parent id: ok is false when the member is
// absent (v1), root true when it is null.
func (e *entry) parent() (id string, root, ok bool) {
	if e.ParentID == nil {
		return "", false, false
	}
	if string(e.ParentID) == "null" {
		return "", true, true
	}
	if err := json.Unmarshal(e.ParentID, &id); err != nil {
		return "", true, true // pi treats an unreadable parent as a root
	}
	return id, false, true
}
