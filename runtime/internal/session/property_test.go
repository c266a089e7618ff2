package session

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// logGen drives a live session with random valid events: turns and steps,
// assistant messages with tool calls, tool calls and results, range
// replaces, tool-result rewrites, a system node 0, request headers and
// bound developer messages.
type logGen struct {
	t       *testing.T
	rng     *rand.Rand
	s       *Session
	turn    int64 // open turn, 0 when none
	step    int64 // open step, 0 when none
	turns   int64
	steps   int64    // the open turn's highest step, 0 when none
	pending []string // tool calls of the open step without a result
	nextID  int
	header  sdk.Seq // last request/header, -1 when none
}

func newLogGen(t *testing.T, seed uint64) *logGen {
	s, err := New(Options{Header: sdk.Header{ID: "prop"}, Clock: ClockFunc(func() int64 { return 1_700_000_000_000 })})
	if err != nil {
		t.Fatal(err)
	}
	return &logGen{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), s: s, header: -1}
}

func (g *logGen) id(prefix string) string {
	g.nextID++
	return fmt.Sprintf("%s%d", prefix, g.nextID)
}

func (g *logGen) add(in AppendInput) Event {
	g.t.Helper()
	e, err := g.s.Append(context.Background(), in)
	if err != nil {
		g.t.Fatalf("valid append %s rejected: %v", in.Type, err)
	}
	return e
}

func (g *logGen) raw(format string, args ...any) []byte { return []byte(fmt.Sprintf(format, args...)) }

// next appends one random valid event (or a short group).
func (g *logGen) next() {
	app := &SurfaceOp{}
	switch {
	case g.s.Len() == 0 && g.rng.IntN(2) == 0:
		g.add(AppendInput{Type: TypeSystemMessage, SurfaceOp: app, Data: g.raw(`{"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":"be brief"}],"source":{"kind":"system-prompt"}}}`)})
		return
	case g.turn == 0:
		g.turns++
		g.turn, g.steps = g.turns, 0
		g.add(AppendInput{Type: TypeTurnStart, Data: g.raw(`{"turn":%d}`, g.turn)})
		return
	}
	r := g.rng.IntN(20)
	if len(g.pending) > 0 && (r < 8 || r >= 10 && r < 14 || r >= 16 && r < 18) {
		// The loop protocol: while a call of the open step has no result,
		// only its call and result (or log-only events) may come.
		r = 8 + g.rng.IntN(2)
	}
	switch {
	case r < 3:
		g.add(AppendInput{Type: TypeUserMessage, SurfaceOp: app, Data: g.raw(`{"id":%q,"role":"user","content":[{"type":"text","text":"request %d"}],"source":{"kind":"user"}}`, g.id("u"), g.rng.IntN(1000))})
	case r < 5 && g.step == 0:
		g.steps += g.rng.Int64N(3) + 1
		g.step = g.steps
		g.pending = nil
		g.add(AppendInput{Type: TypeStepStart, Data: g.raw(`{"turn":%d,"step":%d}`, g.turn, g.step)})
	case r < 8 && g.step != 0:
		var blocks []string
		for range g.rng.IntN(3) {
			call := g.id("c")
			g.pending = append(g.pending, call)
			blocks = append(blocks, fmt.Sprintf(`{"type":"tool-call","id":%q,"name":"shell","arguments":"{}"}`, call))
		}
		if len(blocks) == 0 && g.rng.IntN(3) > 0 {
			blocks = append(blocks, `{"type":"text","text":"done"}`)
		}
		g.add(AppendInput{Type: TypeAssistantMessage, SurfaceOp: app, Data: g.raw(`{"turn":%d,"step":%d,"message":{"id":%q,"role":"assistant","content":[%s],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`,
			g.turn, g.step, g.id("a"), joinComma(blocks))})
	case r < 10 && len(g.pending) > 0:
		call := g.pending[g.rng.IntN(len(g.pending))]
		if g.rng.IntN(2) == 0 {
			g.add(AppendInput{Type: TypeToolCall, Data: g.raw(`{"turn":%d,"step":%d,"callId":%q,"name":"shell","arguments":"{}"}`, g.turn, g.step, call)})
		}
		g.add(AppendInput{Type: TypeToolResult, SurfaceOp: app, Data: g.toolResult(call, "output")})
		g.pending = slices.DeleteFunc(g.pending, func(c string) bool { return c == call })
	case r < 11 && g.step != 0:
		g.add(AppendInput{Type: TypeStepEnd, Data: g.raw(`{"turn":%d,"step":%d}`, g.turn, g.step)})
		g.step, g.pending = 0, nil
	case r < 12:
		if g.step != 0 {
			g.add(AppendInput{Type: TypeStepEnd, Data: g.raw(`{"turn":%d,"step":%d}`, g.turn, g.step)})
		}
		g.add(AppendInput{Type: TypeTurnEnd, Data: g.raw(`{"turn":%d,"reason":{"kind":"completed"}}`, g.turn)})
		g.turn, g.step, g.pending = 0, 0, nil
	case r < 14:
		g.replaceRange()
	case r < 15:
		g.rewriteToolResult()
	case r < 16:
		reason := "change"
		if g.header < 0 {
			reason = "initial"
		} else if g.rng.IntN(2) == 0 {
			reason = "series"
		}
		e := g.add(AppendInput{Type: TypeRequestHeader, Data: g.raw(`{"header":{"config":{"provider":"p","model":"m%d"},"tools":[{"name":"search","description":"find","parameters":{"type":"object"}},{"name":"shell%d","description":"run","parameters":{}}]},"reason":%q}`, g.rng.IntN(3), g.rng.IntN(2), reason)})
		g.header = e.Seq()
	case r < 17 && g.header >= 0:
		g.add(AppendInput{Type: TypeDeveloperMessage, SurfaceOp: app, Data: g.raw(`{"turn":%d,"step":0,"message":{"id":%q,"role":"developer","content":[{"type":"tool-addition","toolName":"search"}],"source":{"kind":"tools"}},"headerSeq":%d}`, g.turn, g.id("d"), g.header)})
	case r < 18:
		g.add(AppendInput{Type: TypeDeveloperMessage, SurfaceOp: app, Data: g.raw(`{"turn":%d,"step":0,"message":{"id":%q,"role":"developer","content":[{"type":"tool-removal","toolName":"search"}],"source":{"kind":"tools"}}}`, g.turn, g.id("d"))})
	default:
		g.add(AppendInput{Type: TypeTodoWrite, Data: g.raw(`{"todos":[{"content":"x","status":"pending"}]}`)})
	}
}

func (g *logGen) toolResult(call, text string) []byte {
	return g.raw(`{"turn":%d,"step":%d,"message":{"id":"r-%s","role":"tool","toolCallId":%q,"content":[{"type":"text","text":%q}],"source":{"kind":"tool","callId":%q}}}`, g.turn, g.step, call, call, text, call)
}

// replaceRange replaces a random span (not touching a protected node 0)
// with a user message citing every shadowed node.
func (g *logGen) replaceRange() {
	v, err := g.s.Surface()
	if err != nil || v.Len() < 2 {
		return
	}
	lo := 0
	if g.s.recordAt(v.At(0)).typ == TypeSystemMessage {
		lo = 1
	}
	if v.Len()-lo < 1 {
		return
	}
	i := lo + g.rng.IntN(v.Len()-lo)
	j := i + g.rng.IntN(min(4, v.Len()-i))
	span := v.Nodes()[i : j+1]
	g.add(AppendInput{Type: TypeUserMessage, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: span[0], EndSeq: span[len(span)-1]}, SourceEventSeqs: span,
		Data: g.raw(`{"id":%q,"role":"user","content":[{"type":"text","text":"summary"}],"source":{"kind":"summary"}}`, g.id("s"))})
}

// rewriteToolResult rewrites the content of a current tool/result node.
func (g *logGen) rewriteToolResult() {
	v, err := g.s.Surface()
	if err != nil {
		return
	}
	for _, seq := range v.Nodes() {
		r := g.s.recordAt(seq)
		if r.typ != TypeToolResult || g.rng.IntN(2) == 0 {
			continue
		}
		data := bytes.Replace(r.dataView().Bytes(), []byte(`"content":[`), []byte(`"content":[{"type":"text","text":"[pruned]"},`), 1)
		g.add(AppendInput{Type: TypeToolResult, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: seq, EndSeq: seq}, SourceEventSeqs: []sdk.Seq{seq}, Data: data})
		return
	}
}

func joinComma(parts []string) string {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p)
	}
	return b.String()
}

// derivedFromScratch folds the events from scratch and derives the messages
// with MessageOf.
func derivedFromScratch(t *testing.T, events []Event) (nodes []sdk.Seq, msgs []string) {
	t.Helper()
	f, err := Fold(context.Background(), events, nil)
	if err != nil {
		t.Fatalf("Fold: %v", err)
	}
	for _, seq := range f.Nodes {
		if m, ok := MessageOf(events[seq], f.Projected); ok {
			msgs = append(msgs, string(m.JSON()))
		}
	}
	return f.Nodes, msgs
}

func messageJSON(t *testing.T, s *Session) []string {
	t.Helper()
	l, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range l.All() {
		out = append(out, string(m.JSON()))
	}
	return out
}

func TestPropertyReplayEqualsLive(t *testing.T) {
	for seed := range uint64(120) {
		g := newLogGen(t, seed)
		for range 80 {
			g.next()
			if g.rng.IntN(10) == 0 { // read in between: exercises the incremental caches
				_, _ = g.s.Messages()
			}
		}
		live := g.s
		events := live.Events().Slice()
		envs := make([][]byte, len(events))
		for i, e := range events {
			envs[i] = e.Envelope()
		}
		replayed, err := Restore(context.Background(), Options{Header: live.Header()}, RestoreOptions{}, envs)
		if err != nil {
			t.Fatalf("seed %d: restore of a live log: %v", seed, err)
		}
		lv, _ := live.Surface()
		rv, _ := replayed.Surface()
		if !slices.Equal(lv.Nodes(), rv.Nodes()) || lv.ReplaceGeneration() != rv.ReplaceGeneration() || lv.ContentGeneration() != rv.ContentGeneration() {
			t.Fatalf("seed %d: surface live %v (gen %d) != replay %v (gen %d)", seed, lv.Nodes(), lv.ReplaceGeneration(), rv.Nodes(), rv.ReplaceGeneration())
		}
		if a, b := messageJSON(t, live), messageJSON(t, replayed); !slices.Equal(a, b) {
			t.Fatalf("seed %d: messages differ after replay", seed)
		}
		nodes, msgs := derivedFromScratch(t, events)
		if !slices.Equal(nodes, lv.Nodes()) || !slices.Equal(msgs, messageJSON(t, live)) {
			t.Fatalf("seed %d: derived != derived from scratch", seed)
		}
		lh, lok := live.RequestHeader()
		rh, rok := replayed.RequestHeader()
		if lok != rok || lok && lh.Seq() != rh.Seq() {
			t.Fatalf("seed %d: header fold differs", seed)
		}
		if a, b := fmt.Sprint(live.ToolHistory()), fmt.Sprint(replayed.ToolHistory()); a != b {
			t.Fatalf("seed %d: tool history differs:\n%s\n%s", seed, a, b)
		}
		if !sameLoop(live.loop, replayed.loop) { // folded event by event, and from the last boundaries
			t.Fatalf("seed %d: loop state live %+v != replayed %+v", seed, live.loop, replayed.loop)
		}
		if a, b := live.Transcript().Len(), replayed.Transcript().Len(); a != b {
			t.Fatalf("seed %d: transcript %d != %d", seed, a, b)
		}
	}
}

func TestPropertyInvalidAppendChangesNothing(t *testing.T) {
	for seed := range uint64(60) {
		g := newLogGen(t, seed+1000)
		for range 40 {
			g.next()
		}
		s := g.s
		beforeLen := s.Len()
		beforeSurf, _ := s.Surface()
		beforeMsgs := messageJSON(t, s)
		held, _ := s.Messages()
		heldLen := held.Len()
		for k := range 30 {
			in := g.invalidInput(k)
			if _, err := s.Append(context.Background(), in); err == nil {
				t.Fatalf("seed %d: invalid input %d (%s) accepted", seed, k, in.Type)
			} else if sdk.CodeOf(err) == "" {
				t.Fatalf("seed %d: error without a code: %v", seed, err)
			}
		}
		afterSurf, _ := s.Surface()
		if s.Len() != beforeLen || !slices.Equal(beforeSurf.Nodes(), afterSurf.Nodes()) ||
			beforeSurf.ContentGeneration() != afterSurf.ContentGeneration() || !slices.Equal(beforeMsgs, messageJSON(t, s)) || held.Len() != heldLen {
			t.Fatalf("seed %d: a rejected append changed the session", seed)
		}
	}
}

// invalidInput returns one of many broken inputs.
func (g *logGen) invalidInput(k int) AppendInput {
	n := sdk.Seq(g.s.Len())
	app := &SurfaceOp{}
	user := g.raw(`{"id":"x","role":"user","content":[],"source":{"kind":"user"}}`)
	switch k % 12 {
	case 0:
		return AppendInput{Type: TypeUserMessage, Data: user}
	case 1:
		return AppendInput{Type: TypeUserMessage, SurfaceOp: app, Data: []byte(`{"id":"x","id":"y"}`)}
	case 2:
		return AppendInput{Type: TypeUserMessage, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: n, EndSeq: n}, SourceEventSeqs: []sdk.Seq{0}, Data: user}
	case 3:
		return AppendInput{Type: TypeUserMessage, SurfaceOp: app, SourceEventSeqs: []sdk.Seq{n + 3}, Data: user}
	case 4:
		return AppendInput{Type: TypeTurnStart, SurfaceOp: app, Data: g.raw(`{"turn":9}`)}
	case 5:
		return AppendInput{Type: TypeUserMessage, SurfaceOp: app, Data: g.raw(`{"id":"x","role":"assistant","content":[],"source":{"kind":"user"}}`)}
	case 6:
		return AppendInput{Type: "Bad Type", Data: user}
	case 7:
		return AppendInput{Type: TypeSessionEndSeed, Data: g.raw(`{}`)}
	case 8:
		return AppendInput{Type: TypeTodoWrite, Data: g.raw(`{"todos":[{"content":"x","status":"pending","n":-0}]}`)}
	case 9:
		v, _ := g.s.Surface()
		if v.Len() >= 2 { // reversed span
			return AppendInput{Type: TypeUserMessage, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: v.At(v.Len() - 1), EndSeq: v.At(v.Len() - 2)}, SourceEventSeqs: v.Nodes(), Data: user}
		}
		return AppendInput{Type: TypeUserMessage, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: 0, EndSeq: 0}, Data: user}
	case 10:
		v, _ := g.s.Surface()
		if v.Len() >= 3 { // incomplete coverage
			return AppendInput{Type: TypeUserMessage, SurfaceOp: &SurfaceOp{Replace: true, StartSeq: v.At(v.Len() - 3), EndSeq: v.At(v.Len() - 1)}, SourceEventSeqs: []sdk.Seq{v.At(v.Len() - 3)}, Data: user}
		}
		return AppendInput{Type: TypeUserMessage, SurfaceOp: app, SourceEventSeqs: []sdk.Seq{}, Data: user}
	default:
		return AppendInput{Type: TypeAssistantMessage, SurfaceOp: app, SourceEventSeqs: []sdk.Seq{0}, Data: g.raw(`{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`)}
	}
}

func TestPropertyClosersCloseEverything(t *testing.T) {
	for seed := range uint64(150) {
		g := newLogGen(t, seed+5000)
		for range 10 + g.rng.IntN(60) {
			g.next()
		}
		events := g.s.Events().Slice()
		closers := InterruptedTurnClosers(events)
		if (g.turn != 0) != (len(closers) > 0) {
			t.Fatalf("seed %d: open turn %d but %d closers", seed, g.turn, len(closers))
		}
		all := append(slices.Clone(events), closers...)
		if more := InterruptedTurnClosers(all); len(more) != 0 {
			t.Fatalf("seed %d: log plus closers yields %d more closers", seed, len(more))
		}
		if _, err := RestoreEvents(context.Background(), Options{}, RestoreOptions{}, all); err != nil {
			t.Fatalf("seed %d: log plus closers does not restore: %v", seed, err)
		}
		// Every pending call of the open step got exactly one error result.
		results := 0
		for _, c := range closers {
			if c.Type() == TypeToolResult {
				results++
			}
		}
		if results != len(g.pending) && g.step != 0 {
			t.Fatalf("seed %d: %d pending calls, %d error results", seed, len(g.pending), results)
		}
	}
}
