package otlp

import (
	"encoding/json"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// message is the part of a logbook message (docs/format.md, "Messages and
// content blocks") the spans use.
type message struct {
	ID         string  `json:"id"`
	Role       string  `json:"role"`
	ToolCallID string  `json:"toolCallId"`
	Content    []block `json:"content"`
	Source     struct {
		Model string `json:"model"`
	} `json:"source"`
}

// block is one content block.
type block struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	MediaType string `json:"mediaType"`
	Data      string `json:"data"`
}

// usage is a TokenUsage.
type usage struct {
	Input      int64  `json:"input"`
	Output     int64  `json:"output"`
	CacheRead  *int64 `json:"cacheRead"`
	CacheWrite *int64 `json:"cacheWrite"`
}

func (b *Builder) assistant(e Event) {
	var d struct {
		Message     message `json:"message"`
		Usage       *usage  `json:"usage"`
		Interrupted bool    `json:"interrupted"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return
	}
	if b.step == nil { // a lenient log: a reply outside a step gets a chat of its own
		b.openChat(kindChat, e)
		defer b.stepEnd(e.Time, false)
	}
	c := b.step
	// The header in force for the call: a log's first header is written
	// inside its first step, after step/start.
	c.cfg, c.span.Name = b.cfg, chatName(b.cfg)
	if d.Usage != nil {
		c.hasUsage = true
		c.usage.Input += d.Usage.Input
		c.usage.Output += d.Usage.Output
		c.usage.CacheRead = addOpt(c.usage.CacheRead, d.Usage.CacheRead)
		c.usage.CacheWrite = addOpt(c.usage.CacheWrite, d.Usage.CacheWrite)
	}
	c.respModel, c.respID = d.Message.Source.Model, d.Message.ID
	reason := "stop"
	for _, bl := range d.Message.Content {
		if bl.Type != "tool-call" || bl.ID == "" {
			continue
		}
		reason = "tool_call"
		if _, ok := b.tools[bl.ID]; !ok {
			b.beginTool(e, bl.ID, bl.Name, bl.Arguments)
		}
	}
	if d.Interrupted {
		reason = "interrupted"
	}
	c.finish = append(c.finish, reason)
	if b.o.Content {
		b.detailsEvent(c.span, e.Time, d.Message, reason)
	}
}

// beginTool begins an execute_tool span for call id under the open chat,
// keyed on e (the first event that names the call).
func (b *Builder) beginTool(e Event, id, name, arguments string) *tracepb.Span {
	s := &tracepb.Span{
		TraceId:           b.trace,
		SpanId:            SpanID(b.id, kindTool, e.Seq, id),
		ParentSpanId:      b.parentOfTool(),
		Name:              "execute_tool " + name,
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: nanos(e.Time),
		EndTimeUnixNano:   nanos(e.Time),
	}
	s.Attributes = append(s.Attributes,
		i64(attrSeq, e.Seq),
		str(string(semconv.GenAIOperationNameKey), semconv.GenAIOperationNameExecuteTool.Value.AsString()),
		str(string(semconv.GenAIToolNameKey), name),
		str(string(semconv.GenAIToolCallIDKey), id),
		str(string(semconv.GenAIToolTypeKey), "function"))
	if b.o.Content {
		s.Attributes = append(s.Attributes, str(string(semconv.GenAIToolCallArgumentsKey), arguments))
	}
	b.tools[id] = s
	b.out = append(b.out, s)
	return s
}

func (b *Builder) toolCall(e Event) {
	var d struct {
		CallID    string `json:"callId"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	if json.Unmarshal(e.Data, &d) != nil || d.CallID == "" {
		return
	}
	if s, ok := b.tools[d.CallID]; ok {
		// Execution starts now; the model asked for it earlier.
		s.StartTimeUnixNano, s.EndTimeUnixNano = nanos(e.Time), nanos(e.Time)
		return
	}
	b.beginTool(e, d.CallID, d.Name, d.Arguments)
}

func (b *Builder) toolResult(e Event) {
	var d struct {
		Message message `json:"message"`
		Error   *struct {
			Name   string `json:"name"`
			Code   string `json:"code"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(e.Data, &d) != nil || d.Message.ToolCallID == "" {
		return
	}
	if b.o.Content {
		b.input = append(b.input, toolMessage(d.Message))
	}
	s, ok := b.tools[d.Message.ToolCallID]
	if !ok { // a result for a call no event of this turn named
		s = b.beginTool(e, d.Message.ToolCallID, "", "")
	}
	delete(b.tools, d.Message.ToolCallID)
	s.EndTimeUnixNano = nanos(e.Time)
	if b.o.Content {
		s.Attributes = append(s.Attributes, str(string(semconv.GenAIToolCallResultKey), text(d.Message.Content)))
	}
	if d.Error != nil {
		code := d.Error.Code
		if code == "" {
			code = semconv.ErrorTypeOther.Value.AsString()
		}
		msg := d.Error.Reason
		if msg == "" {
			msg = d.Error.Name
		}
		s.Attributes = append(s.Attributes, str(string(semconv.ErrorTypeKey), code))
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: msg}
	}
}

// message keeps, with Options.Content, a user prompt or the system prompt
// for the next chat's details event.
func (b *Builder) message(e Event) {
	if !b.o.Content {
		return
	}
	var m message
	if e.Type == "system/message" {
		var d struct {
			Message message `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return
		}
		b.system = append(b.system, textParts(d.Message.Content)...)
		return
	}
	if json.Unmarshal(e.Data, &m) != nil {
		return
	}
	b.input = append(b.input, mustJSON(map[string]any{"role": "user", "parts": parts(m.Content)}))
}

// detailsEvent adds the semconv gen_ai.client.inference.operation.details
// event to a chat span: the messages appended since the previous chat's
// output, this reply, and the system instructions appended since.
func (b *Builder) detailsEvent(s *tracepb.Span, ms int64, m message, finish string) {
	out := map[string]any{"role": "assistant", "parts": parts(m.Content), "finish_reason": finish}
	ev := &tracepb.Span_Event{TimeUnixNano: nanos(ms), Name: eventDetails}
	ev.Attributes = append(ev.Attributes,
		str(string(semconv.GenAIOperationNameKey), semconv.GenAIOperationNameChat.Value.AsString()),
		str(string(semconv.GenAIInputMessagesKey), string(mustJSON(rawList(b.input)))),
		str(string(semconv.GenAIOutputMessagesKey), string(mustJSON([]any{out}))))
	if len(b.system) > 0 {
		ev.Attributes = append(ev.Attributes, str(string(semconv.GenAISystemInstructionsKey), string(mustJSON(rawList(b.system)))))
	}
	s.Events = append(s.Events, ev)
	b.input, b.system = nil, nil
}

// toolMessage renders a tool result as a semconv input message.
func toolMessage(m message) json.RawMessage {
	return mustJSON(map[string]any{"role": "tool", "parts": []any{map[string]any{
		"type": "tool_call_response", "id": m.ToolCallID, "response": text(m.Content),
	}}})
}

// parts renders content blocks as semconv message parts.
func parts(bs []block) []any {
	out := []any{}
	for _, bl := range bs {
		switch bl.Type {
		case "text":
			out = append(out, map[string]any{"type": "text", "content": bl.Text})
		case "reasoning":
			out = append(out, map[string]any{"type": "reasoning", "content": bl.Text})
		case "tool-call":
			var args any = bl.Arguments
			if json.Valid([]byte(bl.Arguments)) {
				args = json.RawMessage(bl.Arguments)
			}
			out = append(out, map[string]any{"type": "tool_call", "id": bl.ID, "name": bl.Name, "arguments": args})
		case "image":
			out = append(out, map[string]any{"type": "blob", "modality": "image", "mime_type": bl.MediaType, "content": bl.Data})
		}
	}
	return out
}

// textParts renders the text blocks as semconv text parts.
func textParts(bs []block) []json.RawMessage {
	var out []json.RawMessage
	for _, bl := range bs {
		if bl.Type == "text" {
			out = append(out, mustJSON(map[string]any{"type": "text", "content": bl.Text}))
		}
	}
	return out
}

// text joins the text blocks.
func text(bs []block) string {
	var s string
	for _, bl := range bs {
		if bl.Type == "text" {
			s += bl.Text
		}
	}
	return s
}

func rawList(l []json.RawMessage) []json.RawMessage {
	if l == nil {
		return []json.RawMessage{}
	}
	return l
}

// mustJSON marshals values this package built from decoded JSON, which
// always marshal.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("otlp: marshal of decoded JSON failed: " + err.Error())
	}
	return b
}

func addOpt(a, b *int64) *int64 {
	if b == nil {
		return a
	}
	v := *b
	if a != nil {
		v += *a
	}
	return &v
}
