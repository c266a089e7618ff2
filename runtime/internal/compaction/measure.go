package compaction

import (
	"sort"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// BaselineKind says where a measurement's total comes from (docs/compaction.md).
type BaselineKind string

// The baseline kinds.
const (
	// BaselineProvider: the usage a provider reported for the anchor
	// assistant message, plus the estimates of the nodes after it.
	BaselineProvider BaselineKind = "provider"
	// BaselineEstimated: the header's and every node's estimate.
	BaselineEstimated BaselineKind = "estimated"
)

// NodeTokens is one surface node and the estimate of its derived message (0
// for a node that yields none).
type NodeTokens struct {
	Seq    sdk.Seq
	Tokens int64
}

// Measurement is the token size of a session's next model request
// (docs/compaction.md), taken at one log length.
type Measurement struct {
	// LogLen is the log length the measurement was taken at.
	LogLen sdk.Offset
	// Nodes are the current surface nodes in order, with their estimates.
	// The slice is a capacity-clipped view shared by every measurement of
	// the same Meter and surface: logbook never writes its elements again, so
	// later appends never change it, and callers must not write them either.
	Nodes []NodeTokens
	// SurfaceTokens is the sum of the nodes' estimates.
	SurfaceTokens int64
	// HeaderTokens is the estimate of the folded header's tools.
	HeaderTokens int64
	// BaselineKind says how TotalTokens was computed.
	BaselineKind BaselineKind
	// TotalTokens is the request size the compaction policies compare with
	// their threshold.
	TotalTokens int64
}

// Meter measures one session incrementally (docs/compaction.md) and answers
// the tool-pairing and range questions of docs/compaction.md from the same
// caches. Per-node estimates and tool-pairing contributions are cached by
// seq; prefix sums of both follow the surface: a Measure after k appended
// nodes costs O(k), and after a replacement or projection (a new
// contentGeneration) the next call rebuilds the prefix sums once, estimating
// only the nodes it has not seen (the replacing node, the projected targets).
//
// A Meter belongs to one *session.Session for that session's lifetime. It is
// safe for concurrent use; calls are serialized.
type Meter struct {
	s   *session.Session
	mu  sync.Mutex
	est estimator

	// Folded from the log, events [0, scanned).
	scanned    sdk.Offset
	headers    []sdk.Seq // request/header seqs, ascending
	lastChange int64     // seq of the last event that advanced contentGeneration; -1 when none
	seqs       []seqEntry

	// The surface at contentGeneration gen, as of log length logLen.
	built  bool
	gen    uint64
	logLen sdk.Offset
	nodes  []NodeTokens // published prefix never written again; a new array per generation
	msgs   int          // derived messages matched to nodes so far
	prefix []int64      // prefix[i] = Σ tokens of nodes[0..i)
	counts []int64      // counts[i] = tool-pairing count over nodes[0..i)
	negPos int          // first position after which the running count is negative; -1 when none

	// Anchor candidates: assistant/message nodes with usage and without
	// interrupted, committed after lastChange (so still on the surface at
	// the position they were appended at), in seq order.
	cands         []anchorCand
	curHeader     int64 // seq of the folded header; -1 when none
	headerTokens  int64
	anchor        int // index into cands; -1 when none
	anchorChecked int // cands[:anchorChecked] have been considered for curHeader
	headerEqual   map[int64]bool
}

// seqEntry caches what a node contributes. Entries are indexed by seq, one
// per event of the log.
type seqEntry struct {
	tokens int64 // estimate of the derived message; -1 when unknown or invalidated by a projection
	pos    int32 // the node's position when last placed; valid only while nodes[pos].Seq is this seq
	delta  int32 // tool-pairing contribution (docs/compaction.md)
}

type anchorCand struct {
	seq    sdk.Seq
	pos    int
	header int64 // seq of the request/header in force at seq; -1 when none
	usage  int64 // input + output + cacheRead + cacheWrite
}

// NewMeter returns a Meter for s. It reads nothing until the first call.
func NewMeter(s *session.Session) *Meter {
	return &Meter{s: s, lastChange: -1, negPos: -1, curHeader: -1, anchor: -1}
}

// Measure measures s from scratch: O(surface length). A caller that
// measures the same session repeatedly keeps a Meter instead.
func Measure(s *session.Session) (Measurement, error) {
	return NewMeter(s).Measure()
}

// Measure returns the current measurement (docs/compaction.md):
//
//  1. each node's estimate (0 without a derived message); SurfaceTokens is
//     their sum and HeaderTokens the estimate of the folded header's tools;
//  2. the anchor is the last assistant/message node with usage and without
//     interrupted, committed after the last change of contentGeneration,
//     whose folded header at its seq is HeaderEqual to the current one (no
//     header at either place counts as equal only to no header at the other);
//  3. with the anchor at position p, callEstimate = HeaderTokens + Σ
//     tokens(nodes[0..p]) and u = input + output + cacheRead + cacheWrite of
//     its usage; if u ≥ callEstimate, TotalTokens = u + Σ tokens(nodes[p+1..])
//     with BaselineProvider;
//  4. otherwise TotalTokens = HeaderTokens + SurfaceTokens, BaselineEstimated.
//
// The only error is the session's (PROJECTION_REMOVED).
func (m *Meter) Measure() (Measurement, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.update(); err != nil {
		return Measurement{}, err
	}
	n := len(m.nodes)
	mt := Measurement{
		LogLen:        m.logLen,
		Nodes:         m.nodes[:n:n],
		SurfaceTokens: m.prefix[n],
		HeaderTokens:  m.headerTokens,
		BaselineKind:  BaselineEstimated,
	}
	mt.TotalTokens = mt.HeaderTokens + mt.SurfaceTokens
	if m.anchor >= 0 {
		c := m.cands[m.anchor]
		through := m.prefix[c.pos+1]
		if c.usage >= m.headerTokens+through {
			mt.TotalTokens = c.usage + mt.SurfaceTokens - through
			mt.BaselineKind = BaselineProvider
		}
	}
	return mt, nil
}

// update brings the caches to the session's current state. Called with mu
// held.
func (m *Meter) update() error {
	var (
		sv  session.SurfaceView
		ml  session.MessageList
		err error
	)
	for { // the two snapshots must describe the same state
		if sv, err = m.s.Surface(); err != nil {
			return err
		}
		if ml, err = m.s.Messages(); err != nil {
			return err
		}
		if sv.LogLen() == ml.LogLen() && sv.ContentGeneration() == ml.Generation() {
			break
		}
	}
	if sv.LogLen() > m.scanned {
		m.scan(m.s.Events().Range(m.scanned, sv.LogLen()))
		m.scanned = sv.LogLen()
	}
	rebuilt := !m.built || sv.ContentGeneration() != m.gen
	if rebuilt {
		m.built, m.gen = true, sv.ContentGeneration()
		m.nodes = make([]NodeTokens, 0, sv.Len()+sv.Len()/8+16)
		m.prefix = append(m.prefix[:0], 0)
		m.counts = append(m.counts[:0], 0)
		m.msgs, m.negPos = 0, -1
		m.cands = m.cands[:0]
	}
	m.extend(sv, ml)
	m.logLen = sv.LogLen()
	m.resolveAnchor(rebuilt)
	return nil
}

// scan folds new events: request headers, content changes, and the
// projection targets whose cached estimates are now stale.
func (m *Meter) scan(events session.EventList) {
	for _, e := range events.All() {
		m.seqs = append(m.seqs, seqEntry{tokens: -1})
		switch {
		case e.Type() == session.TypeRequestHeader:
			m.headers = append(m.headers, e.Seq())
		case e.ChangesContent():
			m.lastChange = int64(e.Seq())
			if strings.HasPrefix(e.Type(), session.ProjectionPrefix) {
				for _, t := range e.DataView().Get("targets").Elements() {
					if seq, ok := t.Int(); ok && seq >= 0 && seq < int64(len(m.seqs)) {
						m.seqs[seq].tokens = -1
					}
				}
			}
		}
	}
}

// extend appends the surface nodes past the ones already placed. The derived
// messages are a subsequence of the nodes in the same order, so one cursor
// over them finds each node's message.
func (m *Meter) extend(sv session.SurfaceView, ml session.MessageList) {
	for i := len(m.nodes); i < sv.Len(); i++ {
		seq := sv.At(i)
		ent := &m.seqs[seq]
		if m.msgs < ml.Len() && ml.At(m.msgs).NodeSeq() == seq {
			if ent.tokens < 0 {
				m.place(ent, seq, ml.At(m.msgs), true)
			}
			m.msgs++
		} else if ent.tokens < 0 {
			m.place(ent, seq, session.MessageView{}, false)
		}
		ent.pos = int32(i)
		last := len(m.prefix) - 1
		m.nodes = append(m.nodes, NodeTokens{Seq: seq, Tokens: ent.tokens})
		m.prefix = append(m.prefix, m.prefix[last]+ent.tokens)
		c := m.counts[last] + int64(ent.delta)
		m.counts = append(m.counts, c)
		if c < 0 && m.negPos < 0 {
			m.negPos = i
		}
		if int64(seq) > m.lastChange {
			m.considerAnchor(seq, i)
		}
	}
}

// place estimates a node: its derived message's tokens, and its
// tool-pairing contribution (an assistant/message adds its tool-call blocks,
// a tool/result subtracts 1).
func (m *Meter) place(ent *seqEntry, seq sdk.Seq, msg session.MessageView, has bool) {
	ent.tokens, ent.delta = 0, 0
	if has {
		ent.tokens = m.est.message(msg.View())
	}
	e, _ := m.s.Event(seq)
	switch e.Type() {
	case session.TypeAssistantMessage:
		if has {
			for _, b := range msg.View().Get("content").Elements() {
				if b.Get("type").StrEqual("tool-call") {
					ent.delta++
				}
			}
		}
	case session.TypeToolResult:
		ent.delta = -1
	}
}

// considerAnchor records node seq at position pos as an anchor candidate
// when it is an assistant/message with usage and without interrupted.
func (m *Meter) considerAnchor(seq sdk.Seq, pos int) {
	e, _ := m.s.Event(seq)
	if e.Type() != session.TypeAssistantMessage {
		return
	}
	d := e.DataView()
	usage := d.Get("usage")
	if usage.Kind() != jsonv.Object {
		return
	}
	if interrupted, _ := d.Get("interrupted").Bool(); interrupted {
		return
	}
	var u int64
	for _, k := range [...]string{"input", "output", "cacheRead", "cacheWrite"} {
		n, _ := usage.Get(k).Int()
		u += n
	}
	header := int64(-1)
	if i := sort.Search(len(m.headers), func(i int) bool { return m.headers[i] >= seq }); i > 0 {
		header = int64(m.headers[i-1])
	}
	m.cands = append(m.cands, anchorCand{seq: seq, pos: pos, header: header, usage: u})
}

// resolveAnchor picks the last candidate whose header equals the folded one.
// With the same folded header and candidates only added, only the new ones
// need a look: O(k) per call, and one walk over the candidates per header
// change, with each distinct header compared once.
func (m *Meter) resolveAnchor(rebuilt bool) {
	cur := int64(-1)
	if n := len(m.headers); n > 0 {
		cur = int64(m.headers[n-1])
	}
	if cur != m.curHeader {
		m.curHeader = cur
		m.headerTokens = 0
		if cur >= 0 {
			m.headerTokens = EstimateTools(m.headerAt(cur).Get("tools"))
		}
		clear(m.headerEqual)
		rebuilt = true
	}
	if rebuilt {
		m.anchor, m.anchorChecked = -1, 0
	}
	for i := len(m.cands) - 1; i >= m.anchorChecked; i-- {
		if m.sameHeader(m.cands[i].header) {
			m.anchor = i
			break
		}
	}
	m.anchorChecked = len(m.cands)
}

// sameHeader reports whether the header at seq h is HeaderEqual to the
// folded one.
func (m *Meter) sameHeader(h int64) bool {
	if h == m.curHeader {
		return true
	}
	if h < 0 || m.curHeader < 0 {
		return false
	}
	if eq, ok := m.headerEqual[h]; ok {
		return eq
	}
	eq := session.HeaderEqual(m.headerAt(h), m.headerAt(m.curHeader))
	if m.headerEqual == nil {
		m.headerEqual = make(map[int64]bool)
	}
	m.headerEqual[h] = eq
	return eq
}

// headerAt returns the canonical EpochHeader of the request/header at seq.
func (m *Meter) headerAt(seq int64) jsonv.Value {
	e, _ := m.s.Event(sdk.Seq(seq))
	return e.DataView().Get("header")
}
