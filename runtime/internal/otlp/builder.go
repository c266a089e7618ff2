package otlp

import (
	"encoding/json"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Event is one logbook event as the Builder reads it: its seq, its time in
// Unix milliseconds, its type and its data (the JSON payload of
// docs/format.md).
type Event struct {
	Seq  int64
	Time int64
	Type string
	Data []byte
}

// Options say what a Builder puts in its spans beyond the structure.
type Options struct {
	// Content adds message content: a gen_ai.client.inference.operation.details
	// span event on every chat span (input and output messages, system
	// instructions) and the arguments and result of every tool call.
	// Default false: no message text leaves the log.
	Content bool
}

// Builder folds a session's events, in seq order, into spans. It is not
// safe for concurrent use. Events it cannot read (a payload that is not
// the shape docs/format.md gives, a lenient log's loose events) are folded
// as far as they make sense and never make it fail.
type Builder struct {
	id    string
	o     Options
	trace []byte

	// seen is true once an event was added; first and last are the times
	// (ms) of the first and the last event added.
	seen        bool
	first, last int64

	// cfg is the request header in force.
	cfg config

	// turn and step are the open turn and step, nil when none is open;
	// tools are the tool spans not yet ended, by call id.
	turn  *tracepb.Span
	step  *chat
	tools map[string]*tracepb.Span

	// out holds the spans begun since the last hand-out, in the order
	// they began; chats the chat states among them.
	out   []*tracepb.Span
	chats []*chat

	// input and system are, with Options.Content, the messages appended
	// since the last chat's output (semconv message JSON).
	input, system []json.RawMessage
}

// config is what the builder keeps of a request header.
type config struct {
	provider, model string
	maxTokens       *int64
	temperature     *float64
}

// chat is a step's span and what its attributes are made of when it is
// handed out.
type chat struct {
	span       *tracepb.Span
	cfg        config
	usage      usage
	hasUsage   bool
	finish     []string
	respModel  string
	respID     string
	lastOfTurn bool
}

// NewBuilder returns a Builder for the session id.
func NewBuilder(sessionID string, o Options) *Builder {
	return &Builder{id: sessionID, o: o, trace: TraceID(sessionID), tools: map[string]*tracepb.Span{}}
}

// Add folds e. When e ends a turn, Add returns the spans begun since the
// previous hand-out, the turn's own included, all ended; otherwise nil.
func (b *Builder) Add(e Event) []*tracepb.Span {
	if !b.seen {
		b.seen, b.first = true, e.Time
	}
	b.last = e.Time
	switch e.Type {
	case "request/header":
		b.header(e)
	case "turn/start":
		b.turnStart(e)
	case "turn/end":
		return b.turnEnd(e)
	case "step/start":
		b.stepStart(e)
	case "step/end":
		b.stepEnd(e.Time, false)
	case "assistant/message":
		b.assistant(e)
	case "assistant/attempt":
		if b.step != nil {
			b.step.finish = append(b.step.finish, "error")
		}
	case "tool/call":
		b.toolCall(e)
	case "tool/result":
		b.toolResult(e)
	case "user/message", "system/message":
		b.message(e)
	}
	return nil
}

// Finish ends what is still open at the last event's time (status unset,
// logbook.open = true) and returns the spans begun since the last
// hand-out, then the session's root span. It returns nil for a builder
// that saw no event. The Builder may not be used after Finish.
func (b *Builder) Finish() []*tracepb.Span {
	if !b.seen {
		return nil
	}
	b.closeOpen(b.last)
	return append(b.drain(), b.Root())
}

// Root returns the session's root span as the events so far make it: from
// the first event's time to the last's; nil before any event. A live push
// sends it when the session is released.
func (b *Builder) Root() *tracepb.Span {
	if !b.seen {
		return nil
	}
	s := &tracepb.Span{
		TraceId:           b.trace,
		SpanId:            SpanID(b.id, kindSession, 0, ""),
		Name:              "session " + b.id,
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: nanos(b.first),
		EndTimeUnixNano:   nanos(b.last),
	}
	s.Attributes = append(s.Attributes,
		str(string(semconv.GenAIConversationIDKey), b.id),
		str(attrSession, b.id))
	return s
}

func (b *Builder) header(e Event) {
	var d struct {
		Header struct {
			Config struct {
				Provider    string   `json:"provider"`
				Model       string   `json:"model"`
				MaxTokens   *int64   `json:"maxTokens"`
				Temperature *float64 `json:"temperature"`
			} `json:"config"`
		} `json:"header"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return
	}
	c := d.Header.Config
	b.cfg = config{provider: c.Provider, model: c.Model, maxTokens: c.MaxTokens, temperature: c.Temperature}
}

func (b *Builder) turnStart(e Event) {
	if b.turn != nil { // a lenient log: a turn/start inside a turn
		b.closeOpen(e.Time)
	}
	var d struct {
		Turn int64 `json:"turn"`
	}
	_ = json.Unmarshal(e.Data, &d)
	s := b.begin(kindTurn, e, "invoke_agent", tracepb.Span_SPAN_KIND_INTERNAL, b.rootID())
	s.Attributes = append(s.Attributes,
		str(string(semconv.GenAIOperationNameKey), semconv.GenAIOperationNameInvokeAgent.Value.AsString()),
		str(string(semconv.GenAIConversationIDKey), b.id),
		i64(attrTurn, d.Turn))
	b.turn = s
}

func (b *Builder) turnEnd(e Event) []*tracepb.Span {
	var d struct {
		Reason struct {
			Kind  string `json:"kind"`
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		} `json:"reason"`
	}
	_ = json.Unmarshal(e.Data, &d)
	if b.step != nil {
		b.stepEnd(e.Time, false)
	}
	b.endTools(e.Time)
	if b.turn == nil {
		return nil // a turn/end without its start: nothing to end
	}
	if n := len(b.chats); n > 0 && d.Reason.Kind == "max-tokens" {
		b.chats[n-1].lastOfTurn = true
	}
	t := b.turn
	b.endTurn(e.Time)
	t.Attributes = append(t.Attributes, str(attrEndReason, d.Reason.Kind))
	switch d.Reason.Kind {
	case "error":
		code := d.Reason.Error.Code
		if code == "" {
			code = semconv.ErrorTypeOther.Value.AsString()
		}
		t.Attributes = append(t.Attributes, str(string(semconv.ErrorTypeKey), code))
		t.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: d.Reason.Error.Message}
	case "interrupted":
		t.Attributes = append(t.Attributes, str(string(semconv.ErrorTypeKey), "interrupted"))
		t.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "the session stopped during this turn; a resume closed it"}
	}
	return b.drain()
}

// endTurn ends the open turn's span at ms, with the provider and model of
// the header in force (a log's first header comes inside its first step).
func (b *Builder) endTurn(ms int64) {
	t := b.turn
	t.EndTimeUnixNano = nanos(ms)
	t.Attributes = append(t.Attributes, b.cfg.provider2()...)
	if b.cfg.model != "" {
		t.Attributes = append(t.Attributes, str(string(semconv.GenAIRequestModelKey), b.cfg.model))
	}
	b.turn = nil
}

func (b *Builder) stepStart(e Event) {
	if b.step != nil {
		b.stepEnd(e.Time, false)
	}
	b.openChat(kindChat, e)
}

// openChat begins a chat span keyed on e under the open turn (or the root).
func (b *Builder) openChat(kind string, e Event) {
	s := b.begin(kind, e, chatName(b.cfg), tracepb.Span_SPAN_KIND_CLIENT, b.parentOfChat())
	var d struct {
		Turn int64 `json:"turn"`
		Step int64 `json:"step"`
	}
	_ = json.Unmarshal(e.Data, &d)
	s.Attributes = append(s.Attributes, i64(attrTurn, d.Turn), i64(attrStep, d.Step))
	c := &chat{span: s, cfg: b.cfg}
	b.step = c
	b.chats = append(b.chats, c)
}

// stepEnd ends the open step's chat span at ms; open marks it left open.
func (b *Builder) stepEnd(ms int64, open bool) {
	if b.step == nil {
		return
	}
	b.step.span.EndTimeUnixNano = nanos(ms)
	if open {
		b.step.span.Attributes = append(b.step.span.Attributes, boolean(attrOpen, true))
	}
	b.step = nil
}

// closeOpen ends everything still open at ms, marked left open.
func (b *Builder) closeOpen(ms int64) {
	b.stepEnd(ms, true)
	b.endTools(ms)
	if b.turn != nil {
		b.turn.Attributes = append(b.turn.Attributes, boolean(attrOpen, true))
		b.endTurn(ms)
	}
}

// endTools ends every tool span still without a result at ms, marked left
// open: its outcome is not in the log.
func (b *Builder) endTools(ms int64) {
	for id, s := range b.tools {
		s.EndTimeUnixNano = nanos(ms)
		s.Attributes = append(s.Attributes, boolean(attrOpen, true))
		delete(b.tools, id)
	}
}

// begin starts a span of kind keyed on e and adds it to out.
func (b *Builder) begin(kind string, e Event, name string, sk tracepb.Span_SpanKind, parent []byte) *tracepb.Span {
	s := &tracepb.Span{
		TraceId:           b.trace,
		SpanId:            SpanID(b.id, kind, e.Seq, ""),
		ParentSpanId:      parent,
		Name:              name,
		Kind:              sk,
		StartTimeUnixNano: nanos(e.Time),
		EndTimeUnixNano:   nanos(e.Time),
	}
	s.Attributes = append(s.Attributes, i64(attrSeq, e.Seq))
	b.out = append(b.out, s)
	return s
}

func (b *Builder) rootID() []byte { return SpanID(b.id, kindSession, 0, "") }

func (b *Builder) parentOfChat() []byte {
	if b.turn != nil {
		return b.turn.SpanId
	}
	return b.rootID()
}

func (b *Builder) parentOfTool() []byte {
	if b.step != nil {
		return b.step.span.SpanId
	}
	return b.parentOfChat()
}

// drain hands out the spans begun since the last hand-out, with the chat
// spans' attributes filled in.
func (b *Builder) drain() []*tracepb.Span {
	for _, c := range b.chats {
		c.finishAttributes()
	}
	out := b.out
	b.out, b.chats = nil, nil
	return out
}

// provider2 returns the provider attributes: gen_ai.provider.name and,
// for the readers that predate it, the deprecated gen_ai.system.
func (c config) provider2() []*kv {
	if c.provider == "" {
		return nil
	}
	return []*kv{str(string(semconv.GenAIProviderNameKey), c.provider), str(attrSystem, c.provider)}
}

func (c *chat) finishAttributes() {
	s := c.span
	s.Attributes = append(s.Attributes,
		str(string(semconv.GenAIOperationNameKey), semconv.GenAIOperationNameChat.Value.AsString()))
	s.Attributes = append(s.Attributes, c.cfg.provider2()...)
	if c.cfg.model != "" {
		s.Attributes = append(s.Attributes, str(string(semconv.GenAIRequestModelKey), c.cfg.model))
	}
	if c.cfg.maxTokens != nil {
		s.Attributes = append(s.Attributes, i64(string(semconv.GenAIRequestMaxTokensKey), *c.cfg.maxTokens))
	}
	if c.cfg.temperature != nil {
		s.Attributes = append(s.Attributes, f64(string(semconv.GenAIRequestTemperatureKey), *c.cfg.temperature))
	}
	if c.respModel != "" {
		s.Attributes = append(s.Attributes, str(string(semconv.GenAIResponseModelKey), c.respModel))
	}
	if c.respID != "" {
		s.Attributes = append(s.Attributes, str(string(semconv.GenAIResponseIDKey), c.respID))
	}
	if c.hasUsage {
		s.Attributes = append(s.Attributes,
			i64(string(semconv.GenAIUsageInputTokensKey), c.usage.Input),
			i64(string(semconv.GenAIUsageOutputTokensKey), c.usage.Output))
		if c.usage.CacheRead != nil {
			s.Attributes = append(s.Attributes, i64(string(semconv.GenAIUsageCacheReadInputTokensKey), *c.usage.CacheRead))
		}
		if c.usage.CacheWrite != nil {
			s.Attributes = append(s.Attributes, i64(string(semconv.GenAIUsageCacheCreationInputTokensKey), *c.usage.CacheWrite))
		}
	}
	finish := c.finish
	if c.lastOfTurn && len(finish) > 0 && finish[len(finish)-1] == "stop" {
		finish[len(finish)-1] = "length"
	}
	if len(finish) > 0 {
		s.Attributes = append(s.Attributes, strs(string(semconv.GenAIResponseFinishReasonsKey), finish))
	}
	if len(c.finish) > 0 && c.respID == "" {
		// Only failed attempts: the model call settled without a message.
		s.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "the model call settled without a message"}
		s.Attributes = append(s.Attributes, str(string(semconv.ErrorTypeKey), semconv.ErrorTypeOther.Value.AsString()))
	}
}

// chatName is a chat span's name: "chat" and the requested model.
func chatName(c config) string {
	if c.model == "" {
		return "chat"
	}
	return "chat " + c.model
}
