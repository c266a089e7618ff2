package compaction

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
)

// anaBigSession builds a session of n surface nodes: a header with tools, a
// system prompt, then rounds of user message, assistant tool call (with
// usage) and tool result, as an agent loop writes them.
func anaBigSession(b *testing.B, n int) *session.Session {
	b.Helper()
	s := anaSession(b)
	anaAppend(b, s, anaHeader("initial", anaTools1), anaSys("You are a careful engineer."))
	payload := strings.Repeat("output line of a tool\n", 8)
	for i := 1; i < n; i += 3 {
		c := fmt.Sprintf("c%d", i)
		anaAppend(b, s,
			anaUser(fmt.Sprintf("u%d", i), "please look at file number "+c),
			anaAsst(fmt.Sprintf("a%d", i), anaAsstOpts{usage: anaUsage(int64(40*i), 20, 0, 0)}, anaText("reading"), anaCall(c, "read", `{"path":"f`+c+`"}`)),
			anaResult(fmt.Sprintf("r%d", i), c, payload))
	}
	return s
}

// BenchmarkMeasureAfterAppend100K: Measure on a 100,000-node surface right
// after one new node was appended (the append is not timed). Target ≤ 50
// µs/op: the cost is the one new node, not the surface.
func BenchmarkMeasureAfterAppend100K(b *testing.B) {
	s := anaBigSession(b, 100_000)
	meter := NewMeter(s)
	if _, err := meter.Measure(); err != nil {
		b.Fatal(err)
	}
	ins := []session.AppendInput{anaUser("next", "one more question"), anaAsst("next-a", anaAsstOpts{usage: anaUsage(1, 1, 0, 0)}, anaText("and an answer"))}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		anaAppend(b, s, ins[i%2])
		b.StartTimer()
		if _, err := meter.Measure(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSelectRange100K: range selection on a 100,000-node surface, with
// a measurement that is a copy (so the surface check compares every seq)
// and a retain budget of a fifth of the total (the default 0.16 of a window
// whose 0.8 threshold was just reached). Target ≤ 5 ms/op.
func BenchmarkSelectRange100K(b *testing.B) {
	s := anaBigSession(b, 100_000)
	meter := NewMeter(s)
	m, err := meter.Measure()
	if err != nil {
		b.Fatal(err)
	}
	m.Nodes = append([]NodeTokens(nil), m.Nodes...)
	retain := m.TotalTokens / 5
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, ok, err := meter.SelectRange(m, retain); !ok || err != nil {
			b.Fatalf("ok %v err %v", ok, err)
		}
	}
	b.ReportMetric(float64(len(m.Nodes)), "nodes")
}
