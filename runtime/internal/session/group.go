package session

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// AppendGroup appends ins as one atomic group (docs/compaction.md): the members are
// planned together, each validated by steps A5–A11 against the state that
// includes the members before it, and committed under one hold of the
// append lock with consecutive seqs. If any member is rejected nothing is
// committed — no seq consumed, no state, snapshot or feed moved — and the
// error is that member's, with Index set to its position in ins. On success
// OnCommit receives all members in one call, so the store hands them to
// write-behind as one unit that no batch boundary splits.
//
// A group may hold at most one member of a surface type or a projection
// type: the planning of such a member reads the surface, which only a
// commit changes (a second one is refused with SURFACE_OP_NOT_ALLOWED).
// Log-only members may come before and after it, e.g. compaction/summary,
// the checkpoint user/message and compaction/end. An empty group appends
// nothing and returns nil.
func (s *Session) AppendGroup(ctx context.Context, ins []AppendInput) ([]Event, error) {
	return s.appendGroup(ctx, -1, ins)
}

// AppendGroupAt is AppendGroup for a group planned for a known position: its
// first member must get seq first, which lets members cite the seqs of the
// members before them (a compaction checkpoint cites its compaction/summary).
// When another append got there first the group is refused with
// SEQ_CONFLICT (Meta "expected" and "actual": first and the next seq, as
// SeqConflict gives them) and nothing changes; the caller plans again.
func (s *Session) AppendGroupAt(ctx context.Context, first sdk.Seq, ins []AppendInput) ([]Event, error) {
	if first < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidSeq, "session", "first seq %d is outside 0 … 2^53−1", first)
	}
	return s.appendGroup(ctx, first, ins)
}

// appendGroup runs appendUnit and returns every member's event.
func (s *Session) appendGroup(ctx context.Context, first sdk.Seq, ins []AppendInput) ([]Event, error) {
	e, evs, err := s.appendUnit(ctx, first, ins)
	if err != nil || len(ins) != 1 || evs != nil {
		return evs, err
	}
	return []Event{e}, nil
}

// pendingHeader reports whether a pending group member is a request/header
// (the "initial" rule of docs/format.md counts it).
func (s *Session) pendingHeader() bool {
	for _, r := range s.pending {
		if r.typ == TypeRequestHeader {
			return true
		}
	}
	return false
}

// eventsWithPending returns the log the next member is validated against:
// the committed events followed by the pending members. The pending records
// go into the spare capacity of the records array, past every published
// snapshot (all clipped to their length), so no reader sees them; when the
// array must grow it is swapped in under stateMu for the commit to reuse.
func (s *Session) eventsWithPending() EventList {
	if len(s.pending) == 0 {
		return s.Events()
	}
	n := len(s.records)
	ext := append(s.records, s.pending...)
	if cap(ext) != cap(s.records) {
		s.stateMu.Lock()
		s.records = ext[:n]
		s.stateMu.Unlock()
	}
	return EventList{base: s.surf.base, records: ext[:len(ext):len(ext)]}
}

// clearPending forgets the pending members once the group is committed or
// rejected.
func (s *Session) clearPending() {
	clear(s.pending)
	s.pending = s.pending[:0]
}

// memberError enriches a member's error like writeError, and for a group
// names the member's index.
func (s *Session) memberError(err error, seq sdk.Seq, index int, group bool) error {
	err = s.writeError(err, seq)
	if e, ok := err.(*sdk.Error); ok && group {
		return e.WithIndex(index)
	}
	return err
}
