package session

import (
	"iter"
	"sync"

	"github.com/seed-e5e476df/logbook/sdk"
)

// EventList is an immutable snapshot of a log (docs/format.md).
type EventList struct {
	base    sdk.Seq
	records []*record // clipped; indices are never written again
}

// Len returns the number of events in the snapshot.
func (l EventList) Len() int { return len(l.records) }

// At returns the i-th event of the snapshot (seq = first seq + i).
func (l EventList) At(i int) Event { return Event{l.records[i]} }

// Range returns the sub-snapshot of the events with from ≤ seq < to,
// clamped to the snapshot.
func (l EventList) Range(from, to sdk.Offset) EventList {
	lo, hi := int64(from)-int64(l.base), int64(to)-int64(l.base)
	lo = max(0, min(lo, int64(len(l.records))))
	hi = max(lo, min(hi, int64(len(l.records))))
	return EventList{base: l.base + sdk.Seq(lo), records: l.records[lo:hi:hi]}
}

// All iterates the events in seq order.
func (l EventList) All() iter.Seq2[int, Event] {
	return func(yield func(int, Event) bool) {
		for i, r := range l.records {
			if !yield(i, Event{r}) {
				return
			}
		}
	}
}

// Slice returns the events as a fresh slice.
func (l EventList) Slice() []Event {
	out := make([]Event, len(l.records))
	for i, r := range l.records {
		out[i] = Event{r}
	}
	return out
}

// EventListOf wraps events (which must be contiguous from their first seq)
// as an EventList for the detached functions.
func EventListOf(events []Event) EventList {
	l := EventList{records: make([]*record, len(events))}
	for i, e := range events {
		l.records[i] = e.r
	}
	if len(events) > 0 {
		l.base = events[0].r.seq
	}
	return l
}

// MessageList is an immutable snapshot of the derived model messages
// (docs/format.md). Later appends never change it.
type MessageList struct {
	msgs   []*msgRec // clipped
	gen    uint64
	logLen sdk.Offset
}

// Len returns the number of messages.
func (l MessageList) Len() int { return len(l.msgs) }

// At returns message i.
func (l MessageList) At(i int) MessageView { return MessageView{l.msgs[i]} }

// All iterates the messages in order.
func (l MessageList) All() iter.Seq2[int, MessageView] {
	return func(yield func(int, MessageView) bool) {
		for i, m := range l.msgs {
			if !yield(i, MessageView{m}) {
				return
			}
		}
	}
}

// Generation returns the content generation the snapshot was derived at.
func (l MessageList) Generation() uint64 { return l.gen }

// LogLen returns the log length the snapshot was derived at.
func (l MessageList) LogLen() sdk.Offset { return l.logLen }

// SurfaceView is an immutable snapshot of the surface nodes (docs/format.md).
type SurfaceView struct {
	nodes      []sdk.Seq // clipped
	replaceGen uint64
	contentGen uint64
	logLen     sdk.Offset
	index      *surfaceIndex
}

type surfaceIndex struct {
	once sync.Once
	pos  map[sdk.Seq]int
}

// Len returns the number of nodes.
func (v SurfaceView) Len() int { return len(v.nodes) }

// At returns node i.
func (v SurfaceView) At(i int) sdk.Seq { return v.nodes[i] }

// Nodes returns the nodes as a fresh slice.
func (v SurfaceView) Nodes() []sdk.Seq { return append([]sdk.Seq{}, v.nodes...) }

// ReplaceGeneration returns the number of committed replacements.
func (v SurfaceView) ReplaceGeneration() uint64 { return v.replaceGen }

// ContentGeneration returns replacements plus projection decisions.
func (v SurfaceView) ContentGeneration() uint64 { return v.contentGen }

// LogLen returns the log length the snapshot was taken at.
func (v SurfaceView) LogLen() sdk.Offset { return v.logLen }

// IndexOf returns the position of node seq. The first call builds an index
// in O(n); later calls are O(1).
func (v SurfaceView) IndexOf(seq sdk.Seq) (int, bool) {
	if v.index == nil {
		return -1, false
	}
	v.index.once.Do(func() {
		v.index.pos = make(map[sdk.Seq]int, len(v.nodes))
		for i, n := range v.nodes {
			v.index.pos[n] = i
		}
	})
	i, ok := v.index.pos[seq]
	return i, ok
}

// Contains reports whether seq is a node of the snapshot.
func (v SurfaceView) Contains(seq sdk.Seq) bool {
	_, ok := v.IndexOf(seq)
	return ok
}

// TranscriptList is an immutable snapshot of the human transcript (docs/format.md).
type TranscriptList struct {
	entries []TranscriptEntry // clipped
}

// Len returns the number of entries.
func (t TranscriptList) Len() int { return len(t.entries) }

// At returns entry i.
func (t TranscriptList) At(i int) TranscriptEntry { return t.entries[i] }

// All iterates the entries in seq order.
func (t TranscriptList) All() iter.Seq2[int, TranscriptEntry] {
	return func(yield func(int, TranscriptEntry) bool) {
		for i, e := range t.entries {
			if !yield(i, e) {
				return
			}
		}
	}
}

// Transcript returns the append-origin surface events in log order.
func (s *Session) Transcript() TranscriptList {
	return TranscriptList{entries: s.pub.Load().transcript}
}

// msgSnapshot caches the last derived messages.
type msgSnapshot struct {
	list    MessageList
	backing []*msgRec // len = list.Len(); appended past its length by the next extension
	nodes   int       // flat nodes consumed
}

// surfSnapshot caches the last surface view.
type surfSnapshot struct{ view SurfaceView }

// Messages returns the derived model messages as an immutable snapshot. With
// no change since the last call it returns the cached snapshot in O(1) without
// allocating; after k appended nodes it extends in O(k); after a replacement
// or projection it rebuilds once, reusing the per-node messages. The only
// error is PROJECTION_REMOVED.
func (s *Session) Messages() (MessageList, error) {
	p, logLen, err := s.current()
	if err != nil {
		return MessageList{}, err
	}
	if c := s.msgCache.Load(); c != nil && c.list.logLen == logLen && c.list.gen == p.contentGen {
		return c.list, nil
	}
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	p, logLen, _ = s.current() // stable while stateMu is held
	c := s.msgCache.Load()
	if c != nil && c.list.logLen == logLen && c.list.gen == p.contentGen {
		return c.list, nil
	}
	flat := s.flatNodesLocked()
	var backing []*msgRec
	start := 0
	if c != nil && c.list.gen == p.contentGen && c.nodes <= len(flat) {
		backing, start = c.backing, c.nodes
	}
	for _, seq := range flat[start:] {
		if m := s.currentMessage(seq); m != nil {
			backing = append(backing, m)
		}
	}
	n := len(backing)
	next := &msgSnapshot{list: MessageList{msgs: backing[:n:n], gen: p.contentGen, logLen: logLen}, backing: backing, nodes: len(flat)}
	s.msgCache.Store(next)
	return next.list, nil
}

// Surface returns the surface nodes as an immutable snapshot, with the same
// costs as Messages.
func (s *Session) Surface() (SurfaceView, error) {
	p, logLen, err := s.current()
	if err != nil {
		return SurfaceView{}, err
	}
	if c := s.surfCache.Load(); c != nil && c.view.logLen == logLen && c.view.contentGen == p.contentGen {
		return c.view, nil
	}
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	p, logLen, _ = s.current()
	flat := s.flatNodesLocked()
	v := SurfaceView{nodes: flat[:len(flat):len(flat)], replaceGen: p.replaceGen, contentGen: p.contentGen, logLen: logLen, index: &surfaceIndex{}}
	s.surfCache.Store(&surfSnapshot{view: v})
	return v, nil
}

// current loads the published state and its log length, or reports
// PROJECTION_REMOVED.
func (s *Session) current() (*published, sdk.Offset, error) {
	p := s.pub.Load()
	if len(p.usedProj) > 0 {
		if err := s.projectionRemoved(p); err != nil {
			return nil, 0, err
		}
	}
	return p, sdk.Offset(len(p.records)) + sdk.Offset(s.surf.base), nil
}

// flatNodesLocked returns the nodes in order, rebuilding the flat array from
// the list when a replacement invalidated it. Called with stateMu held.
func (s *Session) flatNodesLocked() []sdk.Seq {
	if !s.flatValid {
		s.flat = s.surf.appendNodes(make([]sdk.Seq, 0, s.surf.count+16))
		s.flatValid = true
	}
	return s.flat
}
