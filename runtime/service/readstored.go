package service

import (
	"context"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/runtime/internal/provenance"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// ReadStored restores session id from the primary as a read-only view:
// the whole stored log when at is nil, else the prefix [0, *at], the
// session as it was right after event *at (a seq past the end is
// INVALID_BOUNDARY). It takes no ownership, adds nothing (no closers, no
// marker) and writes nothing, so it reads beside a writer in another
// process. torn is the torn tail the stored log ends in, which the view
// leaves out (zero when none); the next write open cuts it.
func (s *Service) ReadStored(ctx context.Context, id string, at *sdk.Seq) (v *Session, torn sdk.Torn, err error) {
	ss, torn, err := s.e.Store.View(ctx, id, at)
	if err != nil {
		return nil, torn, err
	}
	return &Session{svc: s, s: ss}, torn, nil
}

// Message returns the model message event seq records itself (before any
// rewrite, pruning or projection); ok is false when it records none.
func (s *Session) Message(seq sdk.Seq) (msg json.RawMessage, ok bool) {
	if seq < 0 || sdk.Offset(seq) >= s.s.Len() {
		return nil, false
	}
	m, ok := session.MessageOf(s.s.Events().At(int(seq)), nil)
	if !ok {
		return nil, false
	}
	return m.SharedJSON(), true
}

// WhyNode is one event of a provenance tree: what the event was derived
// from, recursively. Its JSON form is what `logbook why --json` prints and
// GET /v1/sessions/{id}/why serves: members with a zero value are left out.
type WhyNode struct {
	// Seq is the event's seq.
	Seq int64 `json:"seq"`
	// Type is its event type.
	Type string `json:"type"`
	// Relation says what the event is to its parent: "source" (listed in
	// its sourceEventSeqs), "shadowed" (taken off the surface by its
	// replacement), "summarized" (covered by a compaction), "call" (the
	// tool/call a tool/result answers) or "answers" (the assistant message
	// that requested the call); empty for the root.
	Relation string `json:"relation,omitempty"`
	// Replace is the span the event's replacement shadowed, when it has a
	// surfaceOp replace.
	Replace *WhySpan `json:"replace,omitempty"`
	// Summary describes the event in a few words.
	Summary string `json:"summary,omitempty"`
	// Repeated marks an event whose provenance is shown earlier in the tree.
	Repeated bool `json:"repeated,omitempty"`
	// DerivedFrom are the events this one was derived from, each with its
	// Relation to it; none for an event that derives from nothing (or a
	// Repeated one).
	DerivedFrom []*WhyNode `json:"derivedFrom,omitempty"`
}

// WhySpan is the span a replacement shadowed: its surfaceOp endpoints,
// inclusive.
type WhySpan struct {
	// StartSeq is the first surface node shadowed.
	StartSeq int64 `json:"startSeq"`
	// EndSeq is the last surface node shadowed.
	EndSeq int64 `json:"endSeq"`
}

// Why returns the provenance tree of event seq of the log. A seq past the
// end is INVALID_BOUNDARY.
func (s *Session) Why(ctx context.Context, seq int64) (*WhyNode, error) {
	root, err := provenance.Tree(ctx, s.s.Events().Slice(), s.svc.e.Projections, seq)
	if err != nil {
		return nil, err
	}
	return whyNode(root), nil
}

// whyNode converts a provenance tree to the service's.
func whyNode(n *provenance.Node) *WhyNode {
	out := &WhyNode{Seq: n.Seq, Type: n.Type, Relation: n.Relation, Summary: n.Summary, Repeated: n.Repeated}
	if n.Replace != nil {
		out.Replace = &WhySpan{StartSeq: n.Replace.StartSeq, EndSeq: n.Replace.EndSeq}
	}
	for _, c := range n.DerivedFrom {
		out.DerivedFrom = append(out.DerivedFrom, whyNode(c))
	}
	return out
}

// ContentLines renders a message's content blocks as text lines, the way
// Why's summaries and logbook's text views show them: text as written,
// reasoning, tool calls and tool changes marked, any other block by its
// type.
func ContentLines(content jsonv.Value) []string { return provenance.ContentLines(content) }
