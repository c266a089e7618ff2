package host_test

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
)

// note is a valid input; bad one the session rejects (its data is no JSON).
var (
	note = events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{"n":1}`)}
	bad  = events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{`)}
)

// liveHost starts a host over the memory backend holding the live session
// "s" of n notes.
func liveHost(tb testing.TB, n int) *host.Host {
	tb.Helper()
	ctx := context.Background()
	h, _ := memoryHost(tb)
	o, err := h.Acquire(ctx, "s")
	if err != nil {
		tb.Fatal(err)
	}
	for range n {
		if _, err := o.Session.Append(ctx, note); err != nil {
			tb.Fatal(err)
		}
	}
	return h
}

// An append stream keeps one tally over its batches: a stream that fails
// after appending reports every event it appended and the first one's seq,
// and flushes them.
func TestAppenderTalliesTheStream(t *testing.T) {
	ctx := context.Background()
	h := liveHost(t, 2)
	ap, err := h.Appender(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	start := ap.Len()
	if _, err := ap.Append(ctx, nil, []events.Input{note, note}); err != nil {
		t.Fatal(err)
	}
	n, err := ap.Append(ctx, nil, []events.Input{note, bad})
	if n != 1 || err == nil {
		t.Fatalf("second batch: %d appended, %v", n, err)
	}
	res, err := ap.Finish(ctx, err, true)
	if err == nil || len(res.Events) != 3 || *res.FirstSeq != start || res.Flush == nil {
		t.Fatalf("%d events from %v, flush %v, %v; want 3 from %d, flushed, and the error", len(res.Events), res.FirstSeq, res.Flush, err, start)
	}
}

// Queued inputs fill a batch at 256 inputs, or earlier at 1 MiB of wire
// input; Commit appends them as one batch.
func TestQueueFillsABatch(t *testing.T) {
	ctx := context.Background()
	h := liveHost(t, 0)
	ap, err := h.Appender(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	start := ap.Len()
	for i := range 256 {
		if full := ap.Queue(note, 10); full != (i == 255) {
			t.Fatalf("input %d: full %v", i, full)
		}
	}
	if n, err := ap.Commit(ctx, nil); n != 256 || err != nil || ap.Queued() != 0 {
		t.Fatalf("commit: %d, %v, %d still queued", n, err, ap.Queued())
	}
	if ap.Queue(note, 1<<19) || !ap.Queue(note, 1<<19) {
		t.Fatal("two inputs of 512 KiB do not fill a batch")
	}
	if _, err := ap.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := ap.Finish(ctx, nil, false)
	if err != nil || len(res.Events) != 258 || *res.FirstSeq != start {
		t.Fatalf("result: %d events from %d, %v; want 258 from %d", len(res.Events), *res.FirstSeq, err, start)
	}
}
