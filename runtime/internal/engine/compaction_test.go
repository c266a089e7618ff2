package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// compactionConfig is the embedded default (JSONL under dir, the bundled
// summarizer and pruner) with the summarizer in its offline extractive mode.
func compactionConfig(dir string) *config.Config {
	cfg := config.Default(config.Overrides{DataDir: dir})
	cfg.Plugins = append(cfg.Plugins, config.Plugin{Name: "compactor-summary", Config: json.RawMessage(`{"mode":"extractive"}`)})
	return cfg
}

// cq renders s as a JSON string.
func cq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// convo appends the events of a scripted agent conversation.
type convo struct {
	t    testing.TB
	ctx  context.Context
	s    *session.Session
	turn int
	step int
	n    int // ids
}

func (c *convo) add(typ, data string, surface bool) session.Event {
	c.t.Helper()
	in := session.AppendInput{Type: typ, Data: []byte(data)}
	if surface {
		in.SurfaceOp = &session.SurfaceOp{}
	}
	e, err := c.s.Append(c.ctx, in)
	if err != nil {
		c.t.Fatalf("append %s: %v", typ, err)
	}
	return e
}

func (c *convo) id(prefix string) string {
	c.n++
	return fmt.Sprintf("%s-%d", prefix, c.n)
}

func (c *convo) start() {
	c.add(session.TypeSystemMessage, `{"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":"You are a careful coding agent."}],"source":{"kind":"system-prompt"}}}`, true)
	c.add(session.TypeRequestHeader, `{"header":{"config":{"provider":"p","model":"m"},"tools":[{"name":"read","description":"Read a file","parameters":{"type":"object"}}]},"reason":"initial"}`, false)
}

func (c *convo) turnStart(text string) {
	c.turn++
	c.step = 0
	c.add(session.TypeTurnStart, fmt.Sprintf(`{"turn":%d}`, c.turn), false)
	c.add(session.TypeUserMessage, `{"id":`+cq(c.id("u"))+`,"role":"user","content":[{"type":"text","text":`+cq(text)+`}],"source":{"kind":"prompt"}}`, true)
}

func (c *convo) stepStart() {
	c.step++
	c.add(session.TypeStepStart, fmt.Sprintf(`{"turn":%d,"step":%d}`, c.turn, c.step), false)
}

func (c *convo) stepEnd() {
	c.add(session.TypeStepEnd, fmt.Sprintf(`{"turn":%d,"step":%d}`, c.turn, c.step), false)
}

// toolStep: an assistant message calling read, the call, its result.
func (c *convo) toolStep(args, result string) {
	call := c.id("call")
	c.add(session.TypeAssistantMessage, fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool-call","id":%s,"name":"read","arguments":%s}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`,
		c.turn, c.step, cq(c.id("a")), cq(call), cq(args)), true)
	c.add(session.TypeToolCall, fmt.Sprintf(`{"turn":%d,"step":%d,"callId":%s,"name":"read","arguments":%s}`, c.turn, c.step, cq(call), cq(args)), false)
	c.add(session.TypeToolResult, fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"tool","toolCallId":%s,"content":[{"type":"text","text":%s}],"source":{"kind":"tool","callId":%s}}}`,
		c.turn, c.step, cq(c.id("r")), cq(call), cq(result), cq(call)), true)
}

func (c *convo) answer(text string) {
	c.add(session.TypeAssistantMessage, fmt.Sprintf(`{"turn":%d,"step":%d,"message":{"id":%s,"role":"assistant","content":[{"type":"text","text":%s}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`,
		c.turn, c.step, cq(c.id("a")), cq(text)), true)
}

func (c *convo) turnEnd() {
	c.add(session.TypeTurnEnd, fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, c.turn), false)
}

// requirePaired checks that every tool call in the derived messages keeps
// its result, and that every tool result follows its call.
func requirePaired(t testing.TB, s *session.Session) {
	t.Helper()
	ml, err := s.Messages()
	if err != nil {
		t.Fatal(err)
	}
	pending := map[string]bool{}
	for i, m := range ml.All() {
		v := m.View()
		switch m.Role() {
		case "assistant":
			for _, b := range v.Get("content").Elements() {
				if b.Get("type").StrEqual("tool-call") {
					id, _ := b.Get("id").Str()
					pending[id] = true
				}
			}
		case "tool":
			id, _ := v.Get("toolCallId").Str()
			if !pending[id] {
				t.Fatalf("message %d: tool result for %q without its call", i, id)
			}
			delete(pending, id)
		default:
			if len(pending) > 0 {
				t.Fatalf("message %d (%s) sits between tool calls %v and their results", i, m.Role(), pending)
			}
		}
	}
	if len(pending) > 0 {
		t.Fatalf("tool calls without results: %v", pending)
	}
}

// A headless profile has no compactor and writes no compaction/* events;
// the compaction invariants still guard its log.
func TestCompactionHeadlessNeverCompacts(t *testing.T) {
	ctx := context.Background()
	e, err := Start(ctx, config.Headless(config.Overrides{DataDir: t.TempDir()}), Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	if e.Compactor != nil {
		t.Fatal("a headless engine has a compactor")
	}
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "headless"})
	if err != nil {
		t.Fatal(err)
	}
	c := &convo{t: t, ctx: ctx, s: s}
	c.start()
	for range 50 {
		c.turnStart(strings.Repeat("long question ", 200))
		c.stepStart()
		c.toolStep("{}", strings.Repeat("output ", 3000))
		c.answer("done")
		c.stepEnd()
		c.turnEnd()
	}
	for _, ev := range s.Events().All() {
		if strings.HasPrefix(ev.Type(), "compaction/") {
			t.Fatalf("headless wrote %s at seq %d", ev.Type(), ev.Seq())
		}
	}
	_, err = s.Append(ctx, session.AppendInput{Type: session.TypeCompactionEnd, Data: []byte(`{"compactionId":"x","turn":null}`)})
	if !errors.Is(err, sdk.CodeCompactionInvariant) {
		t.Fatalf("an unmatched compaction/end: %v", err)
	}
}

// End to end through the real summarizer (extractive) and pruner plugin
// subprocesses: a 2,000-message agent session against a 32,000-token window
// stays below the threshold at every request, and every tool call in the
// derived messages keeps its result.
func TestCompactionEndToEndStaysBelowThreshold(t *testing.T) {
	ctx := context.Background()
	const window = 32_000
	e, err := Start(ctx, compactionConfig(t.TempDir()), Options{Executable: logbookBin,
		ModelInfo: func(provider, model string) (int64, bool) { return window, provider == "p" && model == "m" }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	if e.Compactor == nil {
		t.Fatal("no compactor for a compaction block")
	}
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	c := &convo{t: t, ctx: ctx, s: s}
	c.start()
	threshold := int64(window * 0.8)
	messages, requests, compactions, pruned := 0, 0, 0, 0
	request := func() {
		t.Helper()
		rep, err := e.Compactor.BeforeRequest(ctx, s)
		if err != nil {
			t.Fatalf("request %d: %v", requests, err)
		}
		requests++
		compactions += len(rep.Compactions)
		pruned += len(rep.Prune.Pruned)
		if rep.TokensAfter >= threshold {
			t.Fatalf("request %d after %d messages: %d tokens ≥ threshold %d (%v)", requests, messages, rep.TokensAfter, threshold, rep.Warning)
		}
	}
	for messages < 2000 {
		c.turnStart(fmt.Sprintf("Task %d: look at file %d and explain it. %s", c.turn+1, c.turn, strings.Repeat("context ", 60)))
		messages++
		for range 2 {
			c.stepStart()
			request()
			result := strings.Repeat(fmt.Sprintf("line of file %d\n", c.n), 40)
			if c.n%7 == 0 {
				result = strings.Repeat("a very long generated output line\n", 400) // over the pruner's threshold
			}
			c.toolStep(fmt.Sprintf(`{"path":"f%d.go"}`, c.n), result)
			messages += 2
			c.stepEnd()
		}
		c.stepStart()
		request()
		c.answer(fmt.Sprintf("File %d does this. %s", c.turn, strings.Repeat("explanation ", 40)))
		messages++
		c.stepEnd()
		c.turnEnd()
	}
	requirePaired(t, s)
	meas, err := compaction.Measure(s)
	if err != nil {
		t.Fatal(err)
	}
	if compactions == 0 || pruned == 0 {
		t.Fatalf("%d compactions and %d prunes: the workload did not exercise both", compactions, pruned)
	}
	if _, err := e.Store.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages, %d requests, %d compactions, %d pruned results; %d events, %d nodes, %d tokens now (threshold %d)",
		messages, requests, compactions, pruned, s.Len(), len(meas.Nodes), meas.TotalTokens, threshold)
}
