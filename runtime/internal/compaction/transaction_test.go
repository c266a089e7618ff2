package compaction

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// surfaceState is what "the surface is unchanged" compares.
type surfaceState struct {
	nodes    []sdk.Seq
	messages [][]byte
	replace  uint64
}

func txSurfaceState(t testing.TB, s *session.Session) surfaceState {
	t.Helper()
	sv, err := s.Surface()
	if err != nil {
		t.Fatal(err)
	}
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	st := surfaceState{nodes: sv.Nodes(), replace: sv.ReplaceGeneration()}
	for _, m := range ml.All() {
		st.messages = append(st.messages, m.JSON())
	}
	return st
}

func (a surfaceState) equal(b surfaceState) bool {
	return slices.Equal(a.nodes, b.nodes) && a.replace == b.replace && slices.EqualFunc(a.messages, b.messages, bytes.Equal)
}

// Compaction order, success: inside open turn 1, compaction/start (α),
// compaction/summary (σ), the checkpoint replacing s..e with sources
// [α, σ, ...shadowed], compaction/end — in that order, the last three as one
// group; the summary request is built per docs/compaction.md.
func TestCompactionWritesStartSummaryCheckpointEndInOrder(t *testing.T) {
	sum := &txSummarizer{}
	c := txCompactor(t, sum, nil)
	s := txSession(t)
	txConversation(t, s, 3, 400, false) // nodes 0, 3..14; turn 1 open
	n0 := s.Len()
	before, _ := s.Messages()
	out, err := c.CompactRegion(context.Background(), s, 3, 10, Automatic)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := txTypes(s, n0), []string{"compaction/start", "compaction/summary", "user/message", "compaction/end"}; !slices.Equal(got, want) {
		t.Fatalf("appended %v; want %v", got, want)
	}
	alpha, sigma := sdk.Seq(n0), sdk.Seq(n0+1)
	ev := func(seq sdk.Seq) session.Event { e, _ := s.Event(seq); return e }
	if got := string(ev(alpha).Data()); got != `{"compactionId":"c1","turn":1}` {
		t.Errorf("compaction/start data %s", got)
	}
	if got := string(ev(alpha + 3).Data()); got != `{"compactionId":"c1","turn":1}` {
		t.Errorf("compaction/end data %s", got)
	}
	shadowed := []sdk.Seq{3, 4, 5, 6, 7, 8, 9, 10}
	var tokens int64
	for _, seq := range shadowed {
		for _, m := range before.All() {
			if m.NodeSeq() == seq {
				tokens += EstimateMessage(m.View())
			}
		}
	}
	sd := txData(t, ev(sigma))
	if sd["compactionId"] != "c1" || sd["provider"] != "sum-p" || sd["model"] != "sum-m" || sd["maxTokens"] != float64(8192) ||
		sd["shadowedTokenCount"] != float64(tokens) {
		t.Errorf("compaction/summary data %s (want %d shadowed tokens)", ev(sigma).Data(), tokens)
	}
	if r := sd["shadowedRange"].(map[string]any); r["start"] != float64(3) || r["end"] != float64(10) {
		t.Errorf("shadowedRange %v", r)
	}
	if !strings.Contains(string(ev(sigma).Data()), `"shadowedSeqs":[3,4,5,6,7,8,9,10]`) ||
		!strings.Contains(string(ev(sigma).Data()), `"summary":[{"type":"text","text":"short summary"}]`) ||
		!strings.Contains(string(ev(sigma).Data()), `"usage":{"input":10,"output":2}`) {
		t.Errorf("compaction/summary data %s", ev(sigma).Data())
	}
	cp := ev(alpha + 2)
	op, _ := cp.SurfaceOp()
	if !op.Replace || op.StartSeq != 3 || op.EndSeq != 10 {
		t.Errorf("checkpoint surfaceOp %+v", op)
	}
	if got, want := cp.SourceEventSeqs(), append([]sdk.Seq{alpha, sigma}, shadowed...); !slices.Equal(got, want) {
		t.Errorf("checkpoint sources %v; want %v", got, want)
	}
	wantText := CheckpointPreamble + "\n\n<conversation-summary>\nshort summary\n</conversation-summary>"
	wantCP := `{"id":"compaction-c1","role":"user","content":[{"type":"text","text":` + txQ(wantText) + `}],"source":{"kind":"compact-checkpoint","compactionId":"c1"}}`
	if string(cp.Data()) != wantCP {
		t.Errorf("checkpoint data\n got %s\nwant %s", cp.Data(), wantCP)
	}
	if got, want := txNodes(t, s), []sdk.Seq{0, alpha + 2, 11, 12, 13, 14}; !slices.Equal(got, want) {
		t.Errorf("surface %v; want %v", got, want)
	}
	if out.CompactionID != "c1" || out.StartSeq != alpha || out.SummarySeq != sigma || out.CheckpointSeq != alpha+2 || out.EndSeq != alpha+3 ||
		!slices.Equal(out.Shadowed, shadowed) || out.ShadowedTokens != tokens || out.CheckpointTokens >= tokens {
		t.Errorf("outcome %+v", out)
	}
	if _, open := OpenBracket(s.Events()); open {
		t.Error("the bracket is still open")
	}
	// The request (docs/compaction.md).
	reqs := sum.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d summary requests", len(reqs))
	}
	r := reqs[0]
	if r.SessionID != "tx" || r.CompactionID != "c1" || r.Provider != "p" || r.Model != "m" || r.MaxTokens != 8192 || r.Instruction != DefaultInstruction {
		t.Errorf("request header fields %+v", r)
	}
	sysMsg := before.At(0).JSON()
	if !bytes.Equal(r.System, sysMsg) {
		t.Errorf("system %s; want %s", r.System, sysMsg)
	}
	if string(r.Tools) != `[{"name":"read","description":"d","parameters":{}}]` || string(r.Config) != `{"provider":"p","model":"m"}` {
		t.Errorf("tools %s config %s", r.Tools, r.Config)
	}
	if len(r.Messages) != 8 {
		t.Fatalf("%d region messages; want 8", len(r.Messages))
	}
	for i, m := range r.Messages {
		if !bytes.Equal(m, before.At(i+1).JSON()) {
			t.Errorf("region message %d = %s; want %s", i, m, before.At(i+1).JSON())
		}
	}
}

// A configured summarization target and a model policy's max tokens reach
// the request.
func TestSummarizeRequestTargetAndPolicy(t *testing.T) {
	sum := &txSummarizer{}
	c := txCompactor(t, sum, nil, func(b *config.Compaction) {
		b.SummarizationProvider, b.SummarizationModel = "sp", "sm"
		b.ModelPolicies = append(b.ModelPolicies, txPolicy("p", "m", 77))
	})
	s := txSession(t)
	txConversation(t, s, 3, 400, false)
	if _, err := c.CompactRegion(context.Background(), s, 3, 10, Automatic); err != nil {
		t.Fatal(err)
	}
	r := sum.requests()[0]
	if r.Provider != "sp" || r.Model != "sm" || r.MaxTokens != 77 {
		t.Fatalf("target %s/%s max tokens %d", r.Provider, r.Model, r.MaxTokens)
	}
}

// Every failure after compaction/start leaves exactly one closing
// compaction/end carrying the error, a closed bracket and the surface as it
// was.
func TestCompactionFailurePathsCloseTheBracket(t *testing.T) {
	refuseSummary := relFunc(func(_ session.EventList, e session.Event) error {
		if e.Type() == session.TypeCompactionSummary {
			return sdk.Errorf(sdk.CodePayloadInvalid, "test", "refused")
		}
		return nil
	})
	cases := []struct {
		name string
		code sdk.Code
		mode Mode
		fn   func(s *session.Session, cancel context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error)
		rel  session.Relational
	}{
		{"summarizer error", sdk.CodeCompactionSummaryFailed, Automatic, func(*session.Session, context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				return sdk.SummarizeReply{}, sdk.Errorf(sdk.CodePluginUnavailable, "summarizer", "down")
			}
		}, nil},
		{"non-text block", sdk.CodeCompactionSummaryFailed, Automatic, func(*session.Session, context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				r := txReply("ok")
				r.Summary = append(r.Summary, []byte(`{"type":"image","mediaType":"image/png","data":""}`))
				return r, nil
			}
		}, nil},
		{"summary not smaller", sdk.CodeCompactionNotSmaller, Automatic, func(*session.Session, context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				return txReply(strings.Repeat("long ", 4000)), nil
			}
		}, nil},
		{"surface changed", sdk.CodeCompactionChanged, Automatic, func(s *session.Session, _ context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				if _, err := s.Append(ctx, txUser("late", "arrived during the summary call")); err != nil {
					return sdk.SummarizeReply{}, err
				}
				return txReply("short"), nil
			}
		}, nil},
		{"span changed (manual)", sdk.CodeCompactionChanged, Manual, func(s *session.Session, _ context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				orig, _ := s.Event(5) // the tool result of call-0, inside the span
				data := strings.Replace(string(orig.Data()), `"text":"result 0 `, `"text":"pruned 0 `, 1)
				if _, err := s.Append(ctx, session.AppendInput{Type: session.TypeToolResult, Data: []byte(data),
					SurfaceOp: &session.SurfaceOp{Replace: true, StartSeq: 5, EndSeq: 5}, SourceEventSeqs: []sdk.Seq{5}}); err != nil {
					return sdk.SummarizeReply{}, err
				}
				return txReply("short"), nil
			}
		}, nil},
		{"cancelled", sdk.CodeCompactionCancelled, Automatic, func(_ *session.Session, cancel context.CancelFunc) func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
			return func(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
				cancel()
				<-ctx.Done()
				return sdk.SummarizeReply{}, ctx.Err()
			}
		}, nil},
		{"commit refused", sdk.CodeCompactionCommitFailed, Automatic, nil, refuseSummary},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := txSession(t, func(o *session.Options) {
				if tc.rel != nil {
					o.Relational = append(o.Relational, tc.rel)
				}
			})
			txConversation(t, s, 3, 400, tc.mode == Manual)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sum := &txSummarizer{}
			if tc.fn != nil {
				sum.fn = tc.fn(s, cancel)
			}
			c := txCompactor(t, sum, nil)
			before := txSurfaceState(t, s)
			n0 := s.Len()
			_, err := c.CompactRegion(ctx, s, 3, 10, tc.mode)
			e := txRequireCode(t, err, tc.code)
			types := txTypes(s, n0)
			var ends []session.Event
			for _, ev := range s.Events().Range(n0, s.Len()).All() {
				if ev.Type() == session.TypeCompactionEnd {
					ends = append(ends, ev)
				}
			}
			if types[0] != session.TypeCompactionStart || len(ends) != 1 || slices.Contains(types, session.TypeCompactionSummary) {
				t.Fatalf("appended %v; want compaction/start … exactly one compaction/end and no summary", types)
			}
			endData := txData(t, ends[0])
			if msg, _ := endData["error"].(string); !strings.Contains(msg, string(tc.code)) || endData["compactionId"] != "c1" {
				t.Errorf("compaction/end %s does not carry the %s error", ends[0].Data(), tc.code)
			}
			if _, open := OpenBracket(s.Events()); open {
				t.Error("the bracket is still open")
			}
			after := txSurfaceState(t, s)
			for _, ev := range s.Events().Range(n0, s.Len()).All() {
				if ev.Type() == session.TypeUserMessage && ev.DataView().Get("source").Get("kind").StrEqual("compact-checkpoint") {
					t.Fatalf("a checkpoint was committed at seq %d", ev.Seq())
				}
			}
			if strings.Contains(tc.name, "changed") {
				return // the test changed the surface itself
			}
			if !before.equal(after) {
				t.Errorf("the surface changed: %v → %v", before.nodes, after.nodes)
			}
			if tc.code == sdk.CodeCompactionNotSmaller && (!strings.Contains(e.Detail, "tokens") || len(e.Detail) < 20) {
				t.Errorf("detail %q", e.Detail)
			}
		})
	}
}

// relFunc adapts a function to session.Relational.
type relFunc func(events session.EventList, e session.Event) error

func (f relFunc) CheckAppend(events session.EventList, e session.Event) error { return f(events, e) }

// Manual stability: changes outside the span are fine.
func TestManualCompactionToleratesChangesElsewhere(t *testing.T) {
	s := txSession(t)
	txConversation(t, s, 3, 400, true)
	sum := &txSummarizer{fn: func(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
		if _, err := s.Append(ctx, txUser("later", "a note")); err != nil {
			return sdk.SummarizeReply{}, err
		}
		return txReply("short"), nil
	}}
	c := txCompactor(t, sum, nil)
	out, err := c.CompactRegion(context.Background(), s, 3, 10, Manual)
	if err != nil {
		t.Fatal(err)
	}
	// The note took the seq after compaction/start; the group was planned
	// for the next free one.
	if out.SummarySeq != out.StartSeq+2 {
		t.Fatalf("outcome %+v", out)
	}
	if b := txData(t, mustEvent(t, s, out.StartSeq)); b["turn"] != nil {
		t.Errorf("a manual bracket is standalone: %v", b)
	}
}

func mustEvent(t testing.TB, s *session.Session, seq sdk.Seq) session.Event {
	t.Helper()
	e, ok := s.Event(seq)
	if !ok {
		t.Fatalf("no event %d", seq)
	}
	return e
}

// The mode decides the turn rule; the region must pass the checks of
// docs/compaction.md; nothing is appended for these refusals.
func TestCompactRegionRefusals(t *testing.T) {
	c := txCompactor(t, &txSummarizer{}, nil)
	closed := txSession(t)
	txConversation(t, closed, 3, 100, true)
	open := txSession(t)
	txConversation(t, open, 3, 100, false)
	cases := []struct {
		s          *session.Session
		start, end sdk.Seq
		mode       Mode
		code       sdk.Code
	}{
		{closed, 3, 10, Automatic, sdk.CodeCompactionNoOpenTurn},
		{open, 3, 10, Manual, sdk.CodeCompactionTurnOpen},
		{open, 3, 4, Automatic, sdk.CodeCompactionUnbalancedBoundary},
		{open, 0, 10, Automatic, sdk.CodeSystemNode0Protected},
		{open, 10, 3, Automatic, sdk.CodeCompactionUnbalancedBoundary},
	}
	for _, tc := range cases {
		n := tc.s.Len()
		_, err := c.CompactRegion(context.Background(), tc.s, tc.start, tc.end, tc.mode)
		txRequireCode(t, err, tc.code)
		if tc.s.Len() != n {
			t.Errorf("%s: refusal appended %v", tc.code, txTypes(tc.s, n))
		}
	}
}

// Lock and lifecycle, first half, and concurrent operations: a log ending in an
// unmatched compaction/start is locked (COMPACTION_BUSY), and so is a
// session whose compaction is running.
func TestCompactionBusy(t *testing.T) {
	s := txSession(t)
	txConversation(t, s, 3, 400, false)
	txAppend(t, s, txIn(session.TypeCompactionStart, `{"compactionId":"other","turn":1}`))
	c := txCompactor(t, &txSummarizer{}, nil)
	_, err := c.CompactRegion(context.Background(), s, 3, 10, Automatic)
	txRequireCode(t, err, sdk.CodeCompactionBusy, `"other"`)

	s2 := txSession(t)
	txConversation(t, s2, 3, 400, false)
	entered, release := make(chan struct{}), make(chan struct{})
	sum := &txSummarizer{fn: func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
		close(entered)
		<-release
		return txReply("short"), nil
	}}
	c2 := txCompactor(t, sum, nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := c2.CompactRegion(context.Background(), s2, 3, 10, Automatic); err != nil {
			t.Error(err)
		}
	}()
	<-entered
	_, err = c2.CompactRegion(context.Background(), s2, 11, 14, Automatic)
	txRequireCode(t, err, sdk.CodeCompactionBusy)
	close(release)
	wg.Wait()
}

// A summary request larger than RPCMaxBytes shrinks the region from its end
// at balanced cuts; the compaction covers exactly what was sent.
func TestSummarizeRequestShrinksToFit(t *testing.T) {
	sum := &txSummarizer{}
	c := txCompactor(t, sum, func(o *Options) { o.RPCMaxBytes = 1<<16 + 12_000 })
	s := txSession(t)
	txConversation(t, s, 6, 1000, false) // nodes 3..26
	out, err := c.CompactRegion(context.Background(), s, 3, 26, Automatic)
	if err != nil {
		t.Fatal(err)
	}
	r := sum.requests()[0]
	size := len(r.System) + len(r.Tools) + len(r.Config) + len(r.Instruction)
	for _, m := range r.Messages {
		size += len(m)
	}
	if size > 12_000 || len(r.Messages) == 0 || len(r.Messages) >= 24 {
		t.Fatalf("request of %d bytes with %d messages", size, len(r.Messages))
	}
	if len(out.Shadowed) != len(r.Messages) || out.Shadowed[0] != 3 || out.Shadowed[len(out.Shadowed)-1] >= 26 {
		t.Fatalf("shadowed %v for %d messages", out.Shadowed, len(r.Messages))
	}
}

// A commit that fails, with the compaction/end that would close the bracket
// failing too, leaves the bracket open and returns both errors.
func TestCompactionCommitAndCloseFail(t *testing.T) {
	ctl := &session.Control{}
	s := txSession(t, func(o *session.Options) { o.Control = ctl })
	txConversation(t, s, 3, 400, false)
	sum := &txSummarizer{fn: func(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
		ctl.Close()
		return txReply("short"), nil
	}}
	c := txCompactor(t, sum, nil)
	_, err := c.CompactRegion(context.Background(), s, 3, 10, Automatic)
	txRequireCode(t, err, sdk.CodeCompactionCommitFailed)
	if !errors.Is(err, sdk.CodeSessionClosed) {
		t.Fatalf("%v does not report the closed session", err)
	}
	if b, open := OpenBracket(s.Events()); !open || b.ID != "c1" {
		t.Fatalf("bracket %+v %v; want c1 left open", b, open)
	}
}

// Other appends during the summary call move σ: the checkpoint cites the
// summary where it landed; a log-only append leaves the surface stable.
func TestCompactionCitesItsSummaryAfterOtherAppends(t *testing.T) {
	s := txSession(t)
	txConversation(t, s, 3, 400, false)
	sum := &txSummarizer{fn: func(ctx context.Context, _ sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
		for range 3 {
			if _, err := s.Append(ctx, txIn(session.TypeTodoWrite, `{"todos":[]}`)); err != nil {
				return sdk.SummarizeReply{}, err
			}
		}
		return txReply("short"), nil
	}}
	c := txCompactor(t, sum, nil)
	out, err := c.CompactRegion(context.Background(), s, 3, 10, Automatic)
	if err != nil {
		t.Fatal(err)
	}
	cp := mustEvent(t, s, out.CheckpointSeq)
	if src := cp.SourceEventSeqs(); out.SummarySeq != out.StartSeq+4 || src[0] != out.StartSeq || src[1] != out.SummarySeq || mustEvent(t, s, src[1]).Type() != session.TypeCompactionSummary {
		t.Fatalf("checkpoint sources %v do not cite the summary at %d", src, out.SummarySeq)
	}
}
