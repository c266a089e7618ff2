package compaction

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/pruner"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The default prune: a tool result with one 10 000-code-point text block, default
// budget → its text becomes the first 4 096 + M + the last 1 024 code
// points; compaction/prune {shadowedRange {k,k}, shadowedSeqs [k],
// shadowedTokenCount: estimate(original)} then the rewrite (replace {k,k},
// sources [k]), byte-identical except message.content; a second prune
// appends nothing.
func TestPruneKeepsHeadAndTailAndRewritesOnce(t *testing.T) {
	c := txCompactor(t, &txSummarizer{}, func(o *Options) { o.Pruner = pruner.Pruner{} })
	s := txSession(t)
	txAppend(t, s, txSys("sys"), txHeader(), txTurnStart(1), txUser("u", "go"), txAsst(1, "a", "x", "k"))
	text := strings.Repeat("é", 5000) + strings.Repeat("ü", 5000) // 10 000 code points, 20 000 bytes
	k := txAppend(t, s, txResult(1, "k", text))[0].Seq()
	orig := mustEvent(t, s, k)
	ml, _ := s.Messages()
	origTokens := EstimateMessage(ml.At(ml.Len() - 1).View())
	n0 := s.Len()
	res, err := c.Prune(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got := txTypes(s, n0); len(got) != 2 || got[0] != session.TypeCompactionPrune || got[1] != session.TypeToolResult {
		t.Fatalf("appended %v", got)
	}
	record, rewrite := mustEvent(t, s, sdk.Seq(n0)), mustEvent(t, s, sdk.Seq(n0+1))
	if got, want := string(record.Data()), `{"shadowedRange":{"start":`+itoaSeq(k)+`,"end":`+itoaSeq(k)+`},"shadowedSeqs":[`+itoaSeq(k)+`],"shadowedTokenCount":`+itoaInt(origTokens)+`}`; got != want {
		t.Errorf("compaction/prune %s; want %s", got, want)
	}
	op, _ := rewrite.SurfaceOp()
	if !op.Replace || op.StartSeq != k || op.EndSeq != k || len(rewrite.SourceEventSeqs()) != 1 || rewrite.SourceEventSeqs()[0] != k {
		t.Errorf("rewrite op %+v sources %v", op, rewrite.SourceEventSeqs())
	}
	wantText := strings.Repeat("é", 4096) + pruner.Marker + strings.Repeat("ü", 1024)
	got, _ := rewrite.DataView().Get("message").Get("content").Index(0).Get("text").Str()
	if got != wantText {
		t.Errorf("pruned text has %d code points; want head 4096 + M + tail 1024", len([]rune(got)))
	}
	origContent := orig.DataView().Get("message").Get("content").Bytes()
	newContent := rewrite.DataView().Get("message").Get("content").Bytes()
	if strings.Replace(string(orig.Data()), string(origContent), "", 1) != strings.Replace(string(rewrite.Data()), string(newContent), "", 1) {
		t.Errorf("rewrite differs outside message.content:\n%s\n%s", orig.Data(), rewrite.Data())
	}
	if len(res.Pruned) != 1 || res.Pruned[0] != (Pruned{OriginalSeq: k, ReplacementSeq: rewrite.Seq(), CallID: "k", CharsBefore: 10_000, CharsAfter: 4096 + 43 + 1024}) ||
		res.CharsRemoved != 10_000-(4096+43+1024) {
		t.Errorf("result %+v", res)
	}
	n1 := s.Len()
	res, err = c.Prune(context.Background(), s)
	if err != nil || len(res.Pruned) != 0 || s.Len() != n1 {
		t.Fatalf("second prune: %+v %v, appended %v", res, err, txTypes(s, n1))
	}
}

func itoaSeq(s sdk.Seq) string { return itoaInt(int64(s)) }
func itoaInt(n int64) string   { return strings.TrimSpace(string(mustJSON(n))) }

// txPruner returns canned replacements.
type txPruner struct {
	mu    sync.Mutex
	calls int
	nodes []sdk.PruneNode
	reps  func(nodes []sdk.PruneNode) []sdk.PruneReplacement
}

func (p *txPruner) Prune(_ context.Context, _ string, nodes []sdk.PruneNode, _ sdk.PruneBudget) ([]sdk.PruneReplacement, error) {
	p.mu.Lock()
	p.calls++
	p.nodes = append(p.nodes, nodes...)
	p.mu.Unlock()
	return p.reps(nodes), nil
}

// Only current tool results over the threshold are offered, in surface
// order and in requests below RPCMaxBytes; a rewrite the session refuses is
// skipped without appending anything, the others go on.
func TestPruneOffersAndSkips(t *testing.T) {
	p := &txPruner{reps: func(nodes []sdk.PruneNode) []sdk.PruneReplacement {
		var out []sdk.PruneReplacement
		for _, n := range nodes {
			content := `[{"type":"text","text":"short"}]`
			if n.CallID == "k1" {
				content = `[{"type":"tool-addition","toolName":"x"}]` // refused: TOOL_CHANGE_ROLE
			}
			out = append(out, sdk.PruneReplacement{Seq: n.Seq, Content: []byte(content), CharsBefore: 9000, CharsAfter: 5})
		}
		return out
	}}
	log := newTxLogger()
	c := txCompactor(t, &txSummarizer{}, func(o *Options) { o.Pruner, o.RPCMaxBytes, o.Logger = p, 1<<16+20_000, log })
	s := txSession(t)
	txAppend(t, s, txSys("sys"), txHeader(), txTurnStart(1), txUser("u", "go"), txAsst(1, "a", "x", "k0", "k1", "k2", "k3"))
	txAppend(t, s, txResult(1, "k0", strings.Repeat("a", 9000)), txResult(1, "k1", strings.Repeat("b", 9000)),
		txResult(1, "k2", strings.Repeat("c", 100)), txResult(1, "k3", strings.Repeat("d", 9000)))
	res, err := c.Prune(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(p.nodes, func(a, b sdk.PruneNode) int { return int(a.Seq - b.Seq) })
	if len(p.nodes) != 3 || p.nodes[0].CallID != "k0" || p.nodes[1].CallID != "k1" || p.nodes[2].CallID != "k3" || p.calls < 2 {
		t.Fatalf("offered %d nodes in %d calls", len(p.nodes), p.calls)
	}
	if len(res.Pruned) != 2 || res.Pruned[0].CallID != "k0" || res.Pruned[1].CallID != "k3" || res.CharsRemoved != 2*(9000-5) {
		t.Fatalf("result %+v", res)
	}
	if !log.has("refused") {
		t.Error("the refused rewrite was not logged")
	}
	prunes := 0
	for _, e := range s.Events().All() {
		if e.Type() == session.TypeCompactionPrune {
			prunes++
		}
	}
	if prunes != 2 {
		t.Fatalf("%d compaction/prune records; want 2 (none for the refused rewrite)", prunes)
	}
}

// Without a pruner, Prune is refused.
func TestPruneWithoutPruner(t *testing.T) {
	c := txCompactor(t, &txSummarizer{}, nil)
	_, err := c.Prune(context.Background(), txSession(t))
	if !errors.Is(err, sdk.CodeConfigInvalid) {
		t.Fatalf("%v", err)
	}
}

// toolResultSize agrees with the docs/compaction.md estimate and with the code points
// the estimator counts, for text with every kind of escape.
func TestToolResultSizeMatchesEstimate(t *testing.T) {
	for _, text := range []string{"", "plain", "tab\there\nnew \"q\" back\\slash \u0001 ctl é 日本 🎉", strings.Repeat("\\\n", 50), strings.Repeat("ü", 9000)} {
		msg := `{"id":"r","role":"tool","toolCallId":"c","content":[{"type":"text","text":` + txQ(text) + `},{"type":"image","mediaType":"image/png","data":"AAAA"},{"type":"text","text":` + txQ(text+"x") + `}],"source":{"kind":"tool","callId":"c"}}`
		doc := parseDoc(t, msg)
		var e estimator
		chars, tokens := e.toolResultSize(doc)
		if want := int64(2*len([]rune(text)) + 1); chars != want {
			t.Errorf("%q: %d chars; want %d", text, chars, want)
		}
		if want := EstimateMessage(doc); tokens != want {
			t.Errorf("%q: %d tokens; want %d", text, tokens, want)
		}
	}
}

func parseDoc(t *testing.T, s string) jsonv.Value {
	t.Helper()
	d, err := jsonv.Parse([]byte(s), jsonv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Root()
}
