package session

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// planKind says what committing an event does to the surface (docs/format.md).
type planKind uint8

const (
	planNone planKind = iota
	planOpaque
	planAppend
	planReplace
	planProject
)

// plan is the validated effect of one event, computed without mutating.
type plan struct {
	kind     planKind
	shadowed []sdk.Seq // replace: the span, in surface order
	project  []*msgRec // project: decided messages
	projType string    // project: the definition's type
	projID   string    // project: the definition's identity
}

// plan runs the surface steps S2–S7 of docs/format.md (S1 is the caller's)
// for r.
func (s *Session) plan(ctx context.Context, r *record) (plan, error) {
	m := &r.meta
	if r.cls == classU {
		return plan{kind: planOpaque}, nil // S2a
	}
	if r.cls != classS {
		if m.opPresent { // S2b
			return plan{}, sdk.Errorf(sdk.CodeSurfaceOpNotAllowed, "session", "type %q (class %s) must not carry surfaceOp", r.typ, r.cls)
		}
		if m.srcPresent { // S2c
			return plan{}, sdk.Errorf(sdk.CodeSourcesNotAllowed, "session", "type %q (class %s) must not carry sourceEventSeqs", r.typ, r.cls)
		}
		if r.cls == classJ { // S6
			return s.planProjection(ctx, r)
		}
		return plan{kind: planNone}, nil
	}
	if !m.opPresent { // S2d
		return plan{}, sdk.Errorf(sdk.CodeSurfaceMarkerRequired, "session", "surface type %q requires surfaceOp", r.typ)
	}
	if !m.opOK { // S2e
		return plan{}, sdk.Errorf(sdk.CodeSurfaceOpInvalid, "session", `surfaceOp must be "append" or {"op":"replace","startSeq":Seq,"endSeq":Seq}; got %s`, r.rawValues().op.Bytes())
	}
	op := m.op
	if op.Replace && (op.StartSeq >= r.seq || op.EndSeq >= r.seq) { // S3
		return plan{}, sdk.Errorf(sdk.CodeReplaceEndpointNotEarlier, "session", "replace endpoints must be earlier than seq %d; got startSeq %d, endSeq %d", r.seq, op.StartSeq, op.EndSeq)
	}
	if err := checkSources(r); err != nil { // S4
		return plan{}, err
	}
	if r.typ == TypeDeveloperMessage { // S5
		if err := s.checkDeveloperBinding(r); err != nil {
			return plan{}, err
		}
	}
	if !op.Replace {
		return plan{kind: planAppend}, nil
	}
	shadowed, err := s.checkReplace(r)
	if err != nil {
		return plan{}, err
	}
	return plan{kind: planReplace, shadowed: shadowed}, nil
}

// checkSources runs S4a–S4e.
func checkSources(r *record) error {
	m := &r.meta
	if !m.srcPresent {
		return nil
	}
	if r.typ == TypeAssistantMessage { // S4a
		return sdk.Errorf(sdk.CodeAssistantSourcesForbidden, "session", "assistant/message at seq %d must not carry sourceEventSeqs", r.seq)
	}
	if !m.srcOK { // S4b
		return sdk.Errorf(sdk.CodeSourcesInvalid, "session", "sourceEventSeqs must be an array of Seq; offending element %s", badSourceElement(r.rawValues().src))
	}
	if len(m.sources) == 0 { // S4c
		return sdk.Errorf(sdk.CodeSourcesEmpty, "session", "sourceEventSeqs at seq %d is present and empty", r.seq)
	}
	if dup, ok := firstDuplicate(m.sources); ok { // S4d
		return sdk.Errorf(sdk.CodeSourcesDuplicate, "session", "sourceEventSeqs lists %d more than once", dup)
	}
	for _, src := range m.sources { // S4e
		if src >= r.seq {
			return sdk.Errorf(sdk.CodeSourcesNotEarlier, "session", "sourceEventSeqs element %d is not earlier than seq %d", src, r.seq)
		}
	}
	return nil
}

func badSourceElement(v jsonv.Value) string {
	if v.Kind() != jsonv.Array {
		return string(v.Bytes()) + " (not an array)"
	}
	for i, el := range v.Elements() {
		if _, ok := seqValue(el); !ok {
			return "[" + strconv.Itoa(i) + "] = " + string(el.Bytes())
		}
	}
	return "(none)"
}

func firstDuplicate(seqs []sdk.Seq) (sdk.Seq, bool) {
	if len(seqs) <= 16 {
		for i := 1; i < len(seqs); i++ {
			for j := 0; j < i; j++ {
				if seqs[i] == seqs[j] {
					return seqs[i], true
				}
			}
		}
		return 0, false
	}
	seen := make(map[sdk.Seq]struct{}, len(seqs))
	for _, x := range seqs {
		if _, ok := seen[x]; ok {
			return x, true
		}
		seen[x] = struct{}{}
	}
	return 0, false
}

// checkReplace runs S7a–S7h and returns the shadowed span.
func (s *Session) checkReplace(r *record) ([]sdk.Seq, error) {
	op := r.meta.op
	l := &s.surf
	if !l.isNode(op.StartSeq) { // S7a
		return nil, sdk.Errorf(sdk.CodeReplaceStartNotFound, "session", "replace startSeq %d is not a current surface node", op.StartSeq)
	}
	if !l.isNode(op.EndSeq) { // S7b
		return nil, sdk.Errorf(sdk.CodeReplaceEndNotFound, "session", "replace endSeq %d is not a current surface node", op.EndSeq)
	}
	if l.before(op.EndSeq, op.StartSeq) { // S7c
		return nil, sdk.Errorf(sdk.CodeReplaceReversed, "session", "replace span is reversed in surface order: startSeq %d at position %d comes after endSeq %d at position %d",
			op.StartSeq, l.position(op.StartSeq), op.EndSeq, l.position(op.EndSeq))
	}
	shadowed := l.span(op.StartSeq, op.EndSeq)
	if missing := uncovered(shadowed, r.meta.sources); len(missing) > 0 { // S7d
		parts := make([]string, len(missing))
		for i, m := range missing {
			parts[i] = strconv.FormatInt(int64(m), 10)
		}
		return nil, sdk.Errorf(sdk.CodeReplaceCoverage, "session", "sourceEventSeqs must include every shadowed node; missing %s", strings.Join(parts, ", "))
	}
	if r.typ == TypeToolResult {
		if len(shadowed) != 1 { // S7e
			return nil, sdk.Errorf(sdk.CodeToolResultRewriteSingle, "session", "a tool/result rewrite must shadow exactly one node; the span %d..%d shadows %d", op.StartSeq, op.EndSeq, len(shadowed))
		}
		target := s.recordAt(shadowed[0])
		if target.typ != TypeToolResult { // S7f
			return nil, sdk.Errorf(sdk.CodeToolResultRewriteTarget, "session", "a tool/result rewrite must target a tool/result; seq %d is %s", target.seq, target.typ)
		}
		if ptr, differ := rewriteDifference(target.dataView(), r.dataView()); differ { // S7g
			return nil, sdk.Errorf(sdk.CodeToolResultRewriteOnlyContent, "session", "a tool/result rewrite may change only message.content; first difference at %s", ptr)
		}
	}
	if sdk.Seq(l.head) == op.StartSeq && s.recordAt(op.StartSeq).typ == TypeSystemMessage { // S7h
		if r.typ != TypeSystemMessage || op.StartSeq != op.EndSeq {
			return nil, sdk.Errorf(sdk.CodeSystemNode0Protected, "session", "the system message at node 0 may be replaced only by one system/message replacing it alone; got %s replacing %d..%d", r.typ, op.StartSeq, op.EndSeq)
		}
	}
	return shadowed, nil
}

// uncovered returns the shadowed seqs missing from sources, ascending.
func uncovered(shadowed, sources []sdk.Seq) []sdk.Seq {
	var missing []sdk.Seq
	if len(sources) <= 16 {
		for _, x := range shadowed {
			if !slices.Contains(sources, x) {
				missing = append(missing, x)
			}
		}
	} else {
		set := make(map[sdk.Seq]struct{}, len(sources))
		for _, x := range sources {
			set[x] = struct{}{}
		}
		for _, x := range shadowed {
			if _, ok := set[x]; !ok {
				missing = append(missing, x)
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// rewriteDifference compares two tool/result data objects with
// message.content set to null in both (rule S7g).
func rewriteDifference(a, b jsonv.Value) (string, bool) {
	if p, ok := membersDifference(a, b, "", func(name jsonv.Value) bool { return name.StrEqual("message") }, func(av, bv jsonv.Value) (string, bool) {
		return membersDifference(av, bv, "/message", func(name jsonv.Value) bool { return name.StrEqual("content") }, nil)
	}); ok {
		return p, true
	}
	return "", false
}

// membersDifference compares two objects member by member; members for which
// special returns true are compared by inner (or skipped when inner is nil).
func membersDifference(a, b jsonv.Value, prefix string, special func(jsonv.Value) bool, inner func(a, b jsonv.Value) (string, bool)) (string, bool) {
	if a.Kind() != jsonv.Object || b.Kind() != jsonv.Object {
		if jsonv.Equal(a, b) {
			return "", false
		}
		return prefix, true
	}
	for k, av := range a.Members() {
		name, _ := k.Str()
		bv := b.Get(name)
		if special(k) {
			if inner == nil {
				continue
			}
			if !bv.Exists() {
				return prefix + "/" + pointerToken(name), true
			}
			if p, ok := inner(av, bv); ok {
				return p, true
			}
			continue
		}
		if !bv.Exists() {
			return prefix + "/" + pointerToken(name), true
		}
		if p, ok := jsonv.FirstDifference(av, bv); ok {
			return prefix + "/" + pointerToken(name) + p, true
		}
	}
	for k := range b.Members() {
		name, _ := k.Str()
		if !a.Get(name).Exists() && !(special(k) && inner == nil) {
			return prefix + "/" + pointerToken(name), true
		}
	}
	return "", false
}

func pointerToken(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// recordAt returns the record with the given seq, which must exist: a
// committed one, or a pending member of the group being appended.
func (s *Session) recordAt(seq sdk.Seq) *record {
	i := int(seq - s.surf.base)
	if n := len(s.records); i >= n {
		return s.pending[i-n]
	}
	return s.records[i]
}
