package compaction

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// target is a provider and model: the session's current one (its folded
// header's config), or the summarization target.
type target struct{ provider, model string }

func (t target) String() string { return t.provider + "/" + t.model }

// targetOf returns the provider and model of the session's folded header;
// zero when it has none.
func targetOf(s *session.Session) target {
	h, ok := s.RequestHeader()
	if !ok {
		return target{}
	}
	cfg := h.Config()
	p, _ := cfg.Get("provider").Str()
	m, _ := cfg.Get("model").Str()
	return target{p, m}
}

// settings are the effective policy values for one target.
type settings struct {
	thresholdRatio float64
	retainRatio    float64
	retainTokens   *int64
	maxTokens      int64
}

// settings applies the exact-match model policy of t, if any (docs/compaction.md
// step 3).
func (c *Compactor) settings(t target) settings {
	for _, p := range c.cfg.ModelPolicies {
		if p.Provider == t.provider && p.Model == t.model {
			return settings{p.ThresholdRatio, p.RetainRatio, p.RetainTokens, p.MaxTokens}
		}
	}
	return settings{c.cfg.ThresholdRatio, c.cfg.RetainRatio, c.cfg.RetainTokens, c.cfg.MaxTokens}
}

// capacity returns the context window of t: the host's ModelInfo, else the
// latest request/context for that target (docs/compaction.md step 2).
func (c *Compactor) capacity(s *session.Session, t target) (int64, bool) {
	if c.opts.ModelInfo != nil {
		if cw, ok := c.opts.ModelInfo(t.provider, t.model); ok && cw > 0 {
			return cw, true
		}
	}
	rc, ok := s.RequestContext()
	if !ok || !rc.Get("provider").StrEqual(t.provider) || !rc.Get("model").StrEqual(t.model) {
		return 0, false
	}
	cw, ok := rc.Get("contextWindow").Int()
	return cw, ok && cw > 0
}

// PressureReport says what BeforeRequest did.
type PressureReport struct {
	// Capacity, Threshold and Retain are the context window and the token
	// limits the policy applied; 0 when it stopped before knowing them.
	Capacity, Threshold, Retain int64
	// TokensBefore and TokensAfter are the measured totals before and after
	// the policy acted (equal when it did nothing).
	TokensBefore, TokensAfter int64
	// Prune is what the pruning step did.
	Prune PruneResult
	// Compactions are the compactions that committed.
	Compactions []Outcome
	// Warning is the last non-fatal problem, also logged:
	// COMPACTION_CAPACITY_UNKNOWN (logged once per target), a failed prune
	// or compaction attempt (even when a later one succeeded), or
	// COMPACTION_STILL_ABOVE_THRESHOLD wrapping the last failure. The turn
	// continues either way.
	Warning error
}

// BeforeRequest runs the pressure policy of docs/compaction.md before a step's
// request is derived: with the session's target and its context window
// known, it measures the session and, at or above the threshold, prunes
// (when a pruner is configured) and then compacts automatically, up to
// compactionRetries + 1 times, until the session is below the threshold.
// It does nothing when auto is off, ctx is done, or the session has no
// request header yet.
//
// Errors are CONFIG_INVALID (the retain budget is not below the threshold
// for this window), COMPACTION_BUSY, and the session's; everything else is
// logged and reported as the Warning.
func (c *Compactor) BeforeRequest(ctx context.Context, s *session.Session) (PressureReport, error) {
	var rep PressureReport
	if !c.cfg.Auto || ctx.Err() != nil {
		return rep, nil
	}
	t := targetOf(s)
	if t == (target{}) {
		return rep, nil
	}
	st, err := c.acquire(s)
	if err != nil {
		return rep, err
	}
	defer st.busy.Unlock()
	cw, ok := c.capacity(s, t)
	if !ok {
		rep.Warning = c.errorf(sdk.CodeCompactionCapacityUnknown, s, "the context window of %s is unknown: no model info and no request/context for it; pressure compaction is off for it", t)
		if !st.warned[t.String()] {
			if st.warned == nil {
				st.warned = map[string]bool{}
			}
			st.warned[t.String()] = true
			c.log.Warn("compaction capacity unknown", "session", s.ID(), "target", t.String(), "error", rep.Warning)
		}
		return rep, nil
	}
	set := c.settings(t)
	rep.Capacity = cw
	rep.Threshold = int64(float64(cw) * set.thresholdRatio)
	rep.Retain = int64(float64(cw) * set.retainRatio)
	if set.retainTokens != nil {
		rep.Retain = *set.retainTokens
	}
	if rep.Retain >= rep.Threshold {
		return rep, c.errorf(sdk.CodeConfigInvalid, s, "for %s with a context window of %d, the retained %d tokens are not below the threshold %d", t, cw, rep.Retain, rep.Threshold)
	}
	meas, err := st.meter.Measure()
	if err != nil {
		return rep, err
	}
	rep.TokensBefore, rep.TokensAfter = meas.TotalTokens, meas.TotalTokens
	if meas.TotalTokens < rep.Threshold {
		return rep, nil
	}
	if c.opts.Pruner != nil {
		rep.Prune, err = c.prune(ctx, st)
		if err != nil {
			rep.Warning = err
			c.log.Warn("pruning under pressure failed", "session", s.ID(), "error", err)
		}
		if meas, err = st.meter.Measure(); err != nil {
			return rep, err
		}
		if rep.TokensAfter = meas.TotalTokens; meas.TotalTokens < rep.Threshold {
			return rep, nil
		}
	}
	attempts := 0
	for attempts < c.cfg.CompactionRetries+1 && ctx.Err() == nil {
		attempts++
		start, end, ok, err := c.selectRange(ctx, st, meas, rep.Retain)
		if err != nil {
			rep.Warning = err
			break
		}
		if !ok {
			break
		}
		out, _, err := c.compactRegion(ctx, st, start, end, Automatic, "")
		if err != nil {
			rep.Warning = err
			c.log.Warn("automatic compaction failed", "session", s.ID(), "attempt", attempts, "error", err)
		} else {
			rep.Compactions = append(rep.Compactions, out)
		}
		if meas, err = st.meter.Measure(); err != nil {
			return rep, err
		}
		if rep.TokensAfter = meas.TotalTokens; meas.TotalTokens < rep.Threshold {
			return rep, nil
		}
	}
	still := c.errorf(sdk.CodeCompactionStillAboveThreshold, s, "after %d compaction attempts the session measures %d tokens, at or above the threshold %d", attempts, meas.TotalTokens, rep.Threshold)
	still.Err = rep.Warning
	rep.Warning = still
	c.log.Warn("compaction left the session above its threshold", "session", s.ID(), "error", still)
	return rep, nil
}

// OnOverflow runs overflow recovery (docs/compaction.md) after a model request of
// the open turn failed with CONTEXT_WINDOW_EXCEEDED: unless the session has
// already used its maxOverflowRetries recoveries since the last
// assistant/message or turn end, it prunes (when a pruner is configured)
// and compacts the largest balanced head (retain 0). It returns retry true
// iff the surface was replaced (replaceGeneration advanced, pruning alone
// counts); otherwise the caller surfaces the original provider error. err
// reports a failed step (logged here too), even when retry is true; an
// aborted request (ctx done) is not recovered.
func (c *Compactor) OnOverflow(ctx context.Context, s *session.Session) (retry bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err // aborted: nothing to retry
	}
	st, err := c.acquire(s)
	if err != nil {
		return false, err
	}
	defer st.busy.Unlock()
	events := s.Events()
	for i := int(st.overflowSeen); i < events.Len(); i++ {
		if typ := events.At(i).Type(); typ == session.TypeAssistantMessage || typ == session.TypeTurnEnd {
			st.overflows = 0
		}
	}
	defer func() { st.overflowSeen = s.Len() }() // our own appends never reset the counter
	if st.overflows >= c.cfg.MaxOverflowRetries {
		return false, nil
	}
	st.overflows++
	before, err := s.Surface()
	if err != nil {
		return false, err
	}
	var errs []error
	if c.opts.Pruner != nil {
		if _, err := c.prune(ctx, st); err != nil {
			errs = append(errs, err)
		}
	}
	meas, err := st.meter.Measure()
	if err != nil {
		return false, err
	}
	start, end, ok, err := c.selectRange(ctx, st, meas, 0)
	switch {
	case err != nil:
		errs = append(errs, err)
	case ok:
		if _, _, err := c.compactRegion(ctx, st, start, end, Automatic, ""); err != nil {
			errs = append(errs, err)
		}
	}
	after, serr := s.Surface()
	if serr != nil {
		return false, serr
	}
	err = errors.Join(errs...)
	if err != nil {
		c.log.Warn("overflow recovery step failed", "session", s.ID(), "error", err)
	}
	return after.ReplaceGeneration() > before.ReplaceGeneration(), err
}

// CompactNow is manual compaction (docs/compaction.md): with no open turn
// (COMPACTION_TURN_OPEN otherwise, without waiting), it compacts the largest
// balanced head of the surface (retain 0; COMPACTION_NO_RANGE when there is
// none) in a standalone bracket (turn: null) with the manual stability rule,
// and flushes the session after the bracket closes. While the bracket is
// open the compaction invariants refuse turn/start (rule 5), so no turn
// starts until it is done. sourceCommandID ("" = none) is recorded in the
// bracket and the checkpoint. Errors are those of CompactRegion, and
// COMPACTION_PERSISTENCE_FAILED when the flush fails.
func (c *Compactor) CompactNow(ctx context.Context, s *session.Session, sourceCommandID string) (Outcome, error) {
	st, err := c.acquire(s)
	if err != nil {
		return Outcome{}, err
	}
	defer st.busy.Unlock()
	if ls := st.logState(); ls.turnOpen {
		return Outcome{}, c.errorf(sdk.CodeCompactionTurnOpen, s, "a manual compaction needs no open turn; turn %d is open", ls.turn)
	} else if ls.open {
		return Outcome{}, c.errorf(sdk.CodeCompactionBusy, s, "compaction %q (compaction/start at seq %d) is still open", ls.bracket.ID, ls.bracket.StartSeq)
	}
	meas, err := st.meter.Measure()
	if err != nil {
		return Outcome{}, err
	}
	start, end, ok, err := c.selectRange(ctx, st, meas, 0)
	if err != nil {
		return Outcome{}, err
	}
	if !ok {
		return Outcome{}, c.errorf(sdk.CodeCompactionNoRange, s, "no balanced span before the newest node can be compacted (%d nodes)", len(meas.Nodes))
	}
	out, opened, err := c.compactRegion(ctx, st, start, end, Manual, sourceCommandID)
	if !opened || c.opts.Flush == nil {
		return out, err
	}
	if ferr := c.opts.Flush(context.WithoutCancel(ctx), s); ferr != nil {
		pf := c.errorf(sdk.CodeCompactionPersistenceFailed, s, "the compaction's events were not flushed")
		pf.Err = ferr
		if err != nil {
			return out, errors.Join(err, pf)
		}
		return out, pf
	}
	return out, err
}

// selectRange chooses the span to compact for retain tokens: the
// summarizer's choice when it declared "select-range" and its span passes
// the region checks, else the host's (docs/compaction.md); an unusable plugin answer
// is logged as a warning.
func (c *Compactor) selectRange(ctx context.Context, st *sessionState, meas Measurement, retain int64) (start, end sdk.Seq, ok bool, err error) {
	if rs := c.opts.RangeSelector; rs != nil {
		req := sdk.SelectRangeRequest{SessionID: st.s.ID(), RetainTokens: retain,
			Nodes: make([]sdk.Seq, len(meas.Nodes)), Tokens: make([]int64, len(meas.Nodes)), Messages: make([][]byte, len(meas.Nodes))}
		for i, n := range meas.Nodes {
			req.Nodes[i], req.Tokens[i] = n.Seq, n.Tokens
		}
		if ml, err := st.s.Messages(); err == nil {
			pos := 0
			for _, m := range ml.All() {
				for pos < len(meas.Nodes) && meas.Nodes[pos].Seq != m.NodeSeq() {
					pos++
				}
				if pos < len(meas.Nodes) {
					req.Messages[pos] = m.JSON()
				}
			}
		}
		reply, err := rs.SelectRange(ctx, req)
		switch {
		case err != nil:
			c.log.Warn("the summarizer's range selection failed; using the host's", "session", st.s.ID(), "error", err)
		case reply.OK:
			verr := st.meter.ValidatePluginRange(meas, reply.Start, reply.End)
			if verr == nil {
				return reply.Start, reply.End, true, nil
			}
			c.log.Warn("the summarizer chose an invalid range; using the host's", "session", st.s.ID(), "start", reply.Start, "end", reply.End, "error", verr)
		}
	}
	return st.meter.SelectRange(meas, retain)
}
