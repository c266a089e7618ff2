package compaction

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"sync"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Pruned is one tool result the pruner shortened (docs/compaction.md).
type Pruned struct {
	// OriginalSeq is the tool/result node that was replaced;
	// ReplacementSeq the rewrite that replaced it.
	OriginalSeq, ReplacementSeq sdk.Seq
	// CallID is the tool call the result answers.
	CallID string
	// CharsBefore and CharsAfter are the text code points before and after.
	CharsBefore, CharsAfter int64
}

// PruneResult says what a prune did.
type PruneResult struct {
	// Pruned lists the rewrites, in surface order.
	Pruned []Pruned
	// CharsRemoved is Σ CharsBefore − CharsAfter.
	CharsRemoved int64
}

// Prune shortens the session's oversized tool results with the configured
// pruner (docs/compaction.md), as an operator asks for (`logbook prune`); the
// pressure and overflow policies prune the same way. The current tool/result
// nodes whose text is over the budget's threshold are offered in surface
// order; for each replacement, in surface order, a compaction/prune record
// (the original's token estimate) and the rewrite (the original data except
// message.content, replacing that one node) are appended as one atomic
// group. A rewrite the session refuses appends nothing and is logged and
// skipped. A second run over the same session appends nothing. Without a
// pruner Prune fails with CONFIG_INVALID; a pruner error, or ctx ending,
// stops it with what was done so far.
func (c *Compactor) Prune(ctx context.Context, s *session.Session) (PruneResult, error) {
	if c.opts.Pruner == nil {
		return PruneResult{}, c.errorf(sdk.CodeConfigInvalid, s, "no pruner is configured")
	}
	st, err := c.acquire(s)
	if err != nil {
		return PruneResult{}, err
	}
	defer st.busy.Unlock()
	return c.prune(ctx, st)
}

// pruneRequestBytes caps one Prune request below RPCMaxBytes: smaller
// requests let the pruner work on one while the host appends the rewrites
// of another.
const pruneRequestBytes = 1 << 20

// pruneAhead is how many Prune requests may be in flight at once.
const pruneAhead = 2

// prune offers the pruner every current tool/result node whose text is over
// the budget's threshold, in surface order and in requests below
// RPCMaxBytes (at most pruneAhead in flight), then handles the replacements
// in surface order: each rewrite (the original data, byte for byte, except
// message.content; replace seq..seq; sources [seq]) is appended after its
// compaction/prune record {shadowedRange, shadowedSeqs, shadowedTokenCount:
// the estimate of the original message}. The two go as one atomic group, so
// the rewrite is planned through steps A5–A11 of Append (docs/format.md,
// The order of checks) before anything commits; a rejected
// rewrite appends nothing, is logged and skipped. A pruner error, or ctx
// ending, stops the work and returns what was done with the error.
func (c *Compactor) prune(ctx context.Context, st *sessionState) (PruneResult, error) {
	var res PruneResult
	s := st.s
	budget := sdk.PruneBudget{ThresholdChars: c.cfg.Prune.ThresholdChars, HeadChars: c.cfg.Prune.HeadChars, TailChars: c.cfg.Prune.TailChars}
	ml, err := s.Messages()
	if err != nil {
		return res, err
	}
	var (
		est     estimator
		offered []sdk.PruneNode
		tokens  []int64 // estimate of each offered node's message
	)
	for _, m := range ml.All() {
		if m.Role() != "tool" { // only tool/result messages have this role (docs/format.md)
			continue
		}
		over, estimate := est.overThreshold(m.View(), budget.ThresholdChars)
		if !over {
			continue
		}
		callID, _ := m.View().Get("source").Get("callId").Str()
		offered = append(offered, sdk.PruneNode{Seq: m.NodeSeq(), CallID: callID, Message: m.JSON()})
		tokens = append(tokens, estimate)
	}
	calls := c.pruneCalls(ctx, s.ID(), offered, budget)
	defer calls.stop()
	var buf rewriteBuffers
	for _, call := range calls.list {
		select {
		case <-call.done:
		case <-ctx.Done():
			return res, ctx.Err()
		}
		if call.err != nil {
			return res, call.err
		}
		byNode := make(map[sdk.Seq]*sdk.PruneReplacement, len(call.out))
		for k := range call.out {
			r := &call.out[k]
			if _, dup := byNode[r.Seq]; dup || !slices.ContainsFunc(offered[call.lo:call.hi], func(n sdk.PruneNode) bool { return n.Seq == r.Seq }) {
				c.log.Warn("the pruner replaced a node it was not offered; ignored", "session", s.ID(), "seq", r.Seq)
				continue
			}
			byNode[r.Seq] = r
		}
		for x := call.lo; x < call.hi; x++ {
			r := byNode[offered[x].Seq]
			if r == nil {
				continue
			}
			p, err := c.applyPrune(ctx, s, offered[x], tokens[x], r, &buf)
			if err != nil {
				return res, err
			}
			if p != nil {
				res.Pruned = append(res.Pruned, *p)
				res.CharsRemoved += p.CharsBefore - p.CharsAfter
			}
		}
	}
	return res, nil
}

// applyPrune appends the compaction/prune record and the rewrite of one
// node as a group. A refused rewrite is logged and yields nil; only a
// refusal every later append would meet too, or ctx ending, is an error.
func (c *Compactor) applyPrune(ctx context.Context, s *session.Session, node sdk.PruneNode, tokens int64, r *sdk.PruneReplacement, buf *rewriteBuffers) (*Pruned, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	orig, _ := s.Event(node.Seq)
	data, err := buf.rewriteData(orig, r.Content)
	if err != nil {
		c.log.Warn("pruned content is unusable; node skipped", "session", s.ID(), "seq", node.Seq, "error", err)
		return nil, nil
	}
	record := mustJSON(pruneData{
		ShadowedRange:      seqRange{Start: node.Seq, End: node.Seq},
		ShadowedSeqs:       []sdk.Seq{node.Seq},
		ShadowedTokenCount: tokens,
	})
	evs, err := s.AppendGroup(ctx, []session.AppendInput{
		{Type: session.TypeCompactionPrune, Data: record},
		{Type: session.TypeToolResult, Data: data,
			SurfaceOp:       &session.SurfaceOp{Replace: true, StartSeq: node.Seq, EndSeq: node.Seq},
			SourceEventSeqs: []sdk.Seq{node.Seq}},
	})
	if err != nil {
		if ctx.Err() != nil || isFinal(err) {
			return nil, err
		}
		c.log.Warn("the pruned rewrite was refused; node skipped", "session", s.ID(), "seq", node.Seq, "error", err)
		return nil, nil
	}
	return &Pruned{OriginalSeq: node.Seq, ReplacementSeq: evs[1].Seq(), CallID: node.CallID, CharsBefore: r.CharsBefore, CharsAfter: r.CharsAfter}, nil
}

// pruneCall is one Prune request over offered[lo:hi].
type pruneCall struct {
	lo, hi int
	done   chan struct{} // closed when out and err are set
	out    []sdk.PruneReplacement
	err    error
}

// pruneCalls is the set of requests of one prune, sent in order with at
// most pruneAhead in flight by goroutines that stop() waits for.
type pruneCalls struct {
	list   []*pruneCall
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// pruneCalls splits nodes into requests and starts sending them.
func (c *Compactor) pruneCalls(ctx context.Context, sessionID string, nodes []sdk.PruneNode, budget sdk.PruneBudget) *pruneCalls {
	limit := min(c.opts.RPCMaxBytes-rpcsize.RPCHeadroom, pruneRequestBytes)
	pc := &pruneCalls{}
	for i := 0; i < len(nodes); {
		j, size := i, 0
		for ; j < len(nodes); j++ {
			n := len(nodes[j].Message) + len(nodes[j].CallID) + 32
			if j > i && size+n > limit {
				break
			}
			size += n
		}
		pc.list = append(pc.list, &pruneCall{lo: i, hi: j, done: make(chan struct{})})
		i = j
	}
	ctx, pc.cancel = context.WithCancel(ctx)
	slots := make(chan struct{}, pruneAhead)
	pc.wg.Add(1)
	go func() {
		defer pc.wg.Done()
		for _, call := range pc.list {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			pc.wg.Add(1)
			go func() {
				defer pc.wg.Done()
				defer func() { <-slots }()
				call.out, call.err = c.opts.Pruner.Prune(ctx, sessionID, nodes[call.lo:call.hi], budget)
				close(call.done)
			}()
		}
	}()
	return pc
}

// stop cancels the requests still running and waits for their goroutines.
func (pc *pruneCalls) stop() {
	pc.cancel()
	pc.wg.Wait()
}

// isFinal reports a session-level refusal that every later append would
// meet too.
func isFinal(err error) bool {
	return errors.Is(err, sdk.CodeSessionClosed) || errors.Is(err, sdk.CodeSessionFenced) || errors.Is(err, sdk.CodeSessionReadOnly) || errors.Is(err, sdk.CodeProjectionRemoved)
}

// rewriteBuffers are reused across the rewrites of one prune: the session
// copies what Append is given, so the buffers never escape.
type rewriteBuffers struct{ data, out []byte }

// rewriteData returns the data of tool/result e with message.content
// replaced by content (a JSON array): every other byte is the original's.
// content is not parsed here: the append validates the whole data (lossless
// JSON, the payload rules, and step S7g of docs/format.md, which refuses any difference outside
// message.content). The result is valid until the next call.
func (b *rewriteBuffers) rewriteData(e session.Event, content []byte) ([]byte, error) {
	content = bytes.TrimSpace(content)
	if len(content) < 2 || content[0] != '[' || content[len(content)-1] != ']' {
		return nil, errors.New("pruned content is not a JSON array")
	}
	d := e.DataView()
	b.data = d.AppendRaw(b.data[:0])
	ds, de := d.Span() // offsets of the data and of its members in one buffer
	cs, ce := d.Get("message").Get("content").Span()
	if de-ds != len(b.data) || cs < ds || ce > de || cs > ce {
		return nil, errors.New("tool result data has an unexpected layout")
	}
	b.out = append(b.out[:0], b.data[:cs-ds]...)
	b.out = append(b.out, content...)
	b.out = append(b.out, b.data[ce-ds:]...)
	return b.out, nil
}

// overThreshold reports whether a tool message's text blocks hold more than
// threshold code points (what the pruner's threshold counts, docs/compaction.md),
// and if so the message's token estimate. A message whose canonical JSON is
// no longer than threshold bytes cannot, since every code point takes at
// least one byte: most messages are decided without counting.
func (e *estimator) overThreshold(msg jsonv.Value, threshold int64) (bool, int64) {
	if start, end := msg.Span(); int64(end-start) <= threshold {
		return false, 0
	}
	chars, tokens := e.toolResultSize(msg)
	return chars > threshold, tokens
}

// toolResultSize returns the code points of a tool message's text blocks
// and the message's token estimate (docs/compaction.md), in one pass over its
// blocks.
func (e *estimator) toolResultSize(msg jsonv.Value) (chars, tokens int64) {
	tokens = 4
	for _, b := range msg.Get("content").Elements() {
		if t := b.Get("text"); b.Get("type").StrEqual("text") && t.Kind() == jsonv.String {
			n := e.fastCodePoints(t)
			chars += n
			tokens += quarterCeil(n) + 4
			continue
		}
		tokens += e.block(b)
	}
	return chars, tokens
}

// fastCodePoints is strCodePoints for long strings. The canonical encoding
// is valid UTF-8, so its code points are its bytes minus its continuation
// bytes (10xxxxxx), counted eight bytes at a time; then each escape, one
// code point, gives back its extra bytes (five for \uXXXX, one for the
// two-byte escapes).
func (e *estimator) fastCodePoints(v jsonv.Value) int64 {
	e.buf = v.AppendRaw(e.buf[:0])
	body := e.buf[1 : len(e.buf)-1]
	n := int64(len(body))
	i := 0
	for ; i+8 <= len(body); i += 8 {
		w := binary.LittleEndian.Uint64(body[i:])
		if w&0x8080808080808080 == 0 {
			continue // ASCII
		}
		n -= int64(bits.OnesCount64(w & ^(w << 1) & 0x8080808080808080))
	}
	for ; i < len(body); i++ {
		if body[i]&0xC0 == 0x80 {
			n--
		}
	}
	for i := bytes.IndexByte(body, '\\'); i >= 0; {
		if body[i+1] == 'u' {
			n -= 5
			i += 6
		} else {
			n--
			i += 2
		}
		j := bytes.IndexByte(body[i:], '\\')
		if j < 0 {
			break
		}
		i += j
	}
	return n
}

// pruneData is the data of compaction/prune (docs/format.md).
type pruneData struct {
	ShadowedRange      seqRange  `json:"shadowedRange"`
	ShadowedSeqs       []sdk.Seq `json:"shadowedSeqs"`
	ShadowedTokenCount int64     `json:"shadowedTokenCount"`
}
