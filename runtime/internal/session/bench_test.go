package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// assistant1KiB is a realistic ~1 KiB assistant/message with one tool call:
// a short explanation, and an edit_file call whose JSON-encoded arguments
// carry Go code with escapes.
var assistant1KiB = func() []byte {
	args, _ := json.Marshal(map[string]string{
		"path": "internal/cache/lru.go",
		"patch": "func (c *LRU) Get(key string) (v []byte, ok bool) {\n\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n" +
			"\tel, ok := c.items[key]\n\tif !ok {\n\t\tc.misses++\n\t\treturn nil, false\n\t}\n\tc.order.MoveToFront(el)\n" +
			"\treturn el.Value.(*entry).val, true\n}\n// \"hits\" are counted by the caller\n",
	})
	data, _ := json.Marshal(map[string]any{
		"turn": 3, "step": 2,
		"message": map[string]any{
			"id": "msg_01HZX3K9T7Q2M4", "role": "assistant",
			"content": []any{
				map[string]any{"type": "text", "text": "The cache misses because Get never moves the entry to the front, so hot keys are evicted first. I'll fix Get to refresh the entry's position and count misses under the lock."},
				map[string]any{"type": "tool-call", "id": "call_7f3a9c", "name": "edit_file", "arguments": string(args)},
			},
			"source": map[string]any{"kind": "model", "provider": "deepseek", "model": "deepseek-chat"},
		},
		"stream": []any{},
		"usage":  map[string]any{"input": 18234, "output": 412, "cacheRead": 16384},
	})
	return data
}()

func benchAppendOp() *SurfaceOp { return &SurfaceOp{} }

// BenchmarkJSONValid1KiB is the yardstick: encoding/json.Valid on the data
// bytes of BenchmarkAppend1KiB.
func BenchmarkJSONValid1KiB(b *testing.B) {
	b.SetBytes(int64(len(assistant1KiB)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(assistant1KiB) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkAppend1KiB times the whole append of a ~1 KiB assistant message
// with one tool call: validate, canonicalize, fold, commit. The same message
// appended again and again breaks the loop rules (its call is never
// answered), and a valid loop would time four more appends per op, so the
// session is lenient; BenchmarkAppendStepCycle1KiB is its strict twin.
func BenchmarkAppend1KiB(b *testing.B) {
	ctx := context.Background()
	in := AppendInput{Type: TypeAssistantMessage, Data: assistant1KiB, SurfaceOp: benchAppendOp()}
	b.SetBytes(int64(len(assistant1KiB)))
	b.ReportAllocs()
	s := mustNew(b, bareMessages)
	n := 0
	for b.Loop() {
		if n == 50_000 { // bound the fixture's memory
			b.StopTimer()
			s, n = mustNew(b, bareMessages), 0
			b.StartTimer()
		}
		if _, err := s.Append(ctx, in); err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkAppendStepCycle1KiB times one step of a strict session's loop,
// the loop rules checked at every append: step/start, the ~1 KiB assistant
// message of BenchmarkAppend1KiB (one tool call), tool/call, tool/result,
// step/end. The turn is opened once, outside the timer.
func BenchmarkAppendStepCycle1KiB(b *testing.B) {
	ctx := context.Background()
	var msg map[string]any
	if err := json.Unmarshal(assistant1KiB, &msg); err != nil {
		b.Fatal(err)
	}
	turn := int64(msg["turn"].(float64))
	cycle := func(step int64) []AppendInput {
		msg["step"] = step
		assistant, _ := json.Marshal(msg)
		return []AppendInput{
			evStepStart(turn, step),
			{Type: TypeAssistantMessage, Data: assistant, SurfaceOp: benchAppendOp()},
			evToolCall(turn, step, "call_7f3a9c"),
			lpResult(turn, step, "call_7f3a9c"),
			evStepEnd(turn, step),
		}
	}
	const cycles = 10_000 // steps per turn before the fixture is rebuilt, which bounds its memory
	steps := make([][]AppendInput, cycles)
	for i := range steps {
		steps[i] = cycle(int64(i + 1))
	}
	fresh := func() *Session {
		s := mustNew(b)
		if _, err := s.Append(ctx, evTurnStart(turn)); err != nil {
			b.Fatal(err)
		}
		return s
	}
	b.SetBytes(int64(len(assistant1KiB)))
	b.ReportAllocs()
	s, n := fresh(), 0
	for b.Loop() {
		if n == cycles {
			b.StopTimer()
			s, n = fresh(), 0
			b.StartTimer()
		}
		for _, in := range steps[n] {
			if _, err := s.Append(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
}

// mustNew returns an empty session with a fixed clock, mods applied to its
// options.
func mustNew(tb testing.TB, mods ...func(*Options)) *Session {
	o := Options{Clock: ClockFunc(func() int64 { return 1_700_000_000_000 })}
	for _, m := range mods {
		m(&o)
	}
	s, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// mustNewInTurn is mustNew with turn 1 open, for the user messages of
// fillNodes.
func mustNewInTurn(tb testing.TB) *Session {
	s := mustNew(tb)
	if _, err := s.Append(context.Background(), evTurnStart(1)); err != nil {
		tb.Fatal(err)
	}
	return s
}

var nodeData = []byte(`{"id":"n","role":"user","content":[{"type":"text","text":"a short note"}],"source":{"kind":"user"}}`)

// fillNodes appends n small user messages; s has a turn open.
func fillNodes(tb testing.TB, s *Session, n int) {
	ctx := context.Background()
	in := AppendInput{Type: TypeUserMessage, Data: nodeData, SurfaceOp: benchAppendOp()}
	for range n {
		if _, err := s.Append(ctx, in); err != nil {
			tb.Fatal(err)
		}
	}
}

// replaceFixture keeps one surface fixture, built once per benchmark
// function and size and reused across its runs; it is rebuilt (outside the
// timer) only when the log has grown past four times the surface size, which
// bounds memory under -count.
var replaceFixture struct {
	size int
	s    *Session
}

func replaceSession(b *testing.B, size int) *Session {
	f := &replaceFixture
	if f.s == nil || f.size != size || int(f.s.Len()) > 4*size {
		f.s, f.size = nil, size
		s := mustNewInTurn(b)
		fillNodes(b, s, size)
		f.s = s
	}
	return f.s
}

// pickSpans chooses k disjoint spans of 10 consecutive current nodes at
// pseudo-random positions. Disjoint spans stay valid while the others are
// replaced.
func pickSpans(s *Session, rng *rand.Rand, k int) [][]sdk.Seq {
	used := make(map[sdk.Seq]bool)
	spans := make([][]sdk.Seq, 0, k)
	n := int64(s.Len())
	for len(spans) < k {
		start := sdk.Seq(rng.Int64N(n))
		if !s.surf.isNode(start) {
			continue
		}
		span := make([]sdk.Seq, 0, 10)
		ok := true
		for cur := int64(start); len(span) < 10; cur = s.surf.at(sdk.Seq(cur)).next {
			if cur < 0 || used[sdk.Seq(cur)] {
				ok = false
				break
			}
			span = append(span, sdk.Seq(cur))
		}
		if !ok {
			continue
		}
		for _, x := range span {
			used[x] = true
		}
		spans = append(spans, span)
	}
	return spans
}

func benchmarkReplace10(b *testing.B, size int) {
	ctx := context.Background()
	s := replaceSession(b, size)
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	// Refill often enough that the surface stays within ±10% of size: each
	// op removes 9 nodes.
	batch := min(100, size/10/9)
	summary := []byte(`{"id":"sum","role":"user","content":[{"type":"text","text":"summary of ten notes"}],"source":{"kind":"user"}}`)
	var spans [][]sdk.Seq
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(spans) == 0 {
			b.StopTimer()
			if int(s.Len()) > 4*size {
				s = replaceSession(b, size)
			}
			if missing := size - s.surf.count; missing > 0 {
				fillNodes(b, s, missing)
			}
			spans = pickSpans(s, rng, batch)
			b.StartTimer()
		}
		span := spans[len(spans)-1]
		spans = spans[:len(spans)-1]
		_, err := s.Append(ctx, AppendInput{
			Type: TypeUserMessage, Data: summary,
			SurfaceOp:       &SurfaceOp{Replace: true, StartSeq: span[0], EndSeq: span[9]},
			SourceEventSeqs: span,
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if c := s.surf.count; c < size*9/10 || c > size*11/10 {
		b.Fatalf("surface drifted to %d nodes (size %d)", c, size)
	}
}

// BenchmarkReplace10Of1M replaces a fresh 10-node span at a pseudo-random
// position of a 1,000,000-node surface with one node.
func BenchmarkReplace10Of1M(b *testing.B) { benchmarkReplace10(b, 1_000_000) }

// BenchmarkReplace10Of1K is the same on a 1,000-node surface.
func BenchmarkReplace10Of1K(b *testing.B) { benchmarkReplace10(b, 1_000) }

var messagesFixture = sync.OnceValues(func() (*Session, error) {
	s, err := New(Options{Clock: ClockFunc(func() int64 { return 1 })})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, evTurnStart(1)); err != nil {
		return nil, err
	}
	in := AppendInput{Type: TypeUserMessage, Data: nodeData, SurfaceOp: benchAppendOp()}
	for range 1_000_000 {
		if _, err := s.Append(ctx, in); err != nil {
			return nil, err
		}
	}
	return s, nil
})

// BenchmarkMessagesNoChange1M calls Messages() with nothing appended since
// the last call on a 1,000,000-message session.
func BenchmarkMessagesNoChange1M(b *testing.B) {
	s, err := messagesFixture()
	if err != nil {
		b.Fatal(err)
	}
	first, err := s.Messages()
	if err != nil || first.Len() != 1_000_000 {
		b.Fatalf("fixture: %d messages, %v", first.Len(), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, _ := s.Messages()
		if m.Len() != 1_000_000 {
			b.Fatal("changed")
		}
	}
}

var restoreCorpus = sync.OnceValue(func() [][]byte {
	out := make([][]byte, 100_000)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"seq":%d,"time":1700000000000,"type":"assistant/message","data":%s,"surfaceOp":"append"}`, i, assistant1KiB))
	}
	return out
})

// BenchmarkRestore100K runs the restore pipeline over 100,000 canonical
// envelopes of ~1 KiB assistant messages.
func BenchmarkRestore100K(b *testing.B) {
	envs := restoreCorpus()
	total := 0
	for _, e := range envs {
		total += len(e)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		s, err := Restore(context.Background(), Options{}, RestoreOptions{}, envs)
		if err != nil {
			b.Fatal(err)
		}
		if s.Len() != 100_000 {
			b.Fatal("short")
		}
	}
}

// BenchmarkAppendOperation compares the append of a small turn (turn/start,
// user/message, turn/end: one atomic unit) with an operation id against
// the same turn as a group without one, in alternating sub-benchmarks of
// one run; "memory-per-id" reports the heap bytes per held id
// (bytes/id), from the heap delta of a session holding 100,000
// single-event operations against one holding the same events without ids.
func BenchmarkAppendOperation(b *testing.B) {
	ctx := context.Background()
	turn := func(n int64) []AppendInput {
		return []AppendInput{
			{Type: TypeTurnStart, Data: []byte(fmt.Sprintf(`{"turn":%d}`, n))},
			{Type: TypeUserMessage, Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}}`), SurfaceOp: benchAppendOp()},
			{Type: TypeTurnEnd, Data: []byte(fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, n))},
		}
	}
	for _, withID := range []bool{false, true, false, true} {
		name := "group"
		if withID {
			name = "operation-id"
		}
		b.Run(name, func(b *testing.B) {
			s, err := New(Options{Header: sdk.Header{ID: "bench"}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := int64(0)
			for b.Loop() {
				n++
				if withID {
					_, _, err = s.AppendOperation(ctx, fmt.Sprintf("turn-%d", n), -1, turn(n))
				} else {
					_, err = s.AppendGroup(ctx, turn(n))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("memory-per-id", func(b *testing.B) {
		const ids = 100_000
		note := AppendInput{Type: "x-bench/note", Data: []byte(`{}`), Ignorable: true}
		heap := func(withID bool) (uint64, *Session) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			s, err := New(Options{Header: sdk.Header{ID: "bench"}})
			if err != nil {
				b.Fatal(err)
			}
			for i := range ids {
				if withID {
					_, _, err = s.AppendOperation(ctx, "operation-"+strconv.Itoa(i), -1, []AppendInput{note})
				} else {
					_, err = s.Append(ctx, note)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			return after.HeapAlloc - before.HeapAlloc, s
		}
		for b.Loop() {
			plain, s1 := heap(false)
			held, s2 := heap(true)
			runtime.KeepAlive(s1)
			runtime.KeepAlive(s2)
			b.ReportMetric(float64(int64(held)-int64(plain))/ids, "bytes/id")
		}
	})
}
