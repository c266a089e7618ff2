package store

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// callRecorder is a backend that records every Append and Flush the store
// makes, and can run a hook inside its next Append.
type callRecorder struct {
	sdk.Persistence
	mu        sync.Mutex
	calls     []string // "append n", "flush"
	duringOne func()   // run inside the next Append, before it appends
}

func (r *callRecorder) note(c string) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *callRecorder) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	r.note("append " + itoa(int64(len(evs))))
	r.mu.Lock()
	during := r.duringOne
	r.duringOne = nil
	r.mu.Unlock()
	if during != nil {
		during()
	}
	return r.Persistence.Append(ctx, h, first, evs)
}

func (r *callRecorder) Flush(ctx context.Context, h string) (sdk.Durable, error) {
	r.note("flush")
	return r.Persistence.Flush(ctx, h)
}

func (r *callRecorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// An acknowledged Append is durable (sdk.Persistence.Append): a drain whose
// batches were all acknowledged asks the backend for no Flush, and its
// durable seq is the acknowledgement's. A drain with nothing queued on a
// stored session calls the backend not at all.
func TestDrainAfterAcknowledgedAppendsCallsNoBackendFlush(t *testing.T) {
	rec := &callRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"), todo("c"))
	res, err := st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"append 3"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
	if res.Backends[0].DurableSeq != 2 || len(stored(t, rec, "s")) != 3 {
		t.Fatalf("flush result %+v, stored %d; want all 3 events durable", res, len(stored(t, rec, "s")))
	}
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"append 3"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q after a drain of an empty queue; want %q", got, want)
	}
}

// A session opened from storage is stored already: neither the open, which
// appends its repair batch, nor its drains make a backend Flush.
func TestOpenAndDrainOfAStoredSessionCallNoBackendFlush(t *testing.T) {
	rec := &callRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"))
	if err := st.Release(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	before := len(rec.log())
	s, _, err := st.Open(context.Background(), "s")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("b"))
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got := rec.log()[before:]
	if slices.Contains(got, "flush") || len(got) == 0 || got[len(got)-1] != "append 1" {
		t.Fatalf("backend calls %q; want appends only, the last of the one event", got)
	}
}

// Flush stays where only it can do the work: a drain of a created session
// that holds no event yet materializes it with one backend Flush, and then
// the session is stored.
func TestDrainOfAnEmptyCreatedSessionMaterializesItOnce(t *testing.T) {
	rec := &callRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	for range 2 {
		if _, err := st.Flush(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rec.log(), []string{"flush"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
	if _, err := rec.Stat(context.Background(), "s"); err != nil {
		t.Fatalf("the flushed empty session is not stored: %v", err)
	}
}

// Events committed while the drain's last batch is in flight are written
// too before the drain returns, still without a backend Flush.
func TestDrainWritesEventsCommittedDuringItsLastBatch(t *testing.T) {
	rec := &callRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	rec.duringOne = func() { mustAppend(t, s, todo("c")) }
	res, err := st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"append 2", "append 1"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
	if res.Backends[0].DurableSeq != 2 || len(stored(t, rec, "s")) != 3 {
		t.Fatalf("flush result %+v, stored %d; want all 3 events durable", res, len(stored(t, rec, "s")))
	}
}

// A batch the write-behind window writes, with no drain waiting, is a plain
// Append.
func TestWindowWriteIsAPlainAppend(t *testing.T) {
	clock := newFakeClock()
	rec := &callRecorder{Persistence: mem()}
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, todo("a"), todo("b"))
	clock.waitArmed(t)
	clock.Advance(st.opts.WriteWindow)
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.log()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got, want := rec.log(), []string{"append 2"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
}
