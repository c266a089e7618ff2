package session

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Projection is one registered message-projection definition (docs/plugins.md). It
// must be a deterministic pure function of its input: restore calls it again.
type Projection interface {
	// Identity names the definition's provider (plugin name, protocol
	// version, binary digest); a different identity counts as a removal.
	Identity() string
	// Project decides replacement messages for some of the targets.
	Project(ctx context.Context, in ProjectInput) ([]ProjectTarget, error)
}

// ProjectInput is what a projection definition sees (docs/plugins.md step 3).
type ProjectInput struct {
	SessionID string
	Event     Event
	Nodes     []sdk.Seq       // the current surface, in order
	Targets   []ProjectTarget // each target with its current derived message
}

// ProjectTarget is a node with a message: the current derived message in a
// request, the decided message in a reply.
type ProjectTarget struct {
	Seq       sdk.Seq
	EventType string
	Message   []byte
}

// Projections resolves projection definitions by event type.
type Projections interface {
	Lookup(eventType string) (Projection, bool)
}

// ProjectionMap is a fixed set of definitions keyed by event type.
type ProjectionMap map[string]Projection

// Lookup returns the definition registered for eventType.
func (m ProjectionMap) Lookup(eventType string) (Projection, bool) {
	p, ok := m[eventType]
	return p, ok
}

func (s *Session) lookupProjection(typ string) (Projection, bool) {
	if s.opts.Projections == nil {
		return nil, false
	}
	return s.opts.Projections.Lookup(typ)
}

func projectionRequired(typ, owner string) error {
	return sdk.Errorf(sdk.CodeProjectionRequired, "session", "no definition is registered for %q; load the plugin that owns it (%q)", typ, owner)
}

// projectionRemoved reports PROJECTION_REMOVED when a definition the session
// used is no longer registered, or is served by another identity.
func (s *Session) projectionRemoved(p *published) error {
	for typ, id := range p.usedProj {
		p, ok := s.lookupProjection(typ)
		if !ok || p.Identity() != id {
			return &sdk.Error{Code: sdk.CodeProjectionRemoved, Op: "session", SessionID: s.id,
				Detail: "the definition of " + typ + " that this session used is no longer registered; release the session and open it again with the plugin loaded"}
		}
	}
	return nil
}

// planProjection runs step S6 (docs/plugins.md).
func (s *Session) planProjection(ctx context.Context, r *record) (plan, error) {
	def, ok := s.lookupProjection(r.typ)
	if !ok {
		owner, _, _ := splitOwned(r.typ, ProjectionPrefix)
		return plan{}, projectionRequired(r.typ, owner)
	}
	targets := r.dataView().Get("targets")
	in := ProjectInput{SessionID: s.id, Event: Event{r}, Nodes: s.surf.appendNodes(nil)}
	byTarget := make(map[sdk.Seq]*msgRec, targets.Len())
	for _, t := range targets.Elements() {
		seq, _ := seqValue(t)
		cur := s.currentMessage(seq)
		if cur == nil {
			return plan{}, sdk.Errorf(sdk.CodeProjectionInvalid, "session", "projection target %d is not a current node with a message", seq)
		}
		byTarget[seq] = cur
		in.Targets = append(in.Targets, ProjectTarget{Seq: seq, EventType: cur.typ, Message: append([]byte(nil), cur.json...)})
	}
	out, err := def.Project(ctx, in)
	if err != nil {
		return plan{}, &sdk.Error{Code: sdk.CodeProjectionFailed, Op: "session", Detail: "definition of " + r.typ + " failed", Err: err}
	}
	pl := plan{kind: planProject, projType: r.typ, projID: def.Identity()}
	for _, m := range out {
		cur, ok := byTarget[m.Seq]
		if !ok {
			return plan{}, sdk.Errorf(sdk.CodeProjectionInvalid, "session", "projection returned seq %d, which is not a target", m.Seq)
		}
		doc, err := jsonv.Parse(m.Message, jsonv.Options{})
		if err != nil {
			return plan{}, &sdk.Error{Code: sdk.CodeProjectionInvalid, Op: "session", Detail: "projected message for target is not lossless JSON", Err: err}
		}
		val := doc.Root()
		if err := checkMessage(cur.typ, val); err != nil {
			return plan{}, &sdk.Error{Code: sdk.CodeProjectionInvalid, Op: "session", Detail: "projected message fails the message rules", Err: err}
		}
		curVal := cur.view()
		if !rawEqual(val.Get("id"), curVal.Get("id")) || !rawEqual(val.Get("role"), curVal.Get("role")) {
			return plan{}, sdk.Errorf(sdk.CodeProjectionInvalid, "session", "projection for target %d changed the message id or role", m.Seq)
		}
		pl.project = append(pl.project, newMsgRec(m.Seq, cur.typ, doc.Buffer(), val))
	}
	return pl, nil
}

// currentMessage returns the derived message of a current node, or nil.
func (s *Session) currentMessage(seq sdk.Seq) *msgRec {
	if !s.surf.isNode(seq) {
		return nil
	}
	if m, ok := s.projected[seq]; ok {
		return m
	}
	r := s.recordAt(seq)
	if r.yields {
		return r.msg
	}
	return nil
}
