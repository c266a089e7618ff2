package service

import (
	"context"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/provenance"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// StoredView is a stored session restored read-only: the whole log, or a
// prefix of it, with the views the log derives to. It takes no ownership
// and writes nothing, so it reads beside a writer in another process, and
// it is a snapshot: what is stored later does not show. Its methods are
// safe for concurrent use.
type StoredView struct {
	v    *session.Session
	defs session.Projections
}

// ReadStored restores session id from the primary, read-only: the whole stored
// log when at is nil, else the prefix [0, *at], the session as it was
// right after event *at (a seq past the end is INVALID_BOUNDARY). Nothing
// is added (no closers, no marker). torn is the torn tail the stored log
// ends in, which the view leaves out (zero when none); the next write open
// cuts it.
func (s *Service) ReadStored(ctx context.Context, id string, at *sdk.Seq) (v *StoredView, torn sdk.Torn, err error) {
	ss, torn, err := s.e.Store.View(ctx, id, at)
	if err != nil {
		return nil, torn, err
	}
	return &StoredView{v: ss, defs: s.e.Projections}, torn, nil
}

// ID returns the session's id.
func (v *StoredView) ID() string { return v.v.ID() }

// Len returns the number of events of the view.
func (v *StoredView) Len() int64 { return int64(v.v.Len()) }

// Header returns the session header.
func (v *StoredView) Header() sdk.Header { return v.v.Header() }

// Events returns the log, in seq order; Data and Envelope are the stored
// bytes, shared, and must not be modified.
func (v *StoredView) Events() []events.Event {
	evs := v.v.Events().Slice()
	out := make([]events.Event, len(evs))
	for i, e := range evs {
		out[i] = e.Shared()
	}
	return out
}

// Transcript returns every event that appended a message to the surface,
// with that message as recorded, in log order.
func (v *StoredView) Transcript() []events.TranscriptEntry {
	t := v.v.Transcript()
	out := make([]events.TranscriptEntry, 0, t.Len())
	for _, e := range t.All() {
		out = append(out, events.TranscriptEntry{Seq: e.Seq, Type: e.Type, Message: e.Message.SharedJSON()})
	}
	return out
}

// Surface returns the seqs of the surface nodes, in surface order. The
// only error is PROJECTION_REMOVED: the log uses a message projection
// whose plugin is no longer loaded.
func (v *StoredView) Surface() ([]sdk.Seq, error) {
	surf, err := v.v.Surface()
	if err != nil {
		return nil, err
	}
	return surf.Nodes(), nil
}

// Messages returns the model messages the surface derives to, as their
// canonical JSON (shared; not to be modified). Its only error is
// Surface's.
func (v *StoredView) Messages() ([]json.RawMessage, error) {
	ml, err := v.v.Messages()
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, 0, ml.Len())
	for _, m := range ml.All() {
		out = append(out, m.SharedJSON())
	}
	return out, nil
}

// Message returns the model message event seq records itself (before any
// rewrite, pruning or projection); ok is false when it records none.
func (v *StoredView) Message(seq sdk.Seq) (msg json.RawMessage, ok bool) {
	if seq < 0 || int64(seq) >= v.Len() {
		return nil, false
	}
	m, ok := session.MessageOf(v.v.Events().At(int(seq)), nil)
	if !ok {
		return nil, false
	}
	return m.SharedJSON(), true
}

// RequestHeader returns the folded request header as JSON, null when the
// log has none.
func (v *StoredView) RequestHeader() []byte { return v.v.AppendRequestHeaderJSON(nil) }

// RequestContext returns the folded request context as JSON, null when
// the log has none.
func (v *StoredView) RequestContext() []byte { return v.v.AppendRequestContextJSON(nil) }

// WhyNode is one event of a provenance tree: what the event was derived
// from, recursively. Its JSON form is what `logbook why --json` prints and
// GET /v1/sessions/{id}/why serves: members with a zero value are left out.
type WhyNode struct {
	Seq  int64  `json:"seq"`
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
	Repeated    bool       `json:"repeated,omitempty"`
	DerivedFrom []*WhyNode `json:"derivedFrom,omitempty"`
}

// WhySpan is the span a replacement shadowed: its surfaceOp endpoints,
// inclusive.
type WhySpan struct {
	StartSeq int64 `json:"startSeq"`
	EndSeq   int64 `json:"endSeq"`
}

// Why returns the provenance tree of event seq of the view. A seq past the
// end is INVALID_BOUNDARY.
func (v *StoredView) Why(ctx context.Context, seq int64) (*WhyNode, error) {
	root, err := provenance.Tree(ctx, v.v.Events().Slice(), v.defs, seq)
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
