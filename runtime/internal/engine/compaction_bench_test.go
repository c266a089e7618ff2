package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// pruneWorkload is a 10,000-node session: a system prompt, one turn of
// 2,500 rounds (user message, then a step of its own: assistant tool call,
// tool result, assistant answer) minus the last node (the log ends inside
// the last step), of which 1,000 tool results (2 in 5) carry 10,000
// characters (over the 8,192 threshold) and the rest 200.
func pruneWorkload() []session.AppendInput {
	surface := func(typ, data string) session.AppendInput {
		return session.AppendInput{Type: typ, Data: []byte(data), SurfaceOp: &session.SurfaceOp{}}
	}
	ins := []session.AppendInput{
		surface(session.TypeSystemMessage, `{"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":"You are a test agent."}],"source":{"kind":"system-prompt"}}}`),
		{Type: session.TypeRequestHeader, Data: []byte(`{"header":{"config":{"provider":"p","model":"m"}},"reason":"initial"}`)},
		{Type: session.TypeTurnStart, Data: []byte(`{"turn":1}`)},
	}
	big, small := cq(strings.Repeat("0123456789", 1000)), cq(strings.Repeat("x", 200))
	nodes := 1
	for i := 0; nodes < 10_000; i++ {
		call := fmt.Sprintf("call-%d", i)
		result := small
		if i%5 < 2 {
			result = big
		}
		step := i + 1
		round := []session.AppendInput{
			surface(session.TypeUserMessage, fmt.Sprintf(`{"id":"u%d","role":"user","content":[{"type":"text","text":"go on"}],"source":{"kind":"prompt"}}`, i)),
			{Type: session.TypeStepStart, Data: fmt.Appendf(nil, `{"turn":1,"step":%d}`, step)},
			surface(session.TypeAssistantMessage, fmt.Sprintf(`{"turn":1,"step":%d,"message":{"id":"a%d","role":"assistant","content":[{"type":"tool-call","id":%s,"name":"read","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`, step, i, cq(call))),
			surface(session.TypeToolResult, fmt.Sprintf(`{"turn":1,"step":%d,"message":{"id":"r%d","role":"tool","toolCallId":%s,"content":[{"type":"text","text":%s}],"source":{"kind":"tool","callId":%s}}}`, step, i, cq(call), result, cq(call))),
			surface(session.TypeAssistantMessage, fmt.Sprintf(`{"turn":1,"step":%d,"message":{"id":"b%d","role":"assistant","content":[{"type":"text","text":"ok"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`, step, i)),
			{Type: session.TypeStepEnd, Data: fmt.Appendf(nil, `{"turn":1,"step":%d}`, step)},
		}
		for _, in := range round {
			if nodes < 10_000 {
				ins = append(ins, in)
				if in.SurfaceOp != nil {
					nodes++
				}
			}
		}
	}
	return ins
}

// BenchmarkPruneSession10K prunes 1,000 oversized tool results in a
// 10,000-node session through the pruner plugin subprocess (docs/compaction.md):
// one Prune call offers them, then 1,000 compaction/prune + rewrite groups
// are appended (and written behind to the memory backend plugin). Target:
// ≤ 200 ms/op.
func BenchmarkPruneSession10K(b *testing.B) {
	ctx := context.Background()
	cfg := config.Default(config.Overrides{DataDir: b.TempDir()})
	cfg.Persistence = []config.Persistence{{Name: "memory", Config: json.RawMessage(`{}`)}}
	cfg.Plugins = append(cfg.Plugins, config.Plugin{Name: "compactor-summary", Config: json.RawMessage(`{"mode":"extractive"}`)})
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(ctx)
	ins := pruneWorkload()
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		s, err := e.Store.Create(ctx, store.CreateOptions{ID: fmt.Sprintf("prune-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		for _, in := range ins {
			if _, err := s.Append(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.Store.Flush(ctx, s); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := e.Compactor.Prune(ctx, s)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Pruned) != 1000 {
			b.Fatalf("pruned %d results; want 1000", len(res.Pruned))
		}
		if err := e.Store.Release(ctx, s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}
