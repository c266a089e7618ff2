package provenance

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The relations of a node to its parent (Node.Relation).
const (
	RelationSource     = "source"     // listed in the parent's sourceEventSeqs
	RelationShadowed   = "shadowed"   // a node the parent's replacement took off the surface
	RelationSummarized = "summarized" // in the shadowedSeqs of a compaction/summary or compaction/prune
	RelationCall       = "call"       // the tool/call that started the call a tool/result answers
	RelationAnswers    = "answers"    // the assistant/message that requested the call
)

// Node is one event of a provenance tree. Its JSON form is what `logbook
// why --json` prints: members with a zero value are left out.
type Node struct {
	Seq  int64  `json:"seq"`
	Type string `json:"type"`
	// Relation says what the event is to its parent (the Relation
	// constants); empty for the root.
	Relation string `json:"relation,omitempty"`
	// Replace is the span the event's replacement shadowed, when it has a
	// surfaceOp replace.
	Replace *Span `json:"replace,omitempty"`
	// Summary describes the event in a few words.
	Summary string `json:"summary,omitempty"`
	// Repeated marks an event whose provenance is shown earlier in the tree.
	Repeated    bool    `json:"repeated,omitempty"`
	DerivedFrom []*Node `json:"derivedFrom,omitempty"`
}

// Span is the span a replacement shadowed: its surfaceOp endpoints,
// inclusive.
type Span struct {
	StartSeq int64 `json:"startSeq"`
	EndSeq   int64 `json:"endSeq"`
}

// Tree returns the provenance tree of event seq of events (a log,
// contiguous from seq 0), folded with the projection definitions defs to
// find what each replacement shadowed. A seq past the end of the log is
// INVALID_BOUNDARY; a fold's error is returned as it is.
func Tree(ctx context.Context, events []session.Event, defs session.Projections, seq int64) (*Node, error) {
	if seq < 0 || seq >= int64(len(events)) {
		last := "none"
		if len(events) > 0 {
			last = strconv.Itoa(len(events) - 1)
		}
		return nil, sdk.Errorf(sdk.CodeInvalidBoundary, "provenance", "seq %d is past the end of the log (last seq %s)", seq, last).WithSeq(seq)
	}
	fold, err := session.Fold(ctx, events, defs)
	if err != nil {
		return nil, err
	}
	return newIndex(events, fold.Replacements).node(seq, ""), nil
}

// index indexes a log for Tree.
type index struct {
	events   []session.Event
	shadowed map[sdk.Seq]map[sdk.Seq]bool // replacement seq → the nodes it shadowed
	calls    map[string][]sdk.Seq         // call id → tool/call seqs, ascending
	requests map[string][]sdk.Seq         // call id → assistant/message seqs requesting it, ascending
	seen     map[sdk.Seq]*Node            // events already expanded
}

// newIndex indexes events: the shadowed spans of the replacements, and per
// call id the tool/call events and the assistant messages requesting it.
func newIndex(events []session.Event, reps []session.Replacement) *index {
	p := &index{events: events, shadowed: map[sdk.Seq]map[sdk.Seq]bool{}, calls: map[string][]sdk.Seq{},
		requests: map[string][]sdk.Seq{}, seen: map[sdk.Seq]*Node{}}
	for _, r := range reps {
		set := map[sdk.Seq]bool{}
		for _, s := range r.Shadowed {
			set[s] = true
		}
		p.shadowed[r.Seq] = set
	}
	for _, ev := range events {
		d := ev.DataView()
		switch ev.Type() {
		case session.TypeToolCall:
			if id, ok := d.Get("callId").Str(); ok {
				p.calls[id] = append(p.calls[id], ev.Seq())
			}
		case session.TypeAssistantMessage:
			for _, b := range d.Get("message").Get("content").Elements() {
				if b.Get("type").StrEqual("tool-call") {
					if id, ok := b.Get("id").Str(); ok {
						p.requests[id] = append(p.requests[id], ev.Seq())
					}
				}
			}
		}
	}
	return p
}

// latestBefore returns the last of seqs (ascending) below limit.
func latestBefore(seqs []sdk.Seq, limit sdk.Seq) (sdk.Seq, bool) {
	for i := len(seqs) - 1; i >= 0; i-- {
		if seqs[i] < limit {
			return seqs[i], true
		}
	}
	return 0, false
}

// node builds the provenance tree of seq. Each event is expanded once; a
// later reference to one that was derived from anything is marked Repeated.
func (p *index) node(seq int64, relation string) *Node {
	ev := p.events[seq]
	n := &Node{Seq: seq, Type: ev.Type(), Relation: relation, Summary: summary(ev)}
	if op, ok := ev.SurfaceOp(); ok && op.Replace {
		n.Replace = &Span{StartSeq: int64(op.StartSeq), EndSeq: int64(op.EndSeq)}
	}
	if prev, ok := p.seen[ev.Seq()]; ok {
		n.Repeated = len(prev.DerivedFrom) > 0
		return n
	}
	p.seen[ev.Seq()] = n
	listed := map[sdk.Seq]bool{}
	child := func(s sdk.Seq, rel string) {
		if s < 0 || s >= ev.Seq() || listed[s] {
			return
		}
		listed[s] = true
		n.DerivedFrom = append(n.DerivedFrom, p.node(int64(s), rel))
	}
	for _, s := range ev.SourceEventSeqs() {
		rel := RelationSource
		if p.shadowed[ev.Seq()][s] {
			rel = RelationShadowed
		}
		child(s, rel)
	}
	d := ev.DataView()
	switch ev.Type() {
	case session.TypeCompactionSummary, session.TypeCompactionPrune:
		for _, el := range d.Get("shadowedSeqs").Elements() {
			if s, ok := el.Int(); ok {
				child(sdk.Seq(s), RelationSummarized)
			}
		}
	case session.TypeToolResult:
		id, _ := d.Get("message").Get("toolCallId").Str()
		if s, ok := latestBefore(p.calls[id], ev.Seq()); ok {
			child(s, RelationCall)
		}
		if s, ok := latestBefore(p.requests[id], ev.Seq()); ok {
			child(s, RelationAnswers)
		}
	}
	return n
}

// summary describes an event in a few words for the tree.
func summary(ev session.Event) string {
	d := ev.DataView()
	switch ev.Type() {
	case session.TypeToolCall:
		name, _ := d.Get("name").Str()
		id, _ := d.Get("callId").Str()
		return fmt.Sprintf("%s, call %s", name, id)
	case session.TypeToolResult:
		id, _ := d.Get("message").Get("toolCallId").Str()
		s := "call " + id
		if code, ok := d.Get("error").Get("code").Str(); ok {
			s += ", " + code
		}
		return s + " " + preview(d.Get("message").Get("content"))
	case session.TypeCompactionStart, session.TypeCompactionSummary, session.TypeCompactionEnd:
		id, _ := d.Get("compactionId").Str()
		return "compaction " + id
	case session.TypeTurnStart, session.TypeTurnEnd, session.TypeStepStart, session.TypeStepEnd:
		return string(ev.Data())
	}
	msg := d.Get("message")
	if ev.Type() == session.TypeUserMessage {
		msg = d
	}
	role, ok := msg.Get("role").Str()
	if !ok {
		return ""
	}
	return role + " " + preview(msg.Get("content"))
}

// preview quotes the start of a message's content, on one line.
func preview(content jsonv.Value) string {
	text := strings.Join(ContentLines(content), " ")
	if r := []rune(text); len(r) > 60 {
		text = string(r[:60]) + "…"
	}
	return strconv.Quote(text)
}

// ContentLines renders a message's content blocks as text lines, the way
// the tree's summaries and logbook's text views show them: text as written,
// reasoning, tool calls and tool changes marked, any other block by its
// type.
func ContentLines(content jsonv.Value) []string {
	var lines []string
	for _, b := range content.Elements() {
		typ, _ := b.Get("type").Str()
		text, _ := b.Get("text").Str()
		var s string
		switch typ {
		case "text":
			s = text
		case "reasoning":
			s = "(reasoning) " + text
		case "tool-call":
			name, _ := b.Get("name").Str()
			args, _ := b.Get("arguments").Str()
			id, _ := b.Get("id").Str()
			s = fmt.Sprintf("→ %s(%s) [call %s]", name, args, id)
		case "image":
			media, _ := b.Get("mediaType").Str()
			s = "[image " + media + "]"
		case "tool-addition", "tool-removal":
			name, _ := b.Get("toolName").Str()
			s = "[" + typ + " " + name + "]"
		default:
			s = "[" + typ + "]"
		}
		lines = append(lines, strings.Split(s, "\n")...)
	}
	return lines
}
