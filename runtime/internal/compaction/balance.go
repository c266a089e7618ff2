package compaction

import (
	"github.com/seed-e5e476df/logbook/sdk"
)

// BalancedBefore reports whether the cut just before node seq is balanced
// (docs/compaction.md): over the nodes before it, the tool-call blocks of the
// assistant/message nodes' derived messages equal the number of tool/result
// nodes. A seq that is not a current node → TOOL_PAIRING_SEQ_NOT_FOUND; a
// running count that goes negative before the cut → TOOL_PAIRING_CORRUPT
// naming the node where it did. The counts are cached per contentGeneration
// and extended at the tail, so the call is O(1) plus the catch-up of Measure.
func (m *Meter) BalancedBefore(seq sdk.Seq) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return false, err
	}
	pos, ok := m.position(seq)
	if !ok {
		return false, m.seqNotFound(seq)
	}
	return m.balancedCut(pos)
}

// BalancedAfter reports whether the cut just after node seq is balanced,
// with the errors of BalancedBefore.
func (m *Meter) BalancedAfter(seq sdk.Seq) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return false, err
	}
	pos, ok := m.position(seq)
	if !ok {
		return false, m.seqNotFound(seq)
	}
	return m.balancedCut(pos + 1)
}

// position returns the position of node seq on the surface m.nodes
// describes. Called with mu held after update.
func (m *Meter) position(seq sdk.Seq) (int, bool) {
	if seq < 0 || int64(seq) >= int64(len(m.seqs)) {
		return -1, false
	}
	pos := int(m.seqs[seq].pos)
	if pos >= len(m.nodes) || m.nodes[pos].Seq != seq {
		return -1, false
	}
	return pos, true
}

// balancedCut reports whether the cut before position i (0 ≤ i ≤ len(nodes))
// is balanced.
func (m *Meter) balancedCut(i int) (bool, error) {
	if m.negPos >= 0 && m.negPos < i {
		seq := m.nodes[m.negPos].Seq
		return false, m.errorf(sdk.CodeToolPairingCorrupt,
			"the tool-pairing count goes negative at node %d (position %d): a tool/result without a matching tool call before it", seq, m.negPos).WithSeq(int64(seq))
	}
	return m.counts[i] == 0, nil
}

func (m *Meter) seqNotFound(seq sdk.Seq) error {
	return m.errorf(sdk.CodeToolPairingSeqNotFound, "seq %d is not a current surface node", seq).WithSeq(int64(seq))
}

// errorf builds an error of this package for m's session.
func (m *Meter) errorf(code sdk.Code, format string, args ...any) *sdk.Error {
	return sdk.Errorf(code, "compaction", format, args...).WithSession(m.s.ID())
}
