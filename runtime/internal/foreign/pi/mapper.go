package pi

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
)

// mapper maps one pi file. The tree state (ids, parents, the leaf) follows
// every line read; the typed state (loop, surface, header) changes only
// when the store accepted a Step's inputs (Accepted(true)).
type mapper struct {
	parent   map[string]string // entry id → parent id ("" for a root)
	depth    map[string]int    // entry id → its depth in the tree (a root is 0)
	leaf     string            // the last entry read; "" before the first
	index    int               // parsed lines so far, header included (v1 ids)
	byIndex  map[int]string    // parsed-line index → entry id (v1 firstKeptEntryIndex)
	branches int               // tree switches so far
	// cut is set by a tree switch and cleared once a surface event moved
	// the main surface to the new path.
	cut bool

	t      typed
	commit []func() // applies the last Step's typed changes when accepted
}

// typed is what the events appended so far imply.
type typed struct {
	loop    loop
	nodes   []node             // the current surface, in order
	results map[string]toolRec // tool-result entry id → its current node
	calls   map[string][2]int  // tool call id → the turn and step that asked for it
	header  header
}

// loop is the turn and step state of the main session.
type loop struct {
	turn, step         int
	turnOpen, stepOpen bool
	open               []string // the open step's unanswered call ids
	// endKind and endMsg: how the turn's last model call ended when it was
	// not a normal answer (pi's stopReason "error" or "aborted").
	endKind, endMsg string
}

// node is one surface node: its seq and the entry that produced it.
type node struct {
	seq    sdk.Seq
	owner  string // the entry id
	depth  int    // the owner's depth
	system bool   // a system/message
}

// toolRec is a tool result's current node and what a rewrite must keep.
type toolRec struct {
	seq        sdk.Seq
	turn, step int
	msg        events.ToolMessage
}

// header is the request header in force.
type header struct {
	written         bool
	provider, model string
	effort          string // "" when pi's thinking level is "off" or unset
	tools           []events.ToolSchema
}

func newMapper() *mapper {
	return &mapper{
		parent: map[string]string{}, depth: map[string]int{}, byIndex: map[int]string{},
		t: typed{results: map[string]toolRec{}, calls: map[string][2]int{}},
	}
}

// Accepted applies the last Step's typed changes when they were stored.
func (m *mapper) Accepted(ok bool) {
	if ok {
		for _, f := range m.commit {
			f()
		}
	}
	m.commit = nil
}

// End completes nothing: every pi line is a whole entry.
func (m *mapper) End(sdk.Seq) foreign.Step {
	m.commit = nil
	return foreign.Step{}
}

// Line maps one line whose raw record gets seq.
func (m *mapper) Line(l foreign.Line, seq sdk.Seq) foreign.Step {
	m.commit = nil
	e, err := parse(l)
	if err != nil {
		return foreign.Step{Damage: err.Error()}
	}
	if e == nil {
		return foreign.Step{}
	}
	idx := m.index
	m.index++
	if e.Type == "session" {
		return foreign.Step{}
	}
	id, switched := m.place(e, idx, l.N)
	b := &stepb{m: m, id: id, base: seq + 1, lp: m.t.loop, hdr: m.t.header}
	var st foreign.Step
	if switched {
		m.branches++
		st.Branch = "branch-" + strconv.Itoa(m.branches)
		m.cut = true
		b.closeTurn(events.AbortedByUser())
		// The branch child keeps the abandoned path: it ends there, so it
		// gets the step and turn ends too.
		st.BranchAfter = len(b.ins)
	}
	b.entry(e)
	st.Inputs = b.ins
	lp, hdr := b.lp, b.hdr
	m.commit = append(b.fns, func() { m.t.loop, m.t.header = lp, hdr })
	return st
}

// place adds the entry to the tree and makes it the leaf. It returns the
// entry's id (v1 entries get "line-<n>") and whether it is a tree switch:
// its parent is not the previous leaf.
func (m *mapper) place(e *entry, idx, n int) (string, bool) {
	pid, root, hasParent := e.parent()
	id := "line-" + strconv.Itoa(n)
	if e.ID != nil && *e.ID != "" && hasParent {
		id = *e.ID
	} else {
		pid, root = m.leaf, m.leaf == ""
	}
	if pid == id {
		root = true // pi reads an entry that is its own parent as a root
	}
	if _, known := m.depth[pid]; !known {
		root = true // an orphan: pi reads it as a root
	}
	switched := m.leaf != "" && (root || pid != m.leaf)
	m.byIndex[idx] = id
	if root {
		m.parent[id], m.depth[id] = "", 0
	} else {
		m.parent[id], m.depth[id] = pid, m.depth[pid]+1
	}
	m.leaf = id
	return id, switched
}

// onPath returns the ids on the path from the root to id.
func (m *mapper) onPath(id string) map[string]bool {
	path := map[string]bool{}
	for n := 0; id != "" && !path[id] && n <= len(m.parent); n++ {
		path[id] = true
		id = m.parent[id]
	}
	return path
}

// stepb builds one Step: its inputs, and the typed changes they imply
// (applied when the store accepts them).
type stepb struct {
	m    *mapper
	id   string  // the entry's id
	base sdk.Seq // the first input's seq
	ins  []events.Input
	fns  []func()
	lp   loop
	hdr  header
}

// add appends an input and returns its seq.
func (b *stepb) add(in events.Input) sdk.Seq {
	s := b.base + sdk.Seq(len(b.ins))
	b.ins = append(b.ins, in)
	return s
}

// entry maps one entry.
func (b *stepb) entry(e *entry) {
	switch e.Type {
	case "message":
		b.message(e.Message)
	case "model_change":
		h := b.hdr
		h.provider, h.model = e.Provider, e.ModelID
		b.setHeader(h)
	case "thinking_level_change":
		h := b.hdr
		h.effort = e.ThinkingLevel
		if h.effort == "off" {
			h.effort = ""
		}
		b.setHeader(h)
	case "compaction":
		kept := b.m.depth[b.id]
		if e.FirstKeptEntryID != nil {
			if d, ok := b.m.depth[*e.FirstKeptEntryID]; ok && b.m.onPath(b.id)[*e.FirstKeptEntryID] {
				kept = d
			}
		} else if e.FirstKeptEntryIndex != nil {
			if id, ok := b.m.byIndex[*e.FirstKeptEntryIndex]; ok {
				kept = b.m.depth[id]
			}
		}
		b.checkpoint(e, kept, "compaction-summary")
	case "branch_summary":
		if e.Summary != "" {
			b.checkpoint(e, -1, "branch-summary")
		}
	case "context_edit":
		b.contextEdit(e)
	case "custom_message":
		b.user(events.UserMessage{ID: b.id, Kind: "context", Content: userBlocks(e.Content)})
	}
	// custom, label, session_info, usage: no typed event.
}

// message maps a message entry by its role.
func (b *stepb) message(msg *message) {
	switch msg.Role {
	case "user":
		b.closeTurn(events.Completed())
		b.lp.turn++
		b.lp.turnOpen, b.lp.step = true, 0
		b.add(events.TurnStart(b.lp.turn))
		b.user(events.UserMessage{ID: b.id, Kind: "prompt", Content: userBlocks(msg.Content)})
	case "custom", "hookMessage":
		b.user(events.UserMessage{ID: b.id, Kind: "context", Content: userBlocks(msg.Content)})
	case "bashExecution":
		if !msg.ExcludeFromContext {
			b.user(events.UserMessage{ID: b.id, Kind: "context", Content: []events.Block{events.Text(bashText(msg))}})
		}
	case "assistant":
		b.assistant(msg)
	case "toolResult":
		b.toolResult(msg)
	case "system":
		b.system(msg)
	}
}

// user appends a user/message (moving the surface to the current path
// after a tree switch).
func (b *stepb) user(u events.UserMessage) {
	b.put(events.User(u), b.plan(true, -1))
}

// closeTurn ends the open step and turn; reason is used unless the turn's
// last model call failed or was aborted.
func (b *stepb) closeTurn(reason events.Reason) {
	if b.lp.stepOpen {
		b.add(events.StepEnd(b.lp.turn, b.lp.step))
		b.lp.stepOpen, b.lp.open = false, nil
	}
	if !b.lp.turnOpen {
		return
	}
	switch b.lp.endKind {
	case "error":
		reason = events.Failed(events.TurnError{Code: "UNKNOWN", Message: b.lp.endMsg})
	case "aborted":
		reason = events.AbortedByUser()
	}
	b.add(events.TurnEnd(b.lp.turn, reason))
	b.lp.turnOpen, b.lp.endKind, b.lp.endMsg = false, "", ""
}

// startStep opens the next step, opening a turn first when none is open.
func (b *stepb) startStep() {
	if !b.lp.turnOpen {
		b.lp.turn++
		b.lp.turnOpen, b.lp.step = true, 0
		b.add(events.TurnStart(b.lp.turn))
	}
	if b.lp.stepOpen {
		b.add(events.StepEnd(b.lp.turn, b.lp.step))
	}
	b.lp.step++
	b.lp.stepOpen, b.lp.open = true, nil
	b.add(events.StepStart(b.lp.turn, b.lp.step))
}

// assistant maps an assistant message: a step with its message and tool
// calls; an error or aborted call (which pi never sends to a model again)
// is an assistant/attempt.
func (b *stepb) assistant(msg *message) {
	if msg.Provider != "" && msg.Model != "" && (msg.Provider != b.hdr.provider || msg.Model != b.hdr.model) {
		h := b.hdr
		h.provider, h.model = msg.Provider, msg.Model
		b.setHeader(h)
	}
	b.startStep()
	turn, step := b.lp.turn, b.lp.step
	if msg.StopReason == "error" || msg.StopReason == "aborted" {
		rec, _ := json.Marshal(struct {
			StopReason   string `json:"stopReason"`
			ErrorMessage string `json:"errorMessage,omitempty"`
		}{msg.StopReason, msg.ErrorMessage})
		b.add(events.AssistantAttempt(turn, step, rec))
		b.add(events.StepEnd(turn, step))
		b.lp.stepOpen = false
		b.lp.endKind, b.lp.endMsg = msg.StopReason, msg.ErrorMessage
		return
	}
	content, calls := assistantBlocks(msg.Content)
	model := events.Model{Provider: msg.Provider, Name: msg.Model}
	if model.Provider == "" || model.Name == "" {
		model = events.Model{Provider: "pi", Name: "unknown"}
	}
	r := events.Reply{ID: b.id, Model: model, Content: content}
	if u := msg.Usage; u != nil {
		r.Usage = &events.Usage{Input: count(u.Input), Output: count(u.Output), CacheRead: count(u.CacheRead), CacheWrite: count(u.CacheWrite)}
	}
	b.put(events.Assistant(turn, step, r), b.plan(false, -1))
	b.lp.endKind, b.lp.endMsg = "", ""
	if len(calls) > 0 {
		for _, c := range calls {
			b.add(events.ToolCall(turn, step, c))
			b.lp.open = append(b.lp.open, c.ID)
		}
		b.fns = append(b.fns, func() {
			for _, c := range calls {
				b.m.t.calls[c.ID] = [2]int{turn, step}
			}
		})
		return
	}
	b.add(events.StepEnd(turn, step))
	b.lp.stepOpen = false
	switch msg.StopReason {
	case "stop":
		b.closeTurn(events.Completed())
	case "length":
		b.closeTurn(events.MaxTokens())
	}
}

// toolResult maps a tool result to tool/result in the step that asked for
// the call (the open step when the call is unknown); the step ends with
// its last answer.
func (b *stepb) toolResult(msg *message) {
	turn, step := b.lp.turn, b.lp.step
	call := callID(msg.ToolCallID)
	if ts, ok := b.m.t.calls[call]; ok {
		turn, step = ts[0], ts[1]
	}
	tm := events.ToolMessage{ID: b.id, CallID: call, Content: userBlocks(msg.Content), IsError: msg.IsError}
	seq := b.put(events.Tool(turn, step, tm), b.plan(false, -1))
	id := b.id
	b.fns = append(b.fns, func() { b.m.t.results[id] = toolRec{seq: seq, turn: turn, step: step, msg: tm} })
	if i := slices.Index(b.lp.open, call); i >= 0 {
		b.lp.open = slices.Delete(slices.Clone(b.lp.open), i, i+1)
		if len(b.lp.open) == 0 && b.lp.stepOpen && turn == b.lp.turn && step == b.lp.step {
			b.add(events.StepEnd(turn, step))
			b.lp.stepOpen = false
		}
	}
}

// system maps a system message: its text (content, then sections) to
// system/message, its tool changes to a request/header.
func (b *stepb) system(msg *message) {
	if len(msg.ToolsAdded) > 0 || len(msg.ToolsRemoved) > 0 {
		h := b.hdr
		h.tools = slices.Clone(h.tools)
		for _, r := range msg.ToolsRemoved {
			h.tools = slices.DeleteFunc(h.tools, func(t events.ToolSchema) bool { return t.Name == r.Name })
		}
		for _, t := range msg.ToolsAdded {
			if t.Name == "" {
				continue
			}
			h.tools = slices.DeleteFunc(h.tools, func(s events.ToolSchema) bool { return s.Name == t.Name })
			s := events.ToolSchema{Name: t.Name, Description: t.Description}
			if len(t.Parameters) > 0 && t.Parameters[0] == '{' {
				s.Parameters = t.Parameters
			}
			h.tools = append(h.tools, s)
		}
		b.setHeader(h)
	}
	text := systemText(msg)
	if text == "" {
		return
	}
	turn, step := 0, 0
	if b.lp.turnOpen {
		turn = b.lp.turn
		if b.lp.stepOpen {
			step = b.lp.step
		}
	}
	in := events.System(turn, step, events.TextMessage{ID: b.id, Text: text})
	p := b.plan(true, -1)
	p.system = true
	b.put(in, p)
}

// setHeader writes h as the request header in force when it differs from
// the one in force and names a model: "initial" the first time, "change"
// after, with a request/context when the model changed.
func (b *stepb) setHeader(h header) {
	old := b.hdr
	b.hdr = h
	if h.provider == "" || h.model == "" {
		return
	}
	if old.written && old.provider == h.provider && old.model == h.model && old.effort == h.effort &&
		slices.EqualFunc(old.tools, h.tools, sameTool) {
		return
	}
	reason := events.HeaderChange
	if !old.written {
		reason = events.HeaderInitial
	}
	b.hdr.written = true
	var tools []events.ToolSchema
	if len(h.tools) > 0 {
		tools = h.tools
	}
	b.add(events.RequestHeader(events.Header{Config: events.Config{Provider: h.provider, Model: h.model, ReasoningEffort: h.effort}, Tools: tools}, reason))
	if !old.written || old.provider != h.provider || old.model != h.model {
		b.add(events.RequestContext(events.ContextInfo{Model: events.Model{Provider: h.provider, Name: h.model}}))
	}
}

func sameTool(a, b events.ToolSchema) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.Parameters) == string(b.Parameters)
}

// plan is where a surface event goes: appended, or replacing the nodes
// lo … hi of the surface.
type plan struct {
	lo, hi int // lo > hi: append
	system bool
}

// plan decides where the next surface event goes. When it may replace
// (not an assistant message or tool result, whose replaces the payload
// rules forbid or restrict), it cuts the nodes a tree switch left off the
// current path (from the first of them to the end), and, with
// shadowBelow ≥ 0, the nodes of entries shallower than shadowBelow (a
// compaction's summarized entries). A leading system/message stays.
func (b *stepb) plan(canReplace bool, shadowBelow int) plan {
	nodes := b.m.t.nodes
	p := plan{lo: len(nodes), hi: -1}
	if !canReplace {
		return p
	}
	if b.m.cut {
		path := b.m.onPath(b.id)
		for i, n := range nodes {
			if !path[n.owner] {
				p.lo, p.hi = i, len(nodes)-1
				break
			}
		}
	}
	if shadowBelow >= 0 {
		for i, n := range nodes {
			if n.depth < shadowBelow && !(i == 0 && n.system) {
				p.lo, p.hi = min(p.lo, i), max(p.hi, i)
			}
		}
	}
	if p.lo == 0 && len(nodes) > 0 && nodes[0].system {
		p.lo = 1
	}
	return p
}

// put appends in as a surface event placed by p and returns its seq.
func (b *stepb) put(in events.Input, p plan) sdk.Seq {
	nodes := b.m.t.nodes
	nd := node{owner: b.id, depth: b.m.depth[b.id], system: p.system}
	var next []node
	if p.lo <= p.hi {
		shadowed := make([]sdk.Seq, 0, p.hi-p.lo+1)
		for _, n := range nodes[p.lo : p.hi+1] {
			shadowed = append(shadowed, n.seq)
		}
		in = in.Replacing(nodes[p.lo].seq, nodes[p.hi].seq, shadowed...)
		nd.seq = b.add(in)
		next = slices.Concat(nodes[:p.lo], []node{nd}, nodes[p.hi+1:])
	} else {
		nd.seq = b.add(in)
		next = append(nodes, nd)
	}
	b.fns = append(b.fns, func() { b.m.t.nodes, b.m.cut = next, false })
	return nd.seq
}

// checkpoint maps a compaction or a branch summary. With nodes to hide
// (those of entries shallower than shadowBelow, or those a tree switch
// left behind) it is a compaction bracket whose checkpoint user/message
// replaces them; with none it is a user/message of kind kind.
func (b *stepb) checkpoint(e *entry, shadowBelow int, kind string) {
	p := b.plan(true, shadowBelow)
	if p.lo > p.hi {
		b.user(events.UserMessage{ID: b.id, Kind: kind, Content: []events.Block{events.Text(e.Summary)}})
		return
	}
	nodes := b.m.t.nodes
	shadowed := make([]sdk.Seq, 0, p.hi-p.lo+1)
	for _, n := range nodes[p.lo : p.hi+1] {
		shadowed = append(shadowed, n.seq)
	}
	var turn *int
	if b.lp.turnOpen {
		turn = &b.lp.turn
	}
	provider, model := b.hdr.provider, b.hdr.model
	if provider == "" || model == "" {
		provider, model = "pi", "unknown"
	}
	cid := b.id
	b.add(compactionEvent("compaction/start", bracket{CompactionID: cid, Turn: turn}))
	b.add(compactionEvent("compaction/summary", summary{
		CompactionID: cid, Summary: []textBlock{{Type: "text", Text: e.Summary}},
		ShadowedRange: seqRange{shadowed[0], shadowed[len(shadowed)-1]}, ShadowedSeqs: shadowed,
		ShadowedTokenCount: count(e.TokensBefore), Provider: provider, Model: model,
	}))
	data, _ := json.Marshal(checkpointMessage{
		ID: b.id, Role: "user", Content: []textBlock{{Type: "text", Text: e.Summary}},
		Source: checkpointSource{Kind: "compact-checkpoint", CompactionID: cid},
	})
	b.put(events.Input{Type: events.TypeUserMessage, Data: data, SurfaceOp: events.Append()}, p)
	b.add(compactionEvent("compaction/end", bracket{CompactionID: cid, Turn: turn}))
}

// contextEdit maps a context edit that replaces a tool result's content
// (on the current path and still on the surface) to a tool/result that
// rewrites it. Other edits (of user, assistant or extension messages, and
// omissions) have no typed form.
func (b *stepb) contextEdit(e *entry) {
	rec, ok := b.m.t.results[e.TargetID]
	if !ok || len(e.Replacement) == 0 || string(e.Replacement) == "null" || !b.m.onPath(b.id)[e.TargetID] {
		return
	}
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(e.Replacement, &r) != nil || len(r.Content) == 0 {
		return
	}
	at := slices.IndexFunc(b.m.t.nodes, func(n node) bool { return n.seq == rec.seq })
	if at < 0 {
		return // hidden by a compaction or a switch: nothing on the surface to rewrite
	}
	tm := rec.msg
	tm.Content = userBlocks(r.Content)
	in := events.Tool(rec.turn, rec.step, tm).Replacing(rec.seq, rec.seq, rec.seq)
	seq := b.add(in)
	next := slices.Clone(b.m.t.nodes)
	next[at].seq = seq
	target := e.TargetID
	b.fns = append(b.fns, func() {
		b.m.t.nodes = next
		rec.seq, rec.msg = seq, tm
		b.m.t.results[target] = rec
	})
}

// The compaction events have no builders in package events; these are
// their payloads (docs/format.md).
type (
	bracket struct {
		CompactionID string `json:"compactionId"`
		Turn         *int   `json:"turn"`
	}
	summary struct {
		CompactionID       string      `json:"compactionId"`
		Summary            []textBlock `json:"summary"`
		ShadowedRange      seqRange    `json:"shadowedRange"`
		ShadowedSeqs       []sdk.Seq   `json:"shadowedSeqs"`
		ShadowedTokenCount int64       `json:"shadowedTokenCount"`
		Provider           string      `json:"provider"`
		Model              string      `json:"model"`
	}
	seqRange struct {
		Start sdk.Seq `json:"start"`
		End   sdk.Seq `json:"end"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	checkpointMessage struct {
		ID      string           `json:"id"`
		Role    string           `json:"role"`
		Content []textBlock      `json:"content"`
		Source  checkpointSource `json:"source"`
	}
	checkpointSource struct {
		Kind         string `json:"kind"`
		CompactionID string `json:"compactionId"`
	}
)

func compactionEvent(typ string, v any) events.Input {
	data, _ := json.Marshal(v)
	return events.Input{Type: typ, Data: data}
}
