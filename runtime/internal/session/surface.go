package session

import (
	"github.com/seed-e5e476df/logbook/sdk"
)

// surfaceList is the live node sequence (docs/format.md): a doubly linked list
// threaded through an array indexed by seq, with order labels. Finding a node
// is O(1) (the array), comparing the surface order of two nodes is O(1) (the
// labels), and replacing a k-node span is O(k): the replacing node takes the
// first shadowed node's label, so labels stay increasing along the list and
// never need relabelling. The array holds no pointers, so a million-node
// surface costs the garbage collector nothing to scan.
type surfaceList struct {
	base  sdk.Seq // seq of links[0]; non-zero only for windows (NewSurface)
	links []link  // one per event of the log from base on
	head  int64   // seq of the first node, -1 when empty
	tail  int64   // seq of the last node, -1 when empty
	count int
}

type link struct {
	prev, next int64 // neighbour seqs, -1 at the ends
	label      int64 // increasing along the list
	on         bool  // the event is a current node
}

func newSurfaceList(base sdk.Seq) surfaceList {
	return surfaceList{base: base, head: -1, tail: -1}
}

// grow records that the log now has an event with this seq (node or not).
func (l *surfaceList) grow(seq sdk.Seq) {
	for sdk.Seq(len(l.links))+l.base <= seq {
		l.links = append(l.links, link{prev: -1, next: -1})
	}
}

func (l *surfaceList) at(seq sdk.Seq) *link {
	if seq < l.base || seq-l.base >= sdk.Seq(len(l.links)) {
		return nil
	}
	return &l.links[seq-l.base]
}

// isNode reports whether seq is a current node.
func (l *surfaceList) isNode(seq sdk.Seq) bool {
	k := l.at(seq)
	return k != nil && k.on
}

// before reports whether node a comes before node b in surface order.
func (l *surfaceList) before(a, b sdk.Seq) bool {
	return l.at(a).label < l.at(b).label
}

// position walks the list to find a node's index: O(n), for error details only.
func (l *surfaceList) position(seq sdk.Seq) int {
	i := 0
	for cur := l.head; cur >= 0; cur = l.at(sdk.Seq(cur)).next {
		if sdk.Seq(cur) == seq {
			return i
		}
		i++
	}
	return -1
}

// span returns the nodes from start to end inclusive, in surface order.
// start must come before or equal end.
func (l *surfaceList) span(start, end sdk.Seq) []sdk.Seq {
	var out []sdk.Seq
	for cur := int64(start); ; cur = l.at(sdk.Seq(cur)).next {
		out = append(out, sdk.Seq(cur))
		if sdk.Seq(cur) == end {
			return out
		}
	}
}

// pushBack makes seq the last node.
func (l *surfaceList) pushBack(seq sdk.Seq) {
	l.grow(seq)
	k := l.at(seq)
	k.on, k.prev, k.next = true, l.tail, -1
	if l.tail >= 0 {
		t := l.at(sdk.Seq(l.tail))
		t.next = int64(seq)
		k.label = t.label + 1
	} else {
		l.head = int64(seq)
		k.label = 0
	}
	l.tail = int64(seq)
	l.count++
}

// replace turns the nodes shadowed (a span from start to end, in order) into
// the single node seq.
func (l *surfaceList) replace(seq sdk.Seq, shadowed []sdk.Seq) {
	l.grow(seq)
	first, last := l.at(shadowed[0]), l.at(shadowed[len(shadowed)-1])
	k := l.at(seq)
	k.on, k.prev, k.next, k.label = true, first.prev, last.next, first.label
	if k.prev >= 0 {
		l.at(sdk.Seq(k.prev)).next = int64(seq)
	} else {
		l.head = int64(seq)
	}
	if k.next >= 0 {
		l.at(sdk.Seq(k.next)).prev = int64(seq)
	} else {
		l.tail = int64(seq)
	}
	for _, s := range shadowed {
		x := l.at(s)
		x.on, x.prev, x.next = false, -1, -1
	}
	l.count += 1 - len(shadowed)
}

// appendNodes appends the nodes in surface order to dst.
func (l *surfaceList) appendNodes(dst []sdk.Seq) []sdk.Seq {
	for cur := l.head; cur >= 0; cur = l.at(sdk.Seq(cur)).next {
		dst = append(dst, sdk.Seq(cur))
	}
	return dst
}
