package codex

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
)

// sessionMeta is the payload of session_meta (and an old rollout's bare
// meta line) as far as the mapping reads it.
type sessionMeta struct {
	ID               string          `json:"id"`
	CWD              string          `json:"cwd"`
	CLIVersion       string          `json:"cli_version"`
	ModelProvider    string          `json:"model_provider"`
	BaseInstructions json.RawMessage `json:"base_instructions"` // {"text":…} or a string
	Instructions     *string         `json:"instructions"`      // before base_instructions
	ParentThreadID   string          `json:"parent_thread_id"`
	// Source is where the session came from: a string ("cli", "exec", …)
	// or an object; a spawned subagent's is
	// {"subagent":{"thread_spawn":{"parent_thread_id":…}}}.
	Source json.RawMessage `json:"source"`
}

// parentThread is the id of the thread that spawned this session, or ""
// for a session no other started. Codex writes it in source (every version
// with subagents) and, in later versions, also as parent_thread_id.
func (m sessionMeta) parentThread() string {
	if m.ParentThreadID != "" {
		return m.ParentThreadID
	}
	var src struct {
		Subagent struct {
			ThreadSpawn struct {
				ParentThreadID string `json:"parent_thread_id"`
			} `json:"thread_spawn"`
		} `json:"subagent"`
	}
	if len(m.Source) == 0 || m.Source[0] != '{' || json.Unmarshal(m.Source, &src) != nil {
		return ""
	}
	return src.Subagent.ThreadSpawn.ParentThreadID
}

// systemPrompt is the session's base instructions, or "".
func (m sessionMeta) systemPrompt() string {
	if s, ok := str(m.BaseInstructions); ok {
		return s
	}
	var bi struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.BaseInstructions, &bi) == nil && bi.Text != "" {
		return bi.Text
	}
	if m.Instructions != nil {
		return *m.Instructions
	}
	return ""
}

// turnContext is the payload of turn_context as far as the header reads it.
type turnContext struct {
	Model  string  `json:"model"`
	Effort *string `json:"effort"`
	// CollaborationMode, in later versions, holds the effort the turn runs
	// with in settings.reasoning_effort (effort may then be absent).
	CollaborationMode *struct {
		Settings struct {
			ReasoningEffort *string `json:"reasoning_effort"`
		} `json:"settings"`
	} `json:"collaboration_mode"`
	Summary        json.RawMessage `json:"summary"`
	ApprovalPolicy json.RawMessage `json:"approval_policy"`
	SandboxPolicy  json.RawMessage `json:"sandbox_policy"`
}

// effort is the reasoning effort the turn runs with: effort, else the
// collaboration mode's, else nil.
func (tc turnContext) effort() *string {
	if tc.Effort == nil && tc.CollaborationMode != nil {
		return tc.CollaborationMode.Settings.ReasoningEffort
	}
	return tc.Effort
}

// part is one content part of a message, a reasoning summary or a tool
// output.
type part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL string `json:"image_url"`
}

// item is a response item (the payload of response_item).
type item struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // message parts; reasoning text parts
	Summary   []part          `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
	Status    string          `json:"status"`
}

// parts decodes a content array; nil when it is not one.
func parts(raw json.RawMessage) []part {
	var ps []part
	if json.Unmarshal(raw, &ps) != nil {
		return nil
	}
	return ps
}

// blocks converts message or output parts to logbook blocks: text parts
// (input_text, output_text, refusal, text) to text blocks, an input_image
// with a base64 data URL to an image block, one with any other URL to a
// text block naming it.
func blocks(ps []part) []events.Block {
	out := make([]events.Block, 0, len(ps))
	for _, p := range ps {
		switch p.Type {
		case "input_text", "output_text", "text", "refusal":
			out = append(out, events.Text(p.Text))
		case "input_image":
			if mt, data, ok := dataURL(p.ImageURL); ok {
				out = append(out, events.Image(mt, data))
			} else {
				out = append(out, events.Text("[image "+p.ImageURL+"]"))
			}
		}
	}
	return out
}

// dataURL decodes a data:<media type>;base64,<data> URL.
func dataURL(u string) (mediaType string, data []byte, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", nil, false
	}
	meta, enc, found := strings.Cut(rest, ",")
	mediaType, isB64 := strings.CutSuffix(meta, ";base64")
	if !found || !isB64 || mediaType == "" {
		return "", nil, false
	}
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", nil, false
	}
	return mediaType, data, true
}

// text joins the text of parts.
func text(ps []part) string {
	var b strings.Builder
	for _, p := range ps {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// output converts a tool output: a string (the usual form), an array of
// content parts, or the older object {"content", "success"}. failed is
// true only when the output says success false.
func output(raw json.RawMessage) (content []events.Block, failed bool) {
	if s, ok := str(raw); ok {
		return []events.Block{events.Text(s)}, false
	}
	if ps := parts(raw); ps != nil {
		return blocks(ps), false
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
		Success *bool           `json:"success"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		failed = obj.Success != nil && !*obj.Success
		if s, ok := str(obj.Content); ok {
			return []events.Block{events.Text(s)}, failed
		}
		return blocks(parts(obj.Content)), failed
	}
	return []events.Block{events.Text(string(raw))}, false
}

// injectedPrefixes start the user messages Codex writes itself (the
// environment, AGENTS.md and user instructions, a shell command the user
// ran with !, the notice of an aborted turn): context, not prompts.
var injectedPrefixes = []string{
	"<environment_context>",
	"<user_instructions>",
	"# AGENTS.md instructions for ",
	"<user_shell_command>",
	"<turn_aborted>",
}

// injected reports whether user message parts are context Codex injected.
func injected(ps []part) bool {
	for _, p := range ps {
		if p.Type != "input_text" {
			continue
		}
		t := strings.TrimSpace(p.Text)
		for _, pre := range injectedPrefixes {
			if strings.HasPrefix(t, pre) {
				return true
			}
		}
		return false
	}
	return false
}

// compactedItem is the payload of compacted.
type compactedItem struct {
	Message            string `json:"message"`
	ReplacementHistory []item `json:"replacement_history"`
}

// summary is the checkpoint text of a compaction: the text of each message
// of the replacement history when there is one, else the summary message.
func (c compactedItem) summary() []string {
	var out []string
	for _, it := range c.ReplacementHistory {
		if it.Type != "message" {
			continue
		}
		if t := text(parts(it.Content)); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 && c.Message != "" {
		out = append(out, c.Message)
	}
	return out
}

// eventMsg is the payload of event_msg as far as the mapping reads it.
type eventMsg struct {
	Type string `json:"type"`
	Info *struct {
		Last *struct {
			Input  int64 `json:"input_tokens"`
			Cached int64 `json:"cached_input_tokens"`
			Output int64 `json:"output_tokens"`
		} `json:"last_token_usage"`
	} `json:"info"`
}
