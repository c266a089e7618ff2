package codex

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// mapper maps one rollout. It folds the lines into a queue of units (the
// events one fact of the rollout becomes) and hands the queue out in
// Steps of at most one surface event each, because an atomic group holds
// one surface event (docs/format.md): a line that completes an assistant
// message and carries a tool result of its own gives the result to the
// next Step. Everything it knows comes from the lines and the Accepted
// answers it was fed, so a replay rebuilds the same state.
type mapper struct {
	provider string // session_meta's model_provider, else "openai"
	model    string // the last turn_context's model, else "unknown"
	metaSeen bool   // the first session_meta was read; later ones are a fork's copies

	turn     int  // the last turn opened
	turnOpen bool // a turn/start without its turn/end
	step     int  // the last step of the turn
	stepOpen bool // a step/start without its step/end
	pending  *reply
	config   string // the config of the last header queued, to write a header only on change
	target   string // its provider and model, to write request/context only on change

	queue []unit
	// stored is what the log holds (as far as the Accepted answers say);
	// after is what it will hold once the last Step's inputs are accepted.
	stored plan
	after  *plan
}

// reply is an assistant message being gathered from consecutive model
// output items.
type reply struct {
	line   int // the line of its first item: its id
	blocks []events.Block
	calls  []events.Call
	usage  *events.Usage
}

// plan is the state of the log a unit is built against.
type plan struct {
	seq     sdk.Seq   // the seq the next input gets
	surface []sdk.Seq // the current surface nodes, in order
	system0 bool      // surface[0] is a leading system/message
	header  bool      // a request/header is in the log
}

// unit is the events one fact becomes, built when it is handed out (a
// checkpoint names the seqs of the nodes it replaces, a header's reason
// depends on whether one was stored).
type unit struct {
	surface bool
	build   func(p *plan) []events.Input
}

// ready is a unit of inputs that depend on nothing.
func ready(surface bool, ins ...events.Input) unit {
	return unit{surface: surface, build: func(*plan) []events.Input { return ins }}
}

// Line implements foreign.Mapper.
func (m *mapper) Line(l foreign.Line, seq sdk.Seq) foreign.Step {
	ln, damage := parseLine(l.Text, l.Newline)
	if damage != "" {
		return foreign.Step{Damage: damage}
	}
	switch ln.kind {
	case kindSessionMeta:
		m.sessionMeta(ln.payload, l.N)
	case kindTurnContext:
		m.turnContext(ln.payload)
	case kindResponseItem:
		var it item
		if json.Unmarshal(ln.payload, &it) == nil {
			m.item(it, l.N)
		}
	case kindEventMsg:
		m.eventMsg(ln.payload)
	case kindCompacted:
		var c compactedItem
		if json.Unmarshal(ln.payload, &c) == nil {
			m.flush()
			m.compacted(c, l.N)
		}
	}
	return foreign.Step{Inputs: m.emit(seq + 1)}
}

// End implements foreign.Mapper: the assistant message being gathered is
// complete as far as the input goes.
func (m *mapper) End(next sdk.Seq) foreign.Step {
	m.flush()
	return foreign.Step{Inputs: m.emit(next)}
}

// Accepted implements foreign.Mapper.
func (m *mapper) Accepted(ok bool) {
	if ok && m.after != nil {
		m.stored = *m.after
	}
	m.after = nil
}

// emit hands out the queue's head: its units in order, up to one surface
// event.
func (m *mapper) emit(first sdk.Seq) []events.Input {
	p := m.stored
	p.seq, p.surface = first, slices.Clone(m.stored.surface)
	var out []events.Input
	surfaces := 0
	for len(m.queue) > 0 && (!m.queue[0].surface || surfaces == 0) {
		u := m.queue[0]
		m.queue = m.queue[1:]
		for _, in := range u.build(&p) {
			if in.SurfaceOp != nil && !in.SurfaceOp.Replace {
				if len(p.surface) == 0 && in.Type == events.TypeSystemMessage {
					p.system0 = true
				}
				p.surface = append(p.surface, p.seq)
			}
			out = append(out, in)
			p.seq++
		}
		if u.surface {
			surfaces++
		}
	}
	if len(out) > 0 {
		m.after = &p
	}
	return out
}

// id is the message id of the line n.
func id(n int) string { return "l" + strconv.Itoa(n) }

func (m *mapper) sessionMeta(payload json.RawMessage, n int) {
	var meta sessionMeta
	if m.metaSeen || json.Unmarshal(payload, &meta) != nil {
		return
	}
	m.metaSeen = true
	if meta.ModelProvider != "" {
		m.provider = meta.ModelProvider
	}
	if sp := meta.systemPrompt(); sp != "" {
		m.queue = append(m.queue, ready(true, events.System(0, 0, events.TextMessage{ID: id(n), Text: sp})))
	}
}

// headerExtra is the part of a turn_context a request header keeps beside
// the model: Codex's policies.
type headerExtra struct {
	ApprovalPolicy   json.RawMessage `json:"approvalPolicy,omitempty"`
	SandboxPolicy    json.RawMessage `json:"sandboxPolicy,omitempty"`
	ReasoningSummary json.RawMessage `json:"reasoningSummary,omitempty"`
}

func (m *mapper) turnContext(payload json.RawMessage) {
	var tc turnContext
	if json.Unmarshal(payload, &tc) != nil {
		return
	}
	m.flush()
	if tc.Model != "" {
		m.model = tc.Model
	}
	cfg := events.Config{Provider: m.provider, Model: m.model,
		Extra: marshal(headerExtra{safe(tc.ApprovalPolicy), safe(tc.SandboxPolicy), safe(tc.Summary)})}
	if e := tc.effort(); e != nil {
		cfg.ReasoningEffort = *e
	}
	key := string(events.RequestHeader(events.Header{Config: cfg}, "").Data)
	if key == m.config {
		return
	}
	modelChanged := m.target != cfg.Provider+"\x00"+cfg.Model
	m.config, m.target = key, cfg.Provider+"\x00"+cfg.Model
	m.queue = append(m.queue, unit{build: func(p *plan) []events.Input {
		reason := events.HeaderInitial
		if p.header {
			reason = events.HeaderChange
		}
		p.header = true
		ins := []events.Input{events.RequestHeader(events.Header{Config: cfg}, reason)}
		if modelChanged {
			ins = append(ins, events.RequestContext(events.ContextInfo{Model: events.Model{Provider: cfg.Provider, Name: cfg.Model}}))
		}
		return ins
	}})
}

func (m *mapper) item(it item, n int) {
	switch it.Type {
	case "message":
		ps := parts(it.Content)
		switch it.Role {
		case "assistant":
			m.add(n, blocks(ps)...)
		case "user":
			m.flush()
			if injected(ps) {
				m.queue = append(m.queue, ready(true, events.User(events.UserMessage{ID: id(n), Kind: "context", Content: blocks(ps)})))
				return
			}
			m.endTurn(events.Completed())
			m.turn++
			m.turnOpen, m.step = true, 0
			m.queue = append(m.queue, ready(false, events.TurnStart(m.turn)),
				ready(true, events.User(events.UserMessage{ID: id(n), Kind: "prompt", Content: blocks(ps)})))
		case "developer":
			m.flush()
			m.queue = append(m.queue, ready(true, developer(m.loopTurn(), m.loopStep(), id(n), text(ps))))
		case "system":
			m.flush()
			m.queue = append(m.queue, ready(true, events.System(m.loopTurn(), m.loopStep(), events.TextMessage{ID: id(n), Text: text(ps)})))
		}
	case "reasoning":
		t := text(it.Summary)
		if t == "" {
			t = text(parts(it.Content))
		}
		if t != "" {
			m.add(n, events.Reasoning(events.Thought{Text: t}))
		}
	case "function_call":
		m.call(n, it.Type, events.Call{ID: firstOf(it.CallID, it.ID), Name: it.Name, Arguments: it.Arguments})
	case "custom_tool_call":
		m.call(n, it.Type, events.Call{ID: firstOf(it.CallID, it.ID), Name: it.Name, Arguments: it.Input})
	case "local_shell_call":
		m.call(n, it.Type, events.Call{ID: firstOf(it.CallID, it.ID), Name: "local_shell", Arguments: string(compact(it.Action))})
	case "web_search_call":
		m.add(n, events.PluginBlock("codex-web-search", marshal(struct {
			Status string          `json:"status,omitempty"`
			Action json.RawMessage `json:"action,omitempty"`
		}{it.Status, safe(it.Action)})))
	case "function_call_output", "custom_tool_call_output":
		m.flush()
		if !callID(it.CallID) {
			return // answers no call a message could announce: kept raw
		}
		content, failed := output(it.Output)
		m.queue = append(m.queue, ready(true, events.Tool(m.turn, m.step, events.ToolMessage{ID: id(n), CallID: it.CallID, Content: content, IsError: failed})))
	}
}

// loopTurn and loopStep are the turn and step a system or developer
// message carries: the open ones, or 0.
func (m *mapper) loopTurn() int {
	if m.turnOpen {
		return m.turn
	}
	return 0
}

func (m *mapper) loopStep() int {
	if m.turnOpen && m.stepOpen {
		return m.step
	}
	return 0
}

// add adds blocks to the assistant message being gathered, starting one at
// line n if none is.
func (m *mapper) add(n int, bs ...events.Block) {
	if m.pending == nil {
		m.pending = &reply{line: n}
	}
	m.pending.blocks = append(m.pending.blocks, bs...)
}

// call adds a tool call to the assistant message being gathered; one
// without a usable id (empty, or over logbook's 128 bytes) or with an id
// the message announces already stays raw, and one without a name is named
// after its item type.
func (m *mapper) call(n int, typ string, c events.Call) {
	if !callID(c.ID) {
		return
	}
	if m.pending != nil && slices.ContainsFunc(m.pending.calls, func(p events.Call) bool { return p.ID == c.ID }) {
		return
	}
	c.Name = firstOf(c.Name, typ)
	m.add(n, events.ToolCallBlock(c))
	m.pending.calls = append(m.pending.calls, c)
}

// flush queues the assistant message being gathered, in a step of its own
// (and a turn, when none is open: a model call after a compaction or at
// the start of a fork's file).
func (m *mapper) flush() {
	r := m.pending
	m.pending = nil
	if r == nil || len(r.blocks) == 0 {
		return
	}
	if !m.turnOpen {
		m.turn++
		m.turnOpen, m.step = true, 0
		m.queue = append(m.queue, ready(false, events.TurnStart(m.turn)))
	}
	if m.stepOpen {
		m.queue = append(m.queue, ready(false, events.StepEnd(m.turn, m.step)))
	}
	m.step++
	m.stepOpen = true
	ins := []events.Input{events.StepStart(m.turn, m.step)}
	m.queue = append(m.queue, ready(false, ins...))
	ins = []events.Input{events.Assistant(m.turn, m.step, events.Reply{ID: id(r.line),
		Model: events.Model{Provider: m.provider, Name: m.model}, Content: r.blocks, Usage: r.usage})}
	for _, c := range r.calls {
		ins = append(ins, events.ToolCall(m.turn, m.step, c))
	}
	m.queue = append(m.queue, ready(true, ins...))
}

// endTurn closes the open step and turn.
func (m *mapper) endTurn(reason events.Reason) {
	m.flush()
	if m.stepOpen {
		m.queue = append(m.queue, ready(false, events.StepEnd(m.turn, m.step)))
		m.stepOpen = false
	}
	if m.turnOpen {
		m.queue = append(m.queue, ready(false, events.TurnEnd(m.turn, reason)))
		m.turnOpen = false
	}
}

func (m *mapper) eventMsg(payload json.RawMessage) {
	var ev eventMsg
	if json.Unmarshal(payload, &ev) != nil {
		return
	}
	switch ev.Type {
	case "token_count":
		// Codex counts tokens when a model response completes: the usage
		// of the response being gathered, which it ends.
		if r := m.pending; r != nil && r.usage == nil && ev.Info != nil && ev.Info.Last != nil {
			u := ev.Info.Last
			r.usage = &events.Usage{Input: max(u.Input-u.Cached, 0), Output: u.Output, CacheRead: u.Cached}
		}
		m.flush()
	case "task_complete", "turn_complete":
		m.endTurn(events.Completed())
	case "turn_aborted":
		m.endTurn(events.AbortedByUser())
	}
}

// compacted queues the checkpoint of a compaction: a bracket whose
// checkpoint replaces every surface node but a leading system prompt. With
// nothing to replace, the summary is queued as context.
func (m *mapper) compacted(c compactedItem, n int) {
	texts := c.summary()
	content := make([]events.Block, 0, len(texts))
	for _, t := range texts {
		content = append(content, events.Text(t))
	}
	turn := json.RawMessage("null")
	if m.turnOpen {
		turn = json.RawMessage(strconv.Itoa(m.turn))
	}
	provider, model := m.provider, m.model
	m.queue = append(m.queue, unit{surface: true, build: func(p *plan) []events.Input {
		shadow := p.surface
		if p.system0 {
			shadow = shadow[1:]
		}
		if len(shadow) == 0 {
			return []events.Input{events.User(events.UserMessage{ID: id(n), Kind: "context", Content: content})}
		}
		cid := "codex-compacted-" + id(n)
		start, sum := p.seq, p.seq+1
		first, last := shadow[0], shadow[len(shadow)-1]
		checkpoint := events.Input{Type: events.TypeUserMessage, Data: marshal(checkpointMessage{
			ID: "checkpoint-" + id(n), Role: "user", Content: blockValues(content),
			Source: checkpointSource{Kind: "compact-checkpoint", CompactionID: cid}}),
		}.Replacing(first, last, append([]sdk.Seq{start, sum}, shadow...)...)
		ins := []events.Input{
			{Type: "compaction/start", Data: marshal(compactionStart{cid, turn})},
			{Type: "compaction/summary", Data: marshal(compactionSummary{CompactionID: cid, Summary: blockValues(content),
				ShadowedRange: seqRange{first, last}, ShadowedSeqs: shadow, Provider: provider, Model: model})},
			checkpoint,
			{Type: "compaction/end", Data: marshal(compactionStart{cid, turn})},
		}
		kept := []sdk.Seq{}
		if p.system0 {
			kept = append(kept, p.surface[0])
		}
		p.surface = append(kept, p.seq+2)
		return ins
	}})
}

// developer is developer/message with the instructions Codex sent in a
// developer message, as one text block (source kind "instructions").
func developer(turn, step int, msgID, t string) events.Input {
	return events.Input{Type: events.TypeDeveloperMessage, SurfaceOp: events.Append(), Data: marshal(struct {
		Turn    int             `json:"turn"`
		Step    int             `json:"step"`
		Message json.RawMessage `json:"message"`
	}{turn, step, marshal(struct {
		ID      string            `json:"id"`
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
		Source  struct {
			Kind string `json:"kind"`
		} `json:"source"`
	}{ID: msgID, Role: "developer", Content: blockValues([]events.Block{events.Text(t)}), Source: struct {
		Kind string `json:"kind"`
	}{"instructions"}})})}
}

type checkpointSource struct {
	Kind         string `json:"kind"`
	CompactionID string `json:"compactionId"`
}

type checkpointMessage struct {
	ID      string            `json:"id"`
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
	Source  checkpointSource  `json:"source"`
}

type compactionStart struct {
	CompactionID string          `json:"compactionId"`
	Turn         json.RawMessage `json:"turn"`
}

type seqRange struct {
	Start sdk.Seq `json:"start"`
	End   sdk.Seq `json:"end"`
}

type compactionSummary struct {
	CompactionID       string            `json:"compactionId"`
	Summary            []json.RawMessage `json:"summary"`
	ShadowedRange      seqRange          `json:"shadowedRange"`
	ShadowedSeqs       []sdk.Seq         `json:"shadowedSeqs"`
	ShadowedTokenCount int64             `json:"shadowedTokenCount"`
	Provider           string            `json:"provider"`
	Model              string            `json:"model"`
}

// blockValues is the JSON of blocks, read back from a message the events
// builders wrote.
func blockValues(bs []events.Block) []json.RawMessage {
	var msg struct {
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(events.User(events.UserMessage{ID: "x", Kind: "x", Content: bs}).Data, &msg)
	return msg.Content
}

// marshal is v as JSON, without HTML escapes.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null") // not reached: every value comes from valid JSON
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// compact is raw without insignificant whitespace, or "{}" when it is
// empty.
func compact(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if len(raw) == 0 || json.Compact(&b, raw) != nil {
		return []byte("{}")
	}
	return b.Bytes()
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// callID reports whether id can be a logbook call id: 1 to 128 bytes.
func callID(id string) bool { return id != "" && len(id) <= 128 }

// safe is raw when logbook's JSON rules accept it (docs/format.md,
// Lossless JSON), else nil: a member Codex wrote that logbook cannot
// store (a duplicate name, -0, an unsafe integer) is left out of the typed
// event, and stays in the raw record.
func safe(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if _, err := jsonv.Parse(raw, jsonv.Options{}); err != nil {
		return nil
	}
	return raw
}
