package events

import (
	"encoding/base64"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Block is one content block of a message (docs/format.md, "Content
// blocks"). Make one with Text, Reasoning, ToolCallBlock, Image,
// ToolAddition, ToolRemoval or PluginBlock; which blocks a message may hold
// depends on its role, and Append rejects the others. The zero Block is no
// block, which Append rejects.
type Block struct {
	json     []byte
	addition bool // a tool-addition block (developer/message then needs headerSeq)
}

// Text is a text block.
func Text(text string) Block {
	b := strMember([]byte(`{"type":"text"`), "text", text)
	return Block{json: append(b, '}')}
}

// Thought is an assistant's reasoning, for Reasoning.
type Thought struct {
	Text      string // the reasoning text
	Signature string // the provider's signature of it; "" = none
}

// Reasoning is an assistant's reasoning block t.
func Reasoning(t Thought) Block {
	b := strMember([]byte(`{"type":"reasoning"`), "text", t.Text)
	if t.Signature != "" {
		b = strMember(b, "signature", t.Signature)
	}
	return Block{json: append(b, '}')}
}

// Call is one tool call of an assistant message: the tool-call block that
// asks for it (ToolCallBlock) and the tool/call that starts it (ToolCall)
// take the same value.
type Call struct {
	// ID is the call's id: non-empty and unique within the message; the
	// tool/call and tool/result of the call name it.
	ID        string
	Name      string // the tool
	Arguments string // the raw, unparsed argument text (usually a JSON object)
}

// ToolCallBlock is an assistant's request to make the tool call c.
func ToolCallBlock(c Call) Block {
	b := strMember([]byte(`{"type":"tool-call"`), "id", c.ID)
	b = strMember(b, "name", c.Name)
	b = strMember(b, "arguments", c.Arguments)
	return Block{json: append(b, '}')}
}

// Image is an image block of media type mediaType (e.g. "image/png");
// data is the image itself, which the block holds in standard base64.
func Image(mediaType string, data []byte) Block {
	b := strMember([]byte(`{"type":"image"`), "mediaType", mediaType)
	b = member(b, "data")
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	return Block{json: append(b, '"', '}')}
}

// ToolAddition is a developer message's block saying that tool name became
// available; its definition is in the request/header named by the
// message's headerSeq.
func ToolAddition(name string) Block {
	b := strMember([]byte(`{"type":"tool-addition"`), "toolName", name)
	return Block{json: append(b, '}'), addition: true}
}

// ToolRemoval is a developer message's block saying that tool name went
// away.
func ToolRemoval(name string) Block {
	b := strMember([]byte(`{"type":"tool-removal"`), "toolName", name)
	return Block{json: append(b, '}')}
}

// PluginBlock is the opaque block type "plugin:<name>" with the members of
// the JSON object members (nil for none) after type.
func PluginBlock(name string, members json.RawMessage) Block {
	b := strMember([]byte{'{'}, "type", "plugin:"+name)
	b = extra(b, members)
	return Block{json: append(b, '}')}
}

// content appends the content array of blocks.
func content(b []byte, blocks []Block) []byte {
	b = append(member(b, "content"), '[')
	for i, bl := range blocks {
		if i > 0 {
			b = append(b, ',')
		}
		if bl.json == nil {
			b = append(b, "null"...) // the zero Block: Append says a block is an object
			continue
		}
		b = append(b, bl.json...)
	}
	return append(b, ']')
}

// message appends the message object {id, role, content, source}; source
// is the source object, already encoded.
func message(b []byte, id, role string, blocks []Block, source []byte) []byte {
	b = strMember(append(b, '{'), "id", id)
	b = strMember(b, "role", role)
	b = content(b, blocks)
	b = append(member(b, "source"), source...)
	return append(b, '}')
}

// sourceKind is the source object {"kind":kind}.
func sourceKind(kind string) []byte {
	return append(strMember([]byte{'{'}, "kind", kind), '}')
}

// surface makes the input of a surface event appended to the surface.
func surface(typ string, data []byte) Input {
	return Input{Type: typ, Data: data, SurfaceOp: Append()}
}

// TextMessage is a message of one text block, for System, UserText and
// AssistantText.
type TextMessage struct {
	ID   string // the message id
	Text string // the text of its one block
}

// System is system/message: the system prompt, as the message m. The
// first system/message on the surface is the rendered system prompt the
// model sees first.
func System(turn, step int, m TextMessage) Input {
	b := member(turnStep(turn, step), "message")
	b = message(b, m.ID, "system", []Block{Text(m.Text)}, sourceKind("system-prompt"))
	return surface(TypeSystemMessage, append(b, '}'))
}

// Developer is developer/message: message id tells the model that tools
// became available (ToolAddition blocks) or went away (ToolRemoval
// blocks), optionally with Text blocks; its source kind is "tool-change".
// When content adds a tool, headerSeq is the seq of the earlier
// request/header that declares each added tool; otherwise it is not
// written (pass 0).
func Developer(turn, step int, id string, headerSeq sdk.Seq, content ...Block) Input {
	b := member(turnStep(turn, step), "message")
	b = message(b, id, "developer", content, sourceKind("tool-change"))
	for _, bl := range content {
		if bl.addition {
			b = numMember(b, "headerSeq", int64(headerSeq))
			break
		}
	}
	return surface(TypeDeveloperMessage, append(b, '}'))
}

// UserMessage is a user message, for User.
type UserMessage struct {
	ID string // the message id
	// Kind is the message's source kind, which says what it is: "prompt"
	// for what the user asked, or another kind for context the harness
	// injects (e.g. "context"). A compaction writes its checkpoints itself.
	Kind    string
	Content []Block
}

// User is user/message: the user message m.
func User(m UserMessage) Input {
	return surface(TypeUserMessage, message(nil, m.ID, "user", m.Content, sourceKind(m.Kind)))
}

// UserText is user/message: the user's prompt as the message m (source
// kind "prompt").
func UserText(m TextMessage) Input {
	return User(UserMessage{ID: m.ID, Kind: "prompt", Content: []Block{Text(m.Text)}})
}

// Model names the model a reply came from: the source of an assistant
// message and the target of request/context. Provider and Name must be
// non-empty.
type Model struct {
	Provider string // e.g. "anthropic"
	Name     string // e.g. "claude-sonnet-4"
}

// source is the assistant source {"kind":"model","provider":…,"model":…}.
func (m Model) source() []byte {
	b := strMember([]byte(`{"kind":"model"`), "provider", m.Provider)
	b = strMember(b, "model", m.Name)
	return append(b, '}')
}

// Usage is the token usage of a model call (docs/format.md, TokenUsage).
// CacheRead and CacheWrite are written only when not 0.
type Usage struct {
	Input, Output         int64
	CacheRead, CacheWrite int64
}

func (u Usage) append(b []byte) []byte {
	b = numMember(append(b, '{'), "input", u.Input)
	b = numMember(b, "output", u.Output)
	if u.CacheRead != 0 {
		b = numMember(b, "cacheRead", u.CacheRead)
	}
	if u.CacheWrite != 0 {
		b = numMember(b, "cacheWrite", u.CacheWrite)
	}
	return append(b, '}')
}

// Reply is what a model call produced, for Assistant: the assistant
// message and the facts stored beside it.
type Reply struct {
	ID      string // the message id
	Model   Model  // the message's source
	Content []Block
	// Stream is the provider's stream records, kept verbatim (each one JSON
	// value; {dt, …chunk} with dt the milliseconds since the previous
	// record is encouraged). nil is written as the empty stream.
	Stream      []json.RawMessage
	Usage       *Usage // nil = absent
	Interrupted bool   // the stream was cut short; written only when true
}

// Assistant is assistant/message: the model's reply r in step of turn.
func Assistant(turn, step int, r Reply) Input {
	b := member(turnStep(turn, step), "message")
	b = message(b, r.ID, "assistant", r.Content, r.Model.source())
	b = values(member(b, "stream"), r.Stream)
	if r.Usage != nil {
		b = r.Usage.append(member(b, "usage"))
	}
	if r.Interrupted {
		b = append(member(b, "interrupted"), "true"...)
	}
	return surface(TypeAssistantMessage, append(b, '}'))
}

// AssistantText is assistant/message: the reply m of model, with an empty
// stream and no usage.
func AssistantText(turn, step int, model Model, m TextMessage) Input {
	return Assistant(turn, step, Reply{ID: m.ID, Model: model, Content: []Block{Text(m.Text)}})
}

// AssistantAttempt is assistant/attempt: a model call in step of turn that
// settled without a message on the surface (it failed, was retried or
// cancelled, or its stream broke), with the stream records it produced.
func AssistantAttempt(turn, step int, stream ...json.RawMessage) Input {
	b := values(member(turnStep(turn, step), "stream"), stream)
	return Input{Type: TypeAssistantAttempt, Data: append(b, '}')}
}
