package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func init() {
	commands = append(commands, newWhyCmd)
}

// whyNode is one event of a provenance tree: what its parent was derived
// from, and recursively what it was derived from.
type whyNode struct {
	Seq  int64  `json:"seq"`
	Type string `json:"type"`
	// Relation says what the event is to its parent: "source" (listed in
	// the parent's sourceEventSeqs), "shadowed" (a node the parent's
	// replacement took off the surface), "summarized" (in the shadowedSeqs
	// of a compaction/summary or compaction/prune), "call" (the tool/call
	// that started the call a tool/result answers) or "answers" (the
	// assistant/message that requested it). Empty for the root.
	Relation string   `json:"relation,omitempty"`
	Replace  *whySpan `json:"replace,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	// Repeated marks an event whose provenance is shown earlier in the tree.
	Repeated    bool       `json:"repeated,omitempty"`
	DerivedFrom []*whyNode `json:"derivedFrom,omitempty"`
}

// whySpan is the span a replacement shadowed: its surfaceOp endpoints.
type whySpan struct {
	StartSeq int64 `json:"startSeq"`
	EndSeq   int64 `json:"endSeq"`
}

// newWhyCmd is `logbook why ID SEQ`.
func newWhyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:         "why ID SEQ",
		Annotations: offersJSONAnnotation(),
		Short:       "Show what event SEQ was derived from, recursively (tree; --json)",
		Long: "why shows the provenance of an event: the events in its sourceEventSeqs,\n" +
			"recursively; for a replacement, the span it shadowed; for a compaction summary or a\n" +
			"prune, the events it covers; for a tool result (also one a repair wrote), the\n" +
			"tool/call that started the call and the assistant message that requested it.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			seq, err := parseSeq(args[1])
			if err != nil {
				return sdk.Errorf(sdk.CodeUsage, "why", "SEQ: %v", err)
			}
			e, err := a.engine(ctx)
			if err != nil {
				return err
			}
			v, err := a.storedView(ctx, cmd.Name(), args[0], nil)
			if err != nil {
				return err
			}
			if seq >= int64(v.Len()) {
				return boundaryError(v.ID(), seq, int64(v.Len()))
			}
			events := v.Events().Slice()
			fold, err := session.Fold(ctx, events, e.Projections)
			if err != nil {
				return err
			}
			p := newProvenance(events, fold.Replacements)
			root := p.node(seq, "")
			if a.json {
				return writeJSON(a.stdout, root)
			}
			w := bufio.NewWriter(a.stdout)
			writeWhyTree(w, root, "", "")
			return w.Flush()
		},
	}
}

// provenance indexes a log for why.
type provenance struct {
	events   []session.Event
	shadowed map[sdk.Seq]map[sdk.Seq]bool // replacement seq → the nodes it shadowed
	calls    map[string][]sdk.Seq         // call id → tool/call seqs, ascending
	requests map[string][]sdk.Seq         // call id → assistant/message seqs requesting it, ascending
	seen     map[sdk.Seq]*whyNode         // events already expanded
}

// newProvenance indexes events: the shadowed spans of the replacements, and
// per call id the tool/call events and the assistant messages requesting it.
func newProvenance(events []session.Event, reps []session.Replacement) *provenance {
	p := &provenance{events: events, shadowed: map[sdk.Seq]map[sdk.Seq]bool{}, calls: map[string][]sdk.Seq{},
		requests: map[string][]sdk.Seq{}, seen: map[sdk.Seq]*whyNode{}}
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
func (p *provenance) node(seq int64, relation string) *whyNode {
	ev := p.events[seq]
	n := &whyNode{Seq: seq, Type: ev.Type(), Relation: relation, Summary: eventSummary(ev)}
	if op, ok := ev.SurfaceOp(); ok && op.Replace {
		n.Replace = &whySpan{StartSeq: int64(op.StartSeq), EndSeq: int64(op.EndSeq)}
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
		rel := "source"
		if p.shadowed[ev.Seq()][s] {
			rel = "shadowed"
		}
		child(s, rel)
	}
	d := ev.DataView()
	switch ev.Type() {
	case session.TypeCompactionSummary, session.TypeCompactionPrune:
		for _, el := range d.Get("shadowedSeqs").Elements() {
			if s, ok := el.Int(); ok {
				child(sdk.Seq(s), "summarized")
			}
		}
	case session.TypeToolResult:
		id, _ := d.Get("message").Get("toolCallId").Str()
		if s, ok := latestBefore(p.calls[id], ev.Seq()); ok {
			child(s, "call")
		}
		if s, ok := latestBefore(p.requests[id], ev.Seq()); ok {
			child(s, "answers")
		}
	}
	return n
}

// eventSummary describes an event in a few words for the tree.
func eventSummary(ev session.Event) string {
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
	text := strings.Join(blockLines(content), " ")
	if r := []rune(text); len(r) > 60 {
		text = string(r[:60]) + "…"
	}
	return strconv.Quote(text)
}

// writeWhyTree renders a provenance tree as indented text, one event per
// line: `[relation] seq type [replace a..b]: summary`.
func writeWhyTree(w io.Writer, n *whyNode, lead, childLead string) {
	line := lead
	if n.Relation != "" {
		line += n.Relation + " "
	}
	line += fmt.Sprintf("%d %s", n.Seq, n.Type)
	if n.Replace != nil {
		line += fmt.Sprintf(" replace %d..%d", n.Replace.StartSeq, n.Replace.EndSeq)
	}
	if n.Summary != "" {
		line += ": " + n.Summary
	}
	if n.Repeated {
		line += " (see above)"
	}
	fmt.Fprintln(w, line)
	for i, c := range n.DerivedFrom {
		if i == len(n.DerivedFrom)-1 {
			writeWhyTree(w, c, childLead+"└─ ", childLead+"   ")
		} else {
			writeWhyTree(w, c, childLead+"├─ ", childLead+"│  ")
		}
	}
}
