package store

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// flushRecorder is a backend that can carry a drain's Flush with its last
// Append (appendFlusher), as the plugin adapters do. It records every call
// by kind, and can fail the Flush of its next AppendFlush or run a hook
// inside it.
type flushRecorder struct {
	sdk.Persistence
	mu        sync.Mutex
	calls     []string // "append n", "appendflush n", "flush"
	flushErr  error    // returned as the flush outcome of the next AppendFlush
	duringOne func()   // run inside the next AppendFlush, before it appends
}

func (r *flushRecorder) note(c string) {
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

func (r *flushRecorder) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	r.note("append " + itoa(int64(len(evs))))
	return r.Persistence.Append(ctx, h, first, evs)
}

func (r *flushRecorder) Flush(ctx context.Context, h string) (sdk.Durable, error) {
	r.note("flush")
	return r.Persistence.Flush(ctx, h)
}

func (r *flushRecorder) AppendFlush(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (appended, flushed sdk.Durable, flushErr, err error) {
	r.note("appendflush " + itoa(int64(len(evs))))
	r.mu.Lock()
	during, ferr := r.duringOne, r.flushErr
	r.duringOne, r.flushErr = nil, nil
	r.mu.Unlock()
	if during != nil {
		during()
	}
	if appended, err = r.Persistence.Append(ctx, h, first, evs); err != nil {
		return sdk.Durable{}, sdk.Durable{}, nil, err
	}
	if ferr != nil {
		return appended, sdk.Durable{}, ferr, nil
	}
	flushed, flushErr = r.Persistence.Flush(ctx, h)
	return appended, flushed, flushErr, nil
}

func (r *flushRecorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// A drain sends its barrier with its last batch when the backend can carry
// it: one exchange, no separate Flush, and the same result.
func TestDrainCarriesTheFlushWithItsLastBatch(t *testing.T) {
	rec := &flushRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, user("a"), user("b"), user("c"))
	res, err := st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"appendflush 3"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
	if res.Backends[0].DurableSeq != 2 {
		t.Fatalf("flush result %+v; want durable seq 2", res)
	}
	// Nothing queued: the next drain is a plain Flush.
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"appendflush 3", "flush"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
}

// Events committed while the drain's last batch is in flight are written
// too, and the barrier comes with the batch that empties the queue.
func TestDrainWritesEventsCommittedDuringItsLastBatch(t *testing.T) {
	rec := &flushRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, user("a"), user("b"))
	rec.duringOne = func() { mustAppend(t, s, user("c")) }
	res, err := st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"appendflush 2", "appendflush 1"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q", got, want)
	}
	if res.Backends[0].DurableSeq != 2 || len(stored(t, rec, "s")) != 3 {
		t.Fatalf("flush result %+v, stored %d; want all 3 events durable", res, len(stored(t, rec, "s")))
	}
}

// A Flush that fails after its Append succeeded does not fail the drain:
// the acknowledged batch is durable, and a flush reports what is durable.
// The batch is not written again.
func TestDrainAfterAFailedCarriedFlushReportsTheDurableBatch(t *testing.T) {
	rec := &flushRecorder{Persistence: mem()}
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, user("a"))
	rec.flushErr = sdk.Errorf(sdk.CodeIOError, "test", "fsync failed")
	res, err := st.Flush(context.Background(), s)
	if err != nil || res.Backends[0].DurableSeq != 0 {
		t.Fatalf("flush: %+v %v; want success with the acknowledged event durable", res, err)
	}
	if s.Fenced() != nil {
		t.Fatalf("a retryable flush failure fenced the session: %v", s.Fenced())
	}
	res, err = st.Flush(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rec.log(), []string{"appendflush 1", "flush"}; !slices.Equal(got, want) {
		t.Fatalf("backend calls %q; want %q (the batch was acknowledged)", got, want)
	}
	if res.Backends[0].DurableSeq != 0 || len(stored(t, rec, "s")) != 1 {
		t.Fatalf("flush result %+v", res)
	}
}

// A batch the write-behind window writes, with no drain waiting, is a plain
// Append.
func TestWindowWriteIsAPlainAppend(t *testing.T) {
	clock := newFakeClock()
	rec := &flushRecorder{Persistence: mem()}
	st := newTestStore(t, clock, Backend{Name: "mem", Persistence: rec})
	s, _ := st.Create(context.Background(), CreateOptions{ID: "s"})
	mustAppend(t, s, user("a"), user("b"))
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
