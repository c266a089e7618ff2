package compaction

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Mode says who started a compaction: it decides the turn rule and the
// stability re-check of docs/compaction.md.
type Mode int

const (
	// Automatic compactions come from the pressure and overflow policies:
	// they need an open turn, and the whole surface must be unchanged after
	// the summary call.
	Automatic Mode = iota
	// Manual compactions come from an operator: they need no open turn, and
	// only the compacted span must be unchanged after the summary call.
	Manual
)

// Outcome describes a committed compaction.
type Outcome struct {
	// CompactionID is the bracket's id (a lowercase UUIDv4).
	CompactionID string
	// StartSeq, SummarySeq, CheckpointSeq and EndSeq are the seqs of
	// compaction/start (α), compaction/summary (σ), the checkpoint
	// user/message and compaction/end.
	StartSeq, SummarySeq, CheckpointSeq, EndSeq sdk.Seq
	// Shadowed are the nodes the checkpoint replaced, in surface order.
	Shadowed []sdk.Seq
	// ShadowedTokens is their token estimate; CheckpointTokens the
	// checkpoint's (always smaller).
	ShadowedTokens, CheckpointTokens int64
}

// commitAttempts bounds how often the closing group is planned again when
// other appends keep taking its seqs.
const commitAttempts = 8

// CompactRegion compacts the current nodes start..end (inclusive, surface
// order) of s into one checkpoint message (docs/compaction.md):
//
//  1. mode Automatic needs an open turn (COMPACTION_NO_OPEN_TURN), Manual
//     none (COMPACTION_TURN_OPEN); the compaction lock must be free
//     (COMPACTION_BUSY); the region must pass the checks of docs/compaction.md;
//     the summary request is built (docs/compaction.md), shrinking the region from
//     its end, at balanced cuts, until it fits RPCMaxBytes (nothing left:
//     COMPACTION_NO_RANGE);
//  2. compaction/start {compactionId, turn} is appended (seq α);
//  3. the shadowed nodes, their token sum and the measurement are captured;
//  4. the summarizer is called: ctx done → COMPACTION_CANCELLED; an error or
//     any block that is not text → COMPACTION_SUMMARY_FAILED;
//  5. stability: Automatic needs an identical fresh measurement, Manual the
//     same span with the same tokens at consecutive positions → else
//     COMPACTION_CHANGED;
//  6. the checkpoint message is CheckpointPreamble, the summary and its
//     tags;
//  7. it must be smaller than the shadowed nodes (COMPACTION_NOT_SMALLER,
//     both numbers);
//  8. compaction/summary (seq σ),
//  9. the checkpoint, replacing start..end with sources α, σ and the
//     shadowed nodes, and
//  10. compaction/end commit as one atomic group; a failure is
//     COMPACTION_COMMIT_FAILED.
//
// Every failure after step 2 appends compaction/end with the error text,
// exactly once, and returns the error; if even that append fails the
// bracket stays open until the next lifecycle marker and both errors are
// returned. The surface changes only when the group commits.
func (c *Compactor) CompactRegion(ctx context.Context, s *session.Session, start, end sdk.Seq, mode Mode) (Outcome, error) {
	st, err := c.acquire(s)
	if err != nil {
		return Outcome{}, err
	}
	defer st.busy.Unlock()
	out, _, err := c.compactRegion(ctx, st, start, end, mode, "")
	return out, err
}

// compactRegion is CompactRegion with the session's operation lock held; it
// also reports whether compaction/start was appended (the bracket was
// opened, and is now closed unless both its ends failed).
func (c *Compactor) compactRegion(ctx context.Context, st *sessionState, start, end sdk.Seq, mode Mode, sourceCommandID string) (out Outcome, opened bool, err error) {
	s := st.s
	ls := st.logState()
	turn := ls.openTurn()
	switch {
	case mode == Automatic && turn < 0:
		return Outcome{}, false, c.errorf(sdk.CodeCompactionNoOpenTurn, s, "an automatic compaction runs inside a turn; no turn is open")
	case mode == Manual && turn >= 0:
		return Outcome{}, false, c.errorf(sdk.CodeCompactionTurnOpen, s, "a manual compaction needs no open turn; turn %d is open", turn)
	case ls.open:
		return Outcome{}, false, c.errorf(sdk.CodeCompactionBusy, s, "compaction %q (compaction/start at seq %d) is still open", ls.bracket.ID, ls.bracket.StartSeq)
	}
	if err := st.meter.CheckRegion(start, end); err != nil {
		return Outcome{}, false, err
	}
	meas, err := st.meter.Measure()
	if err != nil {
		return Outcome{}, false, err
	}
	id := c.opts.NewID()
	req, span, err := c.summarizeRequest(st, meas, start, end, id)
	if err != nil {
		return Outcome{}, false, err
	}
	b := bracketData{CompactionID: id, SourceCommandID: sourceCommandID, Turn: turnValue(turn)}
	alpha, err := s.Append(ctx, session.AppendInput{Type: session.TypeCompactionStart, Data: mustJSON(b)})
	if err != nil {
		// Another append may have opened a turn or a bracket meanwhile.
		switch ls := st.logState(); {
		case ls.open:
			err = &sdk.Error{Code: sdk.CodeCompactionBusy, Op: "compaction", SessionID: s.ID(), Detail: "another compaction started meanwhile", Err: err}
		case mode == Manual && ls.turnOpen:
			err = &sdk.Error{Code: sdk.CodeCompactionTurnOpen, Op: "compaction", SessionID: s.ID(), Detail: "a turn started meanwhile", Err: err}
		}
		return Outcome{}, false, err
	}
	out, err = c.finish(ctx, st, mode, meas, span, req, b, alpha.Seq())
	if err == nil {
		return out, true, nil
	}
	b.Error = err.Error()
	if _, cerr := s.Append(context.WithoutCancel(ctx), session.AppendInput{Type: session.TypeCompactionEnd, Data: mustJSON(b)}); cerr != nil {
		c.log.Error("the failed compaction's bracket stays open until the next lifecycle marker", "session", s.ID(), "compaction", id, "error", err, "close_error", cerr)
		return Outcome{}, true, errors.Join(err, cerr)
	}
	return Outcome{}, true, err
}

// span is the region being compacted: positions [first, last] of a
// measurement's nodes.
type span struct{ first, last int }

func (sp span) seqs(m Measurement) []sdk.Seq {
	out := make([]sdk.Seq, 0, sp.last-sp.first+1)
	for _, n := range m.Nodes[sp.first : sp.last+1] {
		out = append(out, n.Seq)
	}
	return out
}

func (sp span) tokens(m Measurement) int64 {
	var sum int64
	for _, n := range m.Nodes[sp.first : sp.last+1] {
		sum += n.Tokens
	}
	return sum
}

// finish runs steps 3–10 after compaction/start committed at alpha.
func (c *Compactor) finish(ctx context.Context, st *sessionState, mode Mode, meas Measurement, sp span, req sdk.SummarizeRequest, b bracketData, alpha sdk.Seq) (Outcome, error) {
	s := st.s
	shadowed := sp.seqs(meas)
	shadowedTokens := sp.tokens(meas)
	reply, err := c.opts.Summarizer.Summarize(ctx, req)
	if ctx.Err() != nil {
		e := c.errorf(sdk.CodeCompactionCancelled, s, "the compaction was cancelled during the summary call")
		e.Err = errors.Join(ctx.Err(), err)
		return Outcome{}, e
	}
	if err != nil {
		e := c.errorf(sdk.CodeCompactionSummaryFailed, s, "the summarizer failed")
		e.Err = err
		return Outcome{}, e
	}
	summary, text, err := summaryText(reply.Summary)
	if err != nil {
		return Outcome{}, c.errorf(sdk.CodeCompactionSummaryFailed, s, "%v", err)
	}
	var usage, raw json.RawMessage
	if len(reply.Usage) > 0 {
		if usage, err = validJSON(reply.Usage); err != nil {
			return Outcome{}, c.errorf(sdk.CodeCompactionSummaryFailed, s, "the summarizer's usage is not JSON: %v", err)
		}
	}
	if len(reply.RawOutput) > 0 {
		if raw, err = validJSON(reply.RawOutput); err != nil {
			return Outcome{}, c.errorf(sdk.CodeCompactionSummaryFailed, s, "the summarizer's raw output is not JSON: %v", err)
		}
	}
	checkpoint := mustJSON(checkpointMessage{
		ID:      "compaction-" + b.CompactionID,
		Role:    "user",
		Content: []textBlock{{Type: "text", Text: CheckpointPreamble + "\n\n<conversation-summary>\n" + text + "\n</conversation-summary>"}},
		Source:  checkpointSource{Kind: "compact-checkpoint", CompactionID: b.CompactionID, SourceCommandID: b.SourceCommandID},
	})
	checkpointTokens, err := EstimateMessageJSON(checkpoint)
	if err != nil {
		return Outcome{}, err
	}
	if checkpointTokens >= shadowedTokens {
		return Outcome{}, c.errorf(sdk.CodeCompactionNotSmaller, s, "the checkpoint estimates %d tokens, not fewer than the %d of the %d shadowed nodes", checkpointTokens, shadowedTokens, len(shadowed))
	}
	provider, model := reply.Provider, reply.Model
	if provider == "" && model == "" {
		provider, model = req.Provider, req.Model
	}
	sum := summaryData{
		CompactionID:       b.CompactionID,
		SourceCommandID:    b.SourceCommandID,
		Summary:            summary,
		ShadowedRange:      seqRange{Start: shadowed[0], End: shadowed[len(shadowed)-1]},
		ShadowedSeqs:       shadowed,
		ShadowedTokenCount: shadowedTokens,
		Provider:           provider,
		Model:              model,
		MaxTokens:          req.MaxTokens,
		Usage:              usage,
		RawOutput:          raw,
	}
	for attempt := 1; ; attempt++ {
		if err := c.stable(st, mode, meas, sp); err != nil {
			return Outcome{}, err
		}
		sigma := sdk.Seq(s.Len())
		evs, err := s.AppendGroupAt(ctx, sigma, []session.AppendInput{
			{Type: session.TypeCompactionSummary, Data: mustJSON(sum)},
			{Type: session.TypeUserMessage, Data: checkpoint,
				SurfaceOp:       &session.SurfaceOp{Replace: true, StartSeq: shadowed[0], EndSeq: shadowed[len(shadowed)-1]},
				SourceEventSeqs: append([]sdk.Seq{alpha, sigma}, shadowed...)},
			{Type: session.TypeCompactionEnd, Data: mustJSON(b)},
		})
		if errors.Is(err, sdk.CodeSeqConflict) && attempt < commitAttempts {
			continue // another append took σ: re-check and plan again
		}
		if err != nil {
			e := c.errorf(sdk.CodeCompactionCommitFailed, s, "the summary, checkpoint and compaction/end were not committed")
			e.Err = err
			return Outcome{}, e
		}
		return Outcome{CompactionID: b.CompactionID, StartSeq: alpha, SummarySeq: evs[0].Seq(), CheckpointSeq: evs[1].Seq(), EndSeq: evs[2].Seq(),
			Shadowed: shadowed, ShadowedTokens: shadowedTokens, CheckpointTokens: checkpointTokens}, nil
	}
}

// stable is step 5 of docs/compaction.md: Automatic needs a fresh measurement with
// identical nodes (seqs and tokens); Manual needs the span, with the same
// seqs and tokens, at consecutive positions.
func (c *Compactor) stable(st *sessionState, mode Mode, meas Measurement, sp span) error {
	fresh, err := st.meter.Measure()
	if err != nil {
		return err
	}
	if mode == Automatic {
		if len(fresh.Nodes) != len(meas.Nodes) {
			return c.errorf(sdk.CodeCompactionChanged, st.s, "the surface changed during the summary call: %d nodes before, %d after", len(meas.Nodes), len(fresh.Nodes))
		}
		for i, n := range meas.Nodes {
			if fresh.Nodes[i] != n {
				return c.errorf(sdk.CodeCompactionChanged, st.s, "the surface changed during the summary call at position %d: node %d (%d tokens) became %d (%d tokens)",
					i, n.Seq, n.Tokens, fresh.Nodes[i].Seq, fresh.Nodes[i].Tokens)
			}
		}
		return nil
	}
	want := meas.Nodes[sp.first : sp.last+1]
	at := -1
	for i, n := range fresh.Nodes {
		if n.Seq == want[0].Seq {
			at = i
			break
		}
	}
	if at < 0 || at+len(want) > len(fresh.Nodes) {
		return c.errorf(sdk.CodeCompactionChanged, st.s, "the compacted span %d..%d is no longer on the surface", want[0].Seq, want[len(want)-1].Seq)
	}
	for i, n := range want {
		if fresh.Nodes[at+i] != n {
			return c.errorf(sdk.CodeCompactionChanged, st.s, "the compacted span changed during the summary call: node %d (%d tokens) became %d (%d tokens)",
				n.Seq, n.Tokens, fresh.Nodes[at+i].Seq, fresh.Nodes[at+i].Tokens)
		}
	}
	return nil
}

// summarizeRequest builds the summary request of docs/compaction.md for the region
// start..end of meas (which CheckRegion accepted), shrinking the region from
// its end, at balanced cuts, until the request fits RPCMaxBytes. It returns
// the request and the region it covers.
func (c *Compactor) summarizeRequest(st *sessionState, meas Measurement, start, end sdk.Seq, id string) (sdk.SummarizeRequest, span, error) {
	s := st.s
	sp := span{first: -1, last: -1}
	for i, n := range meas.Nodes {
		if n.Seq == start {
			sp.first = i
		}
		if n.Seq == end {
			sp.last = i
			break
		}
	}
	if sp.first < 0 || sp.last < sp.first {
		return sdk.SummarizeRequest{}, sp, c.errorf(sdk.CodeCompactionSurfaceMismatch, s, "region %d..%d is not on the measured surface; measure again", start, end)
	}
	ml, err := s.Messages()
	if err != nil {
		return sdk.SummarizeRequest{}, sp, err
	}
	req := sdk.SummarizeRequest{SessionID: s.ID(), CompactionID: id, Instruction: DefaultInstruction}
	provider, model := c.cfg.SummarizationProvider, c.cfg.SummarizationModel
	target := targetOf(s)
	if provider == "" && model == "" {
		provider, model = target.provider, target.model
	}
	req.Provider, req.Model = provider, model
	req.MaxTokens = c.settings(target).maxTokens
	if h, ok := s.RequestHeader(); ok {
		req.Config = h.Config().Bytes()
		if tools := h.View().Get("tools"); tools.Exists() {
			req.Tools = tools.Bytes()
		}
	}
	inRegion := make(map[sdk.Seq]int, sp.last-sp.first+1)
	for i := sp.first; i <= sp.last; i++ {
		inRegion[meas.Nodes[i].Seq] = i
	}
	msgs := make([][]byte, sp.last-sp.first+1) // by position in the region; nil for nodes without a message
	for i, m := range ml.All() {
		seq := m.NodeSeq()
		if i == 0 && len(meas.Nodes) > 0 && seq == meas.Nodes[0].Seq {
			if e, _ := s.Event(seq); e.Type() == session.TypeSystemMessage {
				req.System = m.JSON()
			}
		}
		if pos, ok := inRegion[seq]; ok {
			msgs[pos-sp.first] = m.JSON()
		}
	}
	size := len(req.System) + len(req.Tools) + len(req.Config) + len(req.Instruction) + len(req.SessionID) + len(id) + len(provider) + len(model) + 64
	for _, m := range msgs {
		if m != nil {
			size += len(m) + 8
		}
	}
	limit := c.opts.RPCMaxBytes - rpcsize.RPCHeadroom
	for size > limit {
		// Drop nodes from the end back to the previous balanced cut.
		cut := sp.last - 1
		for ; cut >= sp.first; cut-- {
			ok, err := st.meter.BalancedAfter(meas.Nodes[cut].Seq)
			if err != nil {
				return req, sp, err
			}
			if ok {
				break
			}
		}
		if cut < sp.first {
			return req, sp, c.errorf(sdk.CodeCompactionNoRange, s, "no balanced part of region %d..%d fits a summary request of RPCMaxBytes %d", start, end, c.opts.RPCMaxBytes)
		}
		for i := cut + 1; i <= sp.last; i++ {
			if m := msgs[i-sp.first]; m != nil {
				size -= len(m) + 8
			}
		}
		sp.last = cut
		msgs = msgs[:sp.last-sp.first+1]
	}
	for _, m := range msgs {
		if m != nil {
			req.Messages = append(req.Messages, m)
		}
	}
	return req, sp, nil
}

// summaryText checks that every block is a text block and returns the
// blocks as a JSON array and their texts joined by blank lines (S of
// docs/compaction.md step 6).
func summaryText(blocks [][]byte) (json.RawMessage, string, error) {
	var texts []string
	arr := []byte{'['}
	for i, b := range blocks {
		doc, err := jsonv.Parse(b, jsonv.Options{})
		if err != nil {
			return nil, "", errors.New("summary block " + strconv.Itoa(i) + " is not JSON: " + err.Error())
		}
		v := doc.Root()
		text, ok := v.Get("text").Str()
		if v.Kind() != jsonv.Object || !v.Get("type").StrEqual("text") || !ok {
			return nil, "", errors.New("summary block " + strconv.Itoa(i) + " is not a text block: " + clipText(string(v.Bytes()), 200))
		}
		texts = append(texts, text)
		if i > 0 {
			arr = append(arr, ',')
		}
		arr = v.AppendRaw(arr)
	}
	arr = append(arr, ']')
	return arr, strings.Join(texts, "\n\n"), nil
}

// validJSON returns b's canonical form if it is lossless JSON.
func validJSON(b []byte) (json.RawMessage, error) {
	doc, err := jsonv.Parse(b, jsonv.Options{})
	if err != nil {
		return nil, err
	}
	return doc.Root().Bytes(), nil
}

// clipText shortens s to n bytes for an error detail.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// The JSON shapes the transaction appends (docs/format.md).
type (
	bracketData struct {
		CompactionID    string `json:"compactionId"`
		SourceCommandID string `json:"sourceCommandId,omitempty"`
		Turn            *int64 `json:"turn"`
		Error           string `json:"error,omitempty"`
	}
	seqRange struct {
		Start sdk.Seq `json:"start"`
		End   sdk.Seq `json:"end"`
	}
	summaryData struct {
		CompactionID       string          `json:"compactionId"`
		SourceCommandID    string          `json:"sourceCommandId,omitempty"`
		Summary            json.RawMessage `json:"summary"`
		ShadowedRange      seqRange        `json:"shadowedRange"`
		ShadowedSeqs       []sdk.Seq       `json:"shadowedSeqs"`
		ShadowedTokenCount int64           `json:"shadowedTokenCount"`
		Provider           string          `json:"provider"`
		Model              string          `json:"model"`
		MaxTokens          int64           `json:"maxTokens"`
		Usage              json.RawMessage `json:"usage,omitempty"`
		RawOutput          json.RawMessage `json:"rawOutput,omitempty"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	checkpointSource struct {
		Kind            string `json:"kind"`
		CompactionID    string `json:"compactionId"`
		SourceCommandID string `json:"sourceCommandId,omitempty"`
	}
	checkpointMessage struct {
		ID      string           `json:"id"`
		Role    string           `json:"role"`
		Content []textBlock      `json:"content"`
		Source  checkpointSource `json:"source"`
	}
)

// turnValue is the bracket's turn: the open turn, or null (-1).
func turnValue(turn int64) *int64 {
	if turn < 0 {
		return nil
	}
	return &turn
}

// mustJSON marshals v without HTML escaping. The shapes above always
// marshal; a failure is a bug of this package.
func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("compaction: marshalling " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}
