package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// faultStore is a store on the fake clock over one JSONL backend whose
// files live on a faultfs.FS, with session "s" created, materialized and
// holding five queued events. The faultfs.FS is returned to inject faults
// into the batch's write; reading it back goes through a second backend.
func faultStore(t *testing.T) (*Store, *session.Session, *faultfs.FS, *fakeClock) {
	t.Helper()
	ffs := faultfs.New()
	b, err := jsonl.New(jsonl.Config{Root: "/data"}, jsonl.WithFS(ffs))
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock()
	st := newTestStore(t, clock, Backend{Name: "jsonl", Persistence: b})
	s, err := st.Create(context.Background(), CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Flush(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("a"), todo("b"), todo("c"), todo("d"), todo("e"))
	return st, s, ffs, clock
}

// storedOnDisk counts the events of "s" that a fresh backend over ffs
// finds: what is durable.
func storedOnDisk(t *testing.T, ffs *faultfs.FS) int {
	t.Helper()
	b, err := jsonl.New(jsonl.Config{Root: "/data"}, jsonl.WithFS(ffs))
	if err != nil {
		t.Fatal(err)
	}
	return len(stored(t, b, "s"))
}

// checkReport asserts that a flush reported what is durable: success with a
// watermark covering every event, or a failure whose watermark is exactly
// what is stored.
func checkReport(t *testing.T, what string, res FlushResult, err error, s *session.Session, ffs *faultfs.FS) {
	t.Helper()
	n := storedOnDisk(t, ffs)
	if err == nil && n != int(s.Len()) {
		t.Fatalf("%s succeeded but %d of %d events are stored", what, n, s.Len())
	}
	if err != nil && n == int(s.Len()) {
		t.Fatalf("%s reports %v but all %d events are stored", what, err, n)
	}
	if len(res.Backends) == 1 && int(res.Backends[0].DurableSeq)+1 != n {
		t.Fatalf("%s reports durable seq %d but %d events are stored", what, res.Backends[0].DurableSeq, n)
	}
}

// An fdatasync that fails rolls the batch back: the flush reports the
// failure and nothing of the batch is stored; the next flush stores it
// once.
func TestFlushReportsARolledBackBatch(t *testing.T) {
	st, s, ffs, _ := faultStore(t)
	ffs.Inject(faultfs.Fault{Op: faultfs.OpSync, Name: "events.*", Times: 1})
	res, err := st.Flush(context.Background(), s)
	if !errors.Is(err, sdk.CodeFlushFailed) || !errors.Is(err, sdk.CodeIOError) {
		t.Fatalf("flush: %v; want FLUSH_FAILED wrapping IO_ERROR", err)
	}
	checkReport(t, "the failed flush", res, err, s, ffs)
	res, err = st.Flush(context.Background(), s)
	checkReport(t, "the second flush", res, err, s, ffs)
	if err != nil {
		t.Fatal(err)
	}
}

// Regression: a batch that became durable although the backend's call
// failed after its fdatasync (here its fstat) was reported as a failed
// flush — and the next attempt, resending it, fenced the session with
// SEQ_CONFLICT. The drain settles such a failure by re-opening and reading
// back before it answers.
func TestFlushReportsABatchStoredDespiteAFailedCall(t *testing.T) {
	st, s, ffs, _ := faultStore(t)
	ffs.Inject(faultfs.Fault{Op: faultfs.OpStat, Name: "events.*", Times: 1})
	res, err := st.Flush(context.Background(), s)
	checkReport(t, "the flush", res, err, s, ffs)
	if err != nil {
		t.Fatalf("flush: %v; the batch is durable", err)
	}
	mustAppend(t, s, todo("f"))
	res, err = st.Flush(context.Background(), s)
	checkReport(t, "the next flush", res, err, s, ffs)
	if err != nil || s.Fenced() != nil {
		t.Fatalf("next flush: %v, fenced %v", err, s.Fenced())
	}
}

// Regression: a store Close whose drain failed left the session live and
// its retry armed, so the events could be stored after Close had reported
// that they were not (the CLI's append exited 1 saying nothing was stored
// while all its events were). Close is final: nothing is written after it.
func TestCloseIsFinal(t *testing.T) {
	st, s, ffs, clock := faultStore(t)
	ffs.Inject(faultfs.Fault{Op: faultfs.OpWrite, Name: "events.*", Times: 1})
	err := st.Close(context.Background())
	if !errors.Is(err, sdk.CodeFlushFailed) {
		t.Fatalf("close: %v; want FLUSH_FAILED", err)
	}
	if n := clock.pending(); n != 0 {
		t.Fatalf("%d retries still armed after Close reported its failure", n)
	}
	clock.Advance(time.Minute)
	if n := storedOnDisk(t, ffs); n != 0 {
		t.Fatalf("Close reported failure, yet %d events are stored", n)
	}
	if _, err := st.Flush(context.Background(), s); !errors.Is(err, sdk.CodeSessionNotLive) {
		t.Fatalf("flush after close: %v; want SESSION_NOT_LIVE", err)
	}
}
