package compaction

import (
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// SelectRange chooses the span to compact so that at least retainTokens of
// the newest context stay verbatim (docs/compaction.md). meas must describe the
// current surface; its token estimates are the ones used.
//
//  1. meas.Nodes' seqs equal the current surface element-wise, else
//     COMPACTION_SURFACE_MISMATCH;
//  2. first = 1 when node 0 is a system/message (the system prompt is never
//     compacted), else 0;
//  3. walking back from the last node to first and summing tokens, keep is
//     the first position where the sum reaches retainTokens; none → not ok;
//  4. keep ≤ first → not ok;
//  5. keep moves earlier while the cut before it is unbalanced (docs/compaction.md);
//     reaching first → not ok;
//  6. the span is nodes[first] … nodes[keep−1], inclusive, in surface order.
//
// With retainTokens 0 the newest node is kept and the span is the largest
// balanced head. ok false with a nil error means there is nothing to compact;
// errors are COMPACTION_SURFACE_MISMATCH, TOOL_PAIRING_CORRUPT and the
// session's. Cost: O(1) for a measurement taken by this Meter at the current
// state, else O(surface length) to compare; plus O(surface length) at most for
// the walks.
func (m *Meter) SelectRange(meas Measurement, retainTokens int64) (start, end sdk.Seq, ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return 0, 0, false, err
	}
	if err := m.checkSurface(meas); err != nil {
		return 0, 0, false, err
	}
	n := len(m.nodes)
	first := 0
	if n > 0 && m.typeOf(m.nodes[0].Seq) == session.TypeSystemMessage {
		first = 1
	}
	keep := -1
	var acc int64
	for i := n - 1; i >= first; i-- {
		acc += meas.Nodes[i].Tokens
		if acc >= retainTokens {
			keep = i
			break
		}
	}
	if keep <= first {
		return 0, 0, false, nil
	}
	for keep > first {
		balanced, err := m.balancedCut(keep)
		if err != nil {
			return 0, 0, false, err
		}
		if balanced {
			break
		}
		keep--
	}
	if keep == first {
		return 0, 0, false, nil
	}
	return m.nodes[first].Seq, m.nodes[keep-1].Seq, true, nil
}

// CheckRegion checks an explicitly chosen span (docs/compaction.md): start and end
// are current nodes, start is not after end in surface order, and the cuts
// before start and after end are balanced — else
// COMPACTION_UNBALANCED_BOUNDARY naming the offending seq (wrapping
// TOOL_PAIRING_SEQ_NOT_FOUND when it is not a node). A span starting at node
// 0 when node 0 is a system/message → SYSTEM_NODE0_PROTECTED, the rule the
// checkpoint's append would break (docs/format.md S7h). A corrupt pairing count →
// TOOL_PAIRING_CORRUPT.
func (m *Meter) CheckRegion(start, end sdk.Seq) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return err
	}
	return m.checkRegion(start, end)
}

// ValidatePluginRange checks the span a summarizer with the "select-range"
// capability chose from meas: meas must still describe the current surface
// (COMPACTION_SURFACE_MISMATCH), then the checks of CheckRegion. The caller
// logs the error as a warning and falls back to SelectRange.
func (m *Meter) ValidatePluginRange(meas Measurement, start, end sdk.Seq) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return err
	}
	if err := m.checkSurface(meas); err != nil {
		return err
	}
	return m.checkRegion(start, end)
}

// checkSurface is step 1 of docs/compaction.md. Called with mu held after update.
func (m *Meter) checkSurface(meas Measurement) error {
	cur := m.nodes
	if len(meas.Nodes) != len(cur) {
		return m.errorf(sdk.CodeCompactionSurfaceMismatch,
			"the measurement has %d nodes but the surface now has %d; measure again", len(meas.Nodes), len(cur))
	}
	if len(cur) == 0 || &meas.Nodes[0] == &cur[0] {
		return nil // the same published array: the same seqs
	}
	for i := range cur {
		if meas.Nodes[i].Seq != cur[i].Seq {
			return m.errorf(sdk.CodeCompactionSurfaceMismatch,
				"the measurement has node %d at position %d but the surface now has %d; measure again", meas.Nodes[i].Seq, i, cur[i].Seq)
		}
	}
	return nil
}

// checkRegion runs the region checks. Called with mu held after update.
func (m *Meter) checkRegion(start, end sdk.Seq) error {
	ps, ok := m.position(start)
	if !ok {
		return m.boundaryError(start, "region start %d is not a current surface node", m.seqNotFound(start))
	}
	pe, ok := m.position(end)
	if !ok {
		return m.boundaryError(end, "region end %d is not a current surface node", m.seqNotFound(end))
	}
	if ps > pe {
		return m.errorf(sdk.CodeCompactionUnbalancedBoundary,
			"region start %d at position %d comes after end %d at position %d", start, ps, end, pe).WithSeq(int64(start))
	}
	if ps == 0 && m.typeOf(start) == session.TypeSystemMessage {
		return m.errorf(sdk.CodeSystemNode0Protected,
			"region %d..%d starts at node 0, the system prompt, which is never compacted", start, end).WithSeq(int64(start))
	}
	if balanced, err := m.balancedCut(ps); err != nil {
		return err
	} else if !balanced {
		return m.boundaryError(start, "the cut before region start %d is unbalanced: a tool call before it has its result at or after it", nil)
	}
	if balanced, err := m.balancedCut(pe + 1); err != nil {
		return err
	} else if !balanced {
		return m.boundaryError(end, "the cut after region end %d is unbalanced: a tool call at or before it has its result after it", nil)
	}
	return nil
}

// boundaryError is COMPACTION_UNBALANCED_BOUNDARY at seq; format has one %d
// for seq.
func (m *Meter) boundaryError(seq sdk.Seq, format string, cause error) error {
	e := m.errorf(sdk.CodeCompactionUnbalancedBoundary, format, seq).WithSeq(int64(seq))
	e.Err = cause
	return e
}

// typeOf returns the type of the event at seq.
func (m *Meter) typeOf(seq sdk.Seq) string {
	e, _ := m.s.Event(seq)
	return e.Type()
}
