package store

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// bigTodo is a todo/write of about n bytes.
func bigTodo(n int) session.AppendInput {
	return raw(session.TypeTodoWrite, `{"todos":[{"content":"`+strings.Repeat("x", n)+`","status":"pending"}]}`)
}

// An atomic group (docs/compaction.md) is never split across backend requests: when
// the request limit falls inside it, the request ends before the group and
// the group goes whole in the next one. Each request also fits the plugin
// client's own limit, so the client sends it as one Append (one durable
// batch) without splitting it again.
func TestWriteBehindNeverSplitsAGroup(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	const maxEvent = 64 << 10
	rpcMax := maxEvent + 1<<20
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: rec}}, Clock: clock,
		MaxEventBytes: maxEvent, RPCMaxBytes: rpcMax, EagerBytes: 64 << 20, MaxPendingBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	ctx := context.Background()
	s, err := st.Create(ctx, CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	for range 25 {
		mustAppend(t, s, bigTodo(40_000))
	}
	group, err := s.AppendGroup(ctx, []session.AppendInput{bigTodo(40_000), bigTodo(40_000), bigTodo(40_000)})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, bigTodo(100))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	calls := rec.appends()
	if len(calls) < 2 {
		t.Fatalf("%d appends; the limit must have split the queue", len(calls))
	}
	first, last := group[0].Seq(), group[2].Seq()
	events := s.Events()
	for _, c := range calls {
		end := c.firstSeq + sdk.Seq(c.n) - 1
		if c.firstSeq > first && c.firstSeq <= last {
			t.Fatalf("a request starts at seq %d inside the group %d..%d (calls %+v)", c.firstSeq, first, last, calls)
		}
		size := 1 + protowire.SizeBytes(len("handle-0123456789")) + 1 + 10
		for seq := c.firstSeq; seq <= end; seq++ {
			size += 1 + protowire.SizeBytes(events.At(int(seq)).EnvelopeLen())
		}
		if size > rpcMax {
			t.Fatalf("request %d..%d encodes to %d bytes > RPCMaxBytes %d: the client would split it", c.firstSeq, end, size, rpcMax)
		}
	}
}

// The eager early write takes the whole queue, so a group that crosses
// EagerBytes is still written in one request.
func TestWriteBehindEagerWriteKeepsAGroupWhole(t *testing.T) {
	clock := newFakeClock()
	rec := newRecorder(mem(), clock)
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: rec}}, Clock: clock, EagerBytes: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	s, err := st.Create(context.Background(), CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendGroup(context.Background(), []session.AppendInput{bigTodo(3000), bigTodo(3000), bigTodo(3000)}); err != nil {
		t.Fatal(err)
	}
	c := rec.waitAppend(t)
	if c.firstSeq != 0 || c.n != 3 {
		t.Fatalf("eager append of %d events from %d; want the whole group (3 from 0)", c.n, c.firstSeq)
	}
}
