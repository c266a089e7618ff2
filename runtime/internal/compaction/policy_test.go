package compaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

func txWindow(cw int64) func(*Options) {
	return func(o *Options) {
		o.ModelInfo = func(provider, model string) (int64, bool) { return cw, provider == "p" && model == "m" }
	}
}

// Below the threshold the pressure policy does nothing; above it, it
// compacts until the session is below again.
func TestPressurePolicyCompactsAboveThreshold(t *testing.T) {
	sum := &txSummarizer{}
	s := txSession(t)
	txConversation(t, s, 20, 400, false)
	meas, _ := Measure(s)
	big := txCompactor(t, sum, txWindow(meas.TotalTokens*2))
	rep, err := big.BeforeRequest(context.Background(), s)
	if err != nil || len(rep.Compactions) != 0 || rep.TokensAfter != meas.TotalTokens || rep.Warning != nil {
		t.Fatalf("below threshold: %+v %v", rep, err)
	}
	cw := meas.TotalTokens * 10 / 9 // threshold 0.8 × cw < total
	c := txCompactor(t, sum, txWindow(cw))
	rep, err = c.BeforeRequest(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Capacity != cw || rep.Threshold != int64(float64(cw)*0.8) || rep.Retain != int64(float64(cw)*0.16) {
		t.Errorf("limits %+v", rep)
	}
	if len(rep.Compactions) != 1 || rep.TokensBefore != meas.TotalTokens || rep.TokensAfter >= rep.Threshold || rep.Warning != nil {
		t.Fatalf("report %+v", rep)
	}
	after, _ := Measure(s)
	if after.TotalTokens != rep.TokensAfter {
		t.Errorf("measured %d after, report says %d", after.TotalTokens, rep.TokensAfter)
	}
	// The retained tail keeps at least the retain budget.
	var tail int64
	cp := rep.Compactions[0].CheckpointSeq
	seen := false
	for _, n := range after.Nodes {
		if seen {
			tail += n.Tokens
		}
		seen = seen || n.Seq == cp
	}
	if tail < rep.Retain {
		t.Errorf("retained %d tokens after the checkpoint; want ≥ %d", tail, rep.Retain)
	}
}

// Pruning comes first; when it is enough, nothing is compacted.
func TestPressurePolicyPrunesFirst(t *testing.T) {
	sum := &txSummarizer{}
	s := txSession(t)
	txAppend(t, s, txSys("sys"), txHeader(), txTurnStart(1))
	for i := range 4 {
		call := fmt.Sprintf("c%d", i)
		txAppend(t, s, txUser(fmt.Sprint("u", i), "q"), txAsst(1, fmt.Sprint("a", i), "x", call), txResult(1, call, strings.Repeat("z", 40_000)))
	}
	meas, _ := Measure(s)
	c := txCompactor(t, sum, func(o *Options) { txWindow(meas.TotalTokens)(o); o.Pruner = pruner.Pruner{} })
	rep, err := c.BeforeRequest(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Prune.Pruned) != 4 || len(rep.Compactions) != 0 || rep.TokensAfter >= rep.Threshold || len(sum.requests()) != 0 {
		t.Fatalf("report %+v, %d summaries", rep, len(sum.requests()))
	}
}

// Without a known context window the policy skips, warning once per target;
// the latest request/context for the target supplies the window.
func TestPressurePolicyCapacity(t *testing.T) {
	log := newTxLogger()
	sum := &txSummarizer{}
	c := txCompactor(t, sum, func(o *Options) { o.Logger = log })
	s := txSession(t)
	txConversation(t, s, 20, 400, false)
	for range 3 {
		rep, err := c.BeforeRequest(context.Background(), s)
		if err != nil || !errors.Is(rep.Warning, sdk.CodeCompactionCapacityUnknown) || len(rep.Compactions) != 0 {
			t.Fatalf("%+v %v", rep, err)
		}
	}
	if n := strings.Count(strings.Join(log.msgs, ""), "compaction capacity unknown"); n != 1 {
		t.Fatalf("warned %d times; want once per target", n)
	}
	meas, _ := Measure(s)
	txAppend(t, s, txIn(session.TypeRequestContext, fmt.Sprintf(`{"provider":"p","model":"other","contextWindow":%d}`, meas.TotalTokens)))
	if rep, _ := c.BeforeRequest(context.Background(), s); !errors.Is(rep.Warning, sdk.CodeCompactionCapacityUnknown) {
		t.Fatalf("a request/context for another target must not count: %+v", rep)
	}
	txAppend(t, s, txIn(session.TypeRequestContext, fmt.Sprintf(`{"provider":"p","model":"m","contextWindow":%d}`, meas.TotalTokens)))
	rep, err := c.BeforeRequest(context.Background(), s)
	if err != nil || rep.Capacity != meas.TotalTokens || len(rep.Compactions) != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
}

// Still above the threshold after compactionRetries + 1 attempts: the
// policy warns with the attempts, tokens and threshold; the turn continues.
func TestPressurePolicyStillAboveThreshold(t *testing.T) {
	sum := &txSummarizer{fn: func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
		return sdk.SummarizeReply{}, errors.New("model down")
	}}
	s := txSession(t)
	txConversation(t, s, 20, 400, false)
	meas, _ := Measure(s)
	c := txCompactor(t, sum, txWindow(meas.TotalTokens))
	rep, err := c.BeforeRequest(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	e := txRequireCode(t, rep.Warning, sdk.CodeCompactionStillAboveThreshold, "after 2 compaction attempts", fmt.Sprint(meas.TotalTokens), fmt.Sprint(rep.Threshold))
	if !errors.Is(e, sdk.CodeCompactionSummaryFailed) || len(sum.requests()) != 2 {
		t.Fatalf("warning %v after %d attempts", e, len(sum.requests()))
	}
	if _, open := OpenBracket(s.Events()); open {
		t.Fatal("a failed attempt left its bracket open")
	}
}

// retain ≥ threshold for the window is CONFIG_INVALID; auto = false turns
// the policy off.
func TestPressurePolicyConfig(t *testing.T) {
	s := txSession(t)
	txConversation(t, s, 20, 400, false)
	retain := int64(900)
	c := txCompactor(t, &txSummarizer{}, txWindow(1000), func(b *config.Compaction) { b.RetainRatio, b.RetainTokens = 0, &retain })
	_, err := c.BeforeRequest(context.Background(), s)
	txRequireCode(t, err, sdk.CodeConfigInvalid, "900", "800")
	off := txCompactor(t, &txSummarizer{}, txWindow(1000), func(b *config.Compaction) { b.Auto = false })
	n := s.Len()
	if rep, err := off.BeforeRequest(context.Background(), s); err != nil || rep.Threshold != 0 || s.Len() != n {
		t.Fatalf("auto off: %+v %v", rep, err)
	}
	if _, err := New(txBlock(func(b *config.Compaction) { b.ThresholdRatio = 0 }), Options{Summarizer: &txSummarizer{}}); !errors.Is(err, sdk.CodeConfigInvalid) {
		t.Fatalf("threshold 0: %v", err)
	}
	if _, err := New(nil, Options{Summarizer: &txSummarizer{}}); !errors.Is(err, sdk.CodeConfigInvalid) {
		t.Fatalf("no block: %v", err)
	}
}

// Overflow recovery compacts the largest balanced head and asks for a
// retry; the per-session counter allows maxOverflowRetries recoveries until
// an assistant message commits or the turn ends.
func TestOverflowRecovery(t *testing.T) {
	s := txSession(t)
	txConversation(t, s, 6, 400, false)
	c := txCompactor(t, &txSummarizer{}, nil)
	retry, err := c.OnOverflow(context.Background(), s)
	if err != nil || !retry {
		t.Fatalf("first overflow: retry %v, %v", retry, err)
	}
	nodes := txNodes(t, s)
	if len(nodes) != 3 || nodes[0] != 0 { // system prompt, checkpoint, newest node
		t.Fatalf("surface after retain-0 compaction %v", nodes)
	}
	txAppend(t, s, txUser("more", strings.Repeat("m", 2000)), txUser("more2", strings.Repeat("n", 2000)))
	n := s.Len()
	if retry, err := c.OnOverflow(context.Background(), s); retry || err != nil || s.Len() != n {
		t.Fatalf("second overflow without an assistant message: retry %v, %v", retry, err)
	}
	txAppend(t, s, txAsst(1, "z2", strings.Repeat("y", 2000)))
	if retry, err := c.OnOverflow(context.Background(), s); !retry || err != nil {
		t.Fatalf("after an assistant message: retry %v, %v", retry, err)
	}
}

// Manual compaction: standalone bracket, retain 0, flushed after the
// bracket closes; refusals; the flush failing is
// COMPACTION_PERSISTENCE_FAILED.
func TestCompactNow(t *testing.T) {
	flushes := 0
	var flushErr error
	c := txCompactor(t, &txSummarizer{}, func(o *Options) {
		o.Flush = func(context.Context, *session.Session) error { flushes++; return flushErr }
	})
	open := txSession(t)
	txConversation(t, open, 3, 400, false)
	_, err := c.CompactNow(context.Background(), open, "cmd-1")
	txRequireCode(t, err, sdk.CodeCompactionTurnOpen, "turn 1")
	tiny := txSession(t)
	txAppend(t, tiny, txSys("sys"), txUser("u", "hi"))
	_, err = c.CompactNow(context.Background(), tiny, "")
	txRequireCode(t, err, sdk.CodeCompactionNoRange)
	if flushes != 0 {
		t.Fatalf("%d flushes for refusals", flushes)
	}
	s := txSession(t)
	txConversation(t, s, 3, 400, true)
	out, err := c.CompactNow(context.Background(), s, "cmd-1")
	if err != nil {
		t.Fatal(err)
	}
	if flushes != 1 {
		t.Fatalf("%d flushes", flushes)
	}
	if got := string(mustEvent(t, s, out.StartSeq).Data()); got != `{"compactionId":"c1","sourceCommandId":"cmd-1","turn":null}` {
		t.Errorf("start %s", got)
	}
	if got := string(mustEvent(t, s, out.EndSeq).Data()); got != `{"compactionId":"c1","sourceCommandId":"cmd-1","turn":null}` {
		t.Errorf("end %s", got)
	}
	if src := mustEvent(t, s, out.CheckpointSeq).DataView().Get("source"); !src.Get("sourceCommandId").StrEqual("cmd-1") {
		t.Errorf("checkpoint source %s", src.Bytes())
	}
	if nodes := txNodes(t, s); len(nodes) != 3 || nodes[1] != out.CheckpointSeq {
		t.Errorf("surface %v", nodes)
	}
	txAppend(t, s, txUser("again", strings.Repeat("x", 3000)), txAsst(2, "w", strings.Repeat("y", 3000)))
	flushErr = errors.New("disk full")
	out, err = c.CompactNow(context.Background(), s, "")
	e := txRequireCode(t, err, sdk.CodeCompactionPersistenceFailed)
	if out.CheckpointSeq == 0 || !strings.Contains(e.Error(), "disk full") {
		t.Fatalf("outcome %+v, %v", out, err)
	}
}

// Lock and lifecycle: a log ending in an unmatched compaction/start is locked;
// after Release and Open (the lifecycle marker) compaction is allowed.
func TestUnmatchedCompactionStartLocksUntilReopen(t *testing.T) {
	ctx := context.Background()
	backend := memory.New()
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "memory", Persistence: backend}},
		Relational: func() []session.Relational { return []session.Relational{NewValidator()} }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{ID: "locked"})
	if err != nil {
		t.Fatal(err)
	}
	txLoopConversation(t, s, 3, 400, true)
	txAppend(t, s, txIn(session.TypeCompactionStart, `{"compactionId":"abandoned","turn":null}`))
	c := txCompactor(t, &txSummarizer{}, func(o *Options) {
		o.Flush = func(ctx context.Context, s *session.Session) error { _, err := st.Flush(ctx, s); return err }
	})
	_, err = c.CompactNow(ctx, s, "")
	txRequireCode(t, err, sdk.CodeCompactionBusy, `"abandoned"`)
	if err := st.Release(ctx, s); err != nil {
		t.Fatal(err)
	}
	s2, _, err := st.Open(ctx, "locked")
	if err != nil {
		t.Fatal(err)
	}
	if last := mustEvent(t, s2, sdk.Seq(s2.Len()-1)); last.Type() != session.TypeSessionEndSeed {
		t.Fatalf("Open appended %s, not the lifecycle marker", last.Type())
	}
	out, err := c.CompactNow(ctx, s2, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(txNodes(t, s2), out.CheckpointSeq) {
		t.Fatal("checkpoint not on the surface")
	}
}

// A summarizer with the select-range capability chooses the span; an
// invalid choice falls back to the host's selection with a warning.
func TestPluginRangeSelection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply sdk.SelectRangeReply
		err   error
		want  []sdk.Seq
		warn  string
	}{
		{"valid", sdk.SelectRangeReply{Start: 3, End: 6, OK: true}, nil, []sdk.Seq{3, 4, 5, 6}, ""},
		{"unbalanced", sdk.SelectRangeReply{Start: 3, End: 4, OK: true}, nil, nil, "invalid range"},
		{"system prompt", sdk.SelectRangeReply{Start: 0, End: 6, OK: true}, nil, nil, "invalid range"},
		{"no choice", sdk.SelectRangeReply{}, nil, nil, ""},
		{"rpc error", sdk.SelectRangeReply{}, errors.New("boom"), nil, "range selection failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := newTxLogger()
			sel := &txSelector{reply: tc.reply, err: tc.err}
			c := txCompactor(t, &txSummarizer{}, func(o *Options) { o.RangeSelector, o.Logger = sel, log })
			s := txSession(t)
			txConversation(t, s, 3, 400, true)
			out, err := c.CompactNow(context.Background(), s, "")
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil { // the host's retain-0 selection: everything but the newest node
				want = []sdk.Seq{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
			}
			if !slices.Equal(out.Shadowed, want) {
				t.Fatalf("shadowed %v; want %v", out.Shadowed, want)
			}
			if tc.warn != "" && !log.has(tc.warn) {
				t.Errorf("no warning %q in %v", tc.warn, log.msgs)
			}
			r := sel.reqs[0]
			if len(r.Nodes) != 13 || len(r.Tokens) != 13 || len(r.Messages) != 13 || r.RetainTokens != 0 || r.SessionID != "tx" {
				t.Errorf("select-range request %+v", r)
			}
		})
	}
}
