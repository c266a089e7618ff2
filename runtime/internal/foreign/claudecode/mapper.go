package claudecode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// provider is the provider of every Claude Code model call.
const provider = "anthropic"

// synthetic is the model Claude Code names on the assistant lines it writes
// itself (API errors, placeholders); it never changes the request header.
const synthetic = "<synthetic>"

// mapper maps one file's lines (docs/import.md, "Claude Code"). It is a pure
// function of the lines, seqs and Accepted answers it is fed.
type mapper struct {
	// subagent is set for a subagent file, whose sidechain lines are its
	// session; a main file keeps its sidechain lines raw.
	subagent bool

	turn, step         int  // the last turn opened and its last step
	turnOpen, stepOpen bool // whether they are still open
	turnHasStep        bool // the open turn has a model step
	answered           bool // the open turn's last typed event is a model answer without tool calls
	aborted            bool // the user interrupted the open turn
	model              string
	pend               *pending // the assistant message being merged, or nil
	path               []sdk.Seq
	marks              map[string]int // uuid → len(path) once its line's events are on it
	awaiting           []string       // uuids whose mark waits for pend
	leaf               string         // the uuid of the last line of the session's chain
	branches           int            // branch forks asked for so far
	boundary           *record        // the compact_boundary waiting for its summary
	usedIDs            map[string]bool
	untrusted          bool // a Step was refused: path may differ from the surface
}

// pending is an assistant message merged from lines that share its key.
type pending struct {
	key     string // "id:"+message.id or "req:"+requestId; "" never merges
	id      string
	model   string
	blocks  []events.Block
	calls   []events.Call
	callIDs map[string]bool
	usage   *events.Usage
}

func newMapper(subagent bool) *mapper {
	return &mapper{subagent: subagent, marks: map[string]int{}, usedIDs: map[string]bool{}}
}

// builder collects one Step's inputs, numbering them from the first seq
// they will get and keeping the mapper's path in step with the surface.
type builder struct {
	m      *mapper
	next   sdk.Seq
	inputs []events.Input
}

// add appends in; a surface event appended to the surface joins the path.
func (b *builder) add(in events.Input) sdk.Seq {
	seq := b.next
	b.inputs = append(b.inputs, in)
	b.next++
	if in.SurfaceOp != nil {
		b.m.path = append(b.m.path, seq)
	}
	return seq
}

// replaceFrom adds in as the replacement of the path from index i to its
// end, citing every node it shadows and the extra seqs.
func (b *builder) replaceFrom(in events.Input, i int, extra ...sdk.Seq) sdk.Seq {
	p := b.m.path
	shadowed := append(append([]sdk.Seq{}, extra...), p[i:]...)
	in = in.Replacing(p[i], p[len(p)-1], shadowed...)
	seq := b.next
	b.inputs = append(b.inputs, in)
	b.next++
	b.m.path = append(p[:i:i], seq)
	return seq
}

// Line maps one line whose raw record gets seq.
func (m *mapper) Line(l foreign.Line, seq sdk.Seq) foreign.Step {
	r, damage := parse(l)
	if damage != "" {
		return foreign.Step{Damage: damage}
	}
	if r.IsSidechain && !m.subagent {
		return foreign.Step{} // a subagent's line inside the main file: raw only
	}
	b := &builder{m: m, next: seq + 1}
	st := m.line(b, r, l.N)
	st.Inputs = b.inputs
	if r.UUID != "" {
		m.leaf = r.UUID
		if m.pend != nil {
			m.awaiting = append(m.awaiting, r.UUID)
		} else {
			m.marks[r.UUID] = len(m.path)
		}
	}
	return st
}

// Accepted notes a refused Step: the path may then differ from the
// session's surface, so no later input replaces nodes by it.
func (m *mapper) Accepted(ok bool) {
	if !ok {
		m.untrusted = true
	}
}

// End completes the assistant message being merged. It closes the open
// step and turn only when the turn is over as far as the file shows: the
// model answered without tool calls, or the user interrupted it. Any other
// turn is still running (its prompt, tool calls or tool results await the
// model: a live session the mirror follows, or one cut short): it stays
// open, and the lines appended later continue it.
func (m *mapper) End(next sdk.Seq) foreign.Step {
	b := &builder{m: m, next: next}
	m.flush(b)
	if m.answered || m.aborted {
		m.closeTurn(b)
	}
	return foreign.Step{Inputs: b.inputs}
}

// line maps a parsed line of the session.
func (m *mapper) line(b *builder, r record, n int) foreign.Step {
	switch {
	case r.Type == "assistant" && r.Message != nil && !r.IsAPIErrorMessage:
		m.assistant(b, r, n)
	case r.Type == "user" && r.Message != nil:
		bs := blocks(r.Message.Content)
		switch {
		case r.IsCompactSummary:
			m.checkpoint(b, r, bs, n)
		case hasResult(bs):
			m.results(b, r, bs, n)
		case interruption(bs):
			m.flush(b)
			m.context(b, r, bs, n, "interruption")
			m.aborted = m.turnOpen
		case r.IsMeta:
			m.flush(b)
			m.context(b, r, bs, n, "context")
		default:
			return m.prompt(b, r, bs, n)
		}
	case r.Type == "system" && r.Subtype == "compact_boundary":
		m.closeTurn(b)
		m.boundary = &r
	}
	return foreign.Step{}
}

// assistant merges an assistant line into the pending message, completing
// the one before when the line belongs to another API message.
func (m *mapper) assistant(b *builder, r record, n int) {
	key := ""
	switch {
	case r.Message.ID != "":
		key = "id:" + r.Message.ID
	case r.RequestID != "":
		key = "req:" + r.RequestID
	}
	if m.pend != nil && (key == "" || key != m.pend.key) {
		m.flush(b)
	}
	if m.pend == nil {
		model := r.Message.Model
		if model == "" {
			model = "unknown"
		}
		base := r.Message.ID
		if base == "" {
			base = r.UUID
		}
		m.pend = &pending{key: key, id: m.uniqueID(base, n), model: model, callIDs: map[string]bool{}}
	}
	p := m.pend
	for i, bl := range blocks(r.Message.Content) {
		switch bl.Type {
		case "text":
			p.blocks = append(p.blocks, events.Text(bl.Text))
		case "thinking":
			p.blocks = append(p.blocks, events.Reasoning(events.Thought{Text: bl.Thinking, Signature: bl.Signature}))
		case "tool_use":
			c := events.Call{ID: callID(bl.ID), Name: bl.Name, Arguments: string(bl.Input)}
			if c.Name == "" {
				c.Name = "unnamed"
			}
			if len(bl.Input) == 0 {
				c.Arguments = "{}"
			}
			if p.callIDs[c.ID] {
				c.ID = callID(bl.ID + "#" + strconv.Itoa(n) + "." + strconv.Itoa(i))
			}
			p.callIDs[c.ID] = true
			p.calls = append(p.calls, c)
			p.blocks = append(p.blocks, events.ToolCallBlock(c))
		default:
			if kept, ok := keep(bl.raw); ok {
				p.blocks = append(p.blocks, kept)
			}
		}
	}
	if u := usage(r.Message.Usage); u != nil {
		p.usage = u
	}
}

// flush completes the pending assistant message: it ends the step before,
// writes the request header when the model changed, and appends the
// message in a step of its own with a tool/call per tool_use block.
func (m *mapper) flush(b *builder) {
	p := m.pend
	if p == nil {
		return
	}
	m.pend = nil
	if m.stepOpen {
		b.add(events.StepEnd(m.turn, m.step))
		m.stepOpen = false
	}
	if !m.turnOpen {
		m.openTurn(b)
	}
	if p.model != synthetic && p.model != m.model {
		reason := events.HeaderChange
		if m.model == "" {
			reason = events.HeaderInitial
		}
		model := events.Model{Provider: provider, Name: p.model}
		b.add(events.RequestHeader(events.Header{Config: events.Config{Provider: provider, Model: p.model}}, reason))
		b.add(events.RequestContext(events.ContextInfo{Model: model}))
		m.model = p.model
	}
	m.step++
	m.stepOpen, m.turnHasStep, m.answered = true, true, len(p.calls) == 0
	b.add(events.StepStart(m.turn, m.step))
	b.add(events.Assistant(m.turn, m.step, events.Reply{ID: p.id, Model: events.Model{Provider: provider, Name: p.model}, Content: p.blocks, Usage: p.usage}))
	for _, c := range p.calls {
		b.add(events.ToolCall(m.turn, m.step, c))
	}
	for _, u := range m.awaiting {
		m.marks[u] = len(m.path)
	}
	m.awaiting = m.awaiting[:0]
}

// openTurn starts the next turn.
func (m *mapper) openTurn(b *builder) {
	m.turn++
	m.step = 0
	m.turnOpen, m.turnHasStep, m.answered, m.aborted = true, false, false, false
	b.add(events.TurnStart(m.turn))
}

// closeTurn completes the pending message and ends the open step and turn
// (aborted by the user when Claude Code noted an interruption).
func (m *mapper) closeTurn(b *builder) {
	m.flush(b)
	if m.stepOpen {
		b.add(events.StepEnd(m.turn, m.step))
		m.stepOpen = false
	}
	if m.turnOpen {
		reason := events.Completed()
		if m.aborted {
			reason = events.AbortedByUser()
		}
		b.add(events.TurnEnd(m.turn, reason))
		m.turnOpen, m.aborted = false, false
	}
}

// prompt opens a turn with the user's prompt. A prompt whose parentUuid is
// an earlier line than the chain's last, with surface nodes after it, is a
// rewind: the session as it stands is forked into the next branch, and the
// prompt replaces the nodes after its parent.
func (m *mapper) prompt(b *builder, r record, bs []apiBlock, n int) foreign.Step {
	m.flush(b)
	rewindAt := -1
	if p := r.ParentUUID; p != nil && *p != "" && *p != m.leaf {
		if k, ok := m.marks[*p]; ok && k < len(m.path) {
			rewindAt = k
		}
	}
	var st foreign.Step
	switch {
	case rewindAt >= 0:
		m.closeTurn(b)
		m.branches++
		st.Branch = fmt.Sprintf("branch-%d", m.branches)
		st.BranchAfter = len(b.inputs)
		for u, k := range m.marks {
			if k > rewindAt {
				delete(m.marks, u)
			}
		}
	case m.turnOpen && !m.turnHasStep && !m.aborted:
		// the open turn has no model step yet: the prompt joins it
	default:
		m.closeTurn(b)
	}
	if !m.turnOpen {
		m.openTurn(b)
	}
	msg := events.User(events.UserMessage{ID: m.uniqueID(r.UUID, n), Kind: "prompt", Content: userBlocks(bs)})
	if rewindAt >= 0 && !m.untrusted {
		b.replaceFrom(msg, rewindAt)
	} else {
		b.add(msg)
	}
	return st
}

// context appends user content that opens no turn (isMeta lines, Claude
// Code's interruption note) as a user/message of source kind kind, in the
// open turn or a new one.
func (m *mapper) context(b *builder, r record, bs []apiBlock, n int, kind string) {
	if !m.turnOpen {
		m.openTurn(b)
	}
	b.add(events.User(events.UserMessage{ID: m.uniqueID(r.UUID, n), Kind: kind, Content: userBlocks(bs)}))
}

// hasResult reports whether a user message holds a tool_result block.
func hasResult(bs []apiBlock) bool {
	for _, b := range bs {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// results appends a tool/result per tool_result block, then the line's
// other blocks, if any, as a user/message of kind "context".
func (m *mapper) results(b *builder, r record, bs []apiBlock, n int) {
	m.flush(b)
	m.answered = false
	count := 0
	for _, bl := range bs {
		if bl.Type == "tool_result" {
			count++
		}
	}
	k := 0
	for _, bl := range bs {
		if bl.Type != "tool_result" {
			continue
		}
		k++
		base := r.UUID
		if count > 1 {
			base = fmt.Sprintf("%s-%d", r.UUID, k)
		}
		b.add(events.Tool(m.turn, m.step, events.ToolMessage{
			ID: m.uniqueID(base, n), CallID: callID(bl.ToolUseID),
			Content: resultBlocks(bl.Content), IsError: bl.IsError,
		}))
	}
	if rest := userBlocks(bs); len(rest) > 0 {
		b.add(events.User(events.UserMessage{ID: m.uniqueID(r.UUID+"-context", n), Kind: "context", Content: rest}))
	}
}

// checkpoint maps the isCompactSummary message that follows a
// compact_boundary: a compaction bracket whose checkpoint replaces the
// whole path (standalone: the turn before it is closed). With nothing on
// the surface yet (a file that starts compacted), or after a refused Step,
// the summary is appended as a user/message of kind "compact-summary".
func (m *mapper) checkpoint(b *builder, r record, bs []apiBlock, n int) {
	m.closeTurn(b)
	id := m.uniqueID(r.UUID, n)
	var text []string
	for _, bl := range bs {
		if bl.Type == "text" {
			text = append(text, bl.Text)
		}
	}
	summary := strings.Join(text, "\n")
	if len(m.path) == 0 || m.untrusted {
		b.add(events.User(events.UserMessage{ID: id, Kind: "compact-summary", Content: userBlocks(bs)}))
	} else {
		cid, tokens := r.UUID, int64(0)
		if bd := m.boundary; bd != nil {
			cid = bd.UUID
			if md := bd.CompactMetadata; md != nil {
				if v, err := strconv.ParseInt(string(md.PreTokens), 10, 64); err == nil && v >= 0 && v <= 1<<53-1 {
					tokens = v
				}
			}
		}
		if cid == "" {
			cid = "line-" + strconv.Itoa(n)
		}
		model := m.model
		if model == "" {
			model = "unknown"
		}
		start := b.add(events.Input{Type: "compaction/start", Data: compactionEdge(cid)})
		sum := b.add(events.Input{Type: "compaction/summary", Data: compactionSummary(cid, summary, m.path, tokens, model)})
		b.replaceFrom(events.Input{Type: events.TypeUserMessage, Data: checkpointMessage(id, cid, summary)}, 0, start, sum)
		b.add(events.Input{Type: "compaction/end", Data: compactionEdge(cid)})
	}
	m.boundary = nil
	clear(m.marks)
	m.awaiting = m.awaiting[:0]
}

// compactionEdge is the data of a standalone compaction/start or
// compaction/end.
func compactionEdge(cid string) []byte {
	b := jsonv.AppendString([]byte(`{"compactionId":`), cid)
	return append(b, `,"turn":null}`...)
}

// compactionSummary is the data of compaction/summary: the summary text,
// the shadowed path and Claude Code's token count before the compaction.
func compactionSummary(cid, summary string, shadowed []sdk.Seq, tokens int64, model string) []byte {
	b := jsonv.AppendString([]byte(`{"compactionId":`), cid)
	b = jsonv.AppendString(append(b, `,"summary":[{"type":"text","text":`...), summary)
	b = fmt.Appendf(b, `}],"shadowedRange":{"start":%d,"end":%d},"shadowedSeqs":[`, shadowed[0], shadowed[len(shadowed)-1])
	for i, s := range shadowed {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s), 10)
	}
	b = fmt.Appendf(b, `],"shadowedTokenCount":%d,"provider":"anthropic","model":`, tokens)
	return append(jsonv.AppendString(b, model), '}')
}

// checkpointMessage is the checkpoint user message of compaction cid.
func checkpointMessage(id, cid, summary string) []byte {
	b := jsonv.AppendString([]byte(`{"id":`), id)
	b = jsonv.AppendString(append(b, `,"role":"user","content":[{"type":"text","text":`...), summary)
	b = jsonv.AppendString(append(b, `}],"source":{"kind":"compact-checkpoint","compactionId":`...), cid)
	return append(b, "}}"...)
}

// uniqueID is a message id from base (a uuid or API message id; the line
// number when base is ""), unique within the session.
func (m *mapper) uniqueID(base string, n int) string {
	if base == "" {
		base = "line-" + strconv.Itoa(n)
	}
	id := messageID(base)
	if m.usedIDs[id] {
		id = messageID(base + "-line-" + strconv.Itoa(n))
		for k := 2; m.usedIDs[id]; k++ {
			id = messageID(fmt.Sprintf("%s-line-%d-%d", base, n, k))
		}
	}
	m.usedIDs[id] = true
	return id
}
