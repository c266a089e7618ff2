package session

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func offsetPtr(n sdk.Offset) *sdk.Offset { return &n }

// A batch with the expected length appends its events with consecutive
// seqs; with another length it is SEQ_CONFLICT naming both lengths in Meta
// and changes nothing.
func TestAppendBatchExpectedLen(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestSession(t)
	b, err := s.AppendBatch(ctx, []AppendInput{evTurnStart(1), evU("u1", "a")}, BatchOptions{ExpectedLen: offsetPtr(0)})
	if err != nil {
		t.Fatal(err)
	}
	if b.Start != 0 || len(b.Events) != 2 || b.Events[0].Seq() != 0 || b.Events[1].Seq() != 1 {
		t.Fatalf("batch %+v", b)
	}
	for _, want := range []sdk.Offset{0, 1, 3} {
		before := stateOf(t, s)
		b, err := s.AppendBatch(ctx, []AppendInput{evU("u2", "c")}, BatchOptions{ExpectedLen: offsetPtr(want)})
		e := requireCode(t, err, sdk.CodeSeqConflict)
		if e.Meta["expected"] != strconv.FormatInt(int64(want), 10) || e.Meta["actual"] != "2" || e.SessionID != "s1" {
			t.Errorf("expected %d: error %v, meta %v", want, e, e.Meta)
		}
		if b.Start != 2 || len(b.Events) != 0 {
			t.Errorf("expected %d: batch %+v", want, b)
		}
		requireUnchanged(t, before, s)
	}
	if b, err := s.AppendBatch(ctx, nil, BatchOptions{ExpectedLen: offsetPtr(2)}); err != nil || b.Start != 2 {
		t.Fatalf("an empty batch at the right length: %+v, %v", b, err)
	}
	if b, err := s.AppendBatch(ctx, []AppendInput{evU("u2", "c")}, BatchOptions{}); err != nil || b.Start != 2 || b.Events[0].Seq() != 2 {
		t.Fatalf("a batch without expected length: %+v, %v", b, err)
	}
	requireReplayEqual(t, s)
}

// At the first rejected input the batch stops: the events before it stay
// committed and are returned, and the error names the input's index.
func TestAppendBatchStopsAtRejected(t *testing.T) {
	s, _ := newTestSession(t)
	b, err := s.AppendBatch(context.Background(), []AppendInput{evTurnStart(1), evRaw("no/such-type", `{}`), evU("u1", "b")}, BatchOptions{})
	e := requireCode(t, err, sdk.CodeUnknownEventType)
	if (e.Index == nil || *e.Index != 1) || (e.Seq == nil || *e.Seq != 1) {
		t.Errorf("error %v; want index 1, seq 1", e)
	}
	if b.Start != 0 || len(b.Events) != 1 || s.Len() != 1 {
		t.Fatalf("batch %+v, Len %d", b, s.Len())
	}
}

// Racing batches that expect the same length: exactly one is appended, as a
// contiguous run, and every other gets SEQ_CONFLICT with the winner's end as
// the actual length.
func TestAppendBatchExpectedLenIsAtomic(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestSession(t)
	const racers = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		won     []Batch
		actuals []string
	)
	for i := range racers {
		wg.Go(func() {
			id := strconv.Itoa(i)
			b, err := s.AppendBatch(ctx, []AppendInput{evTurnStart(1), evU("y"+id, id), evU("z"+id, id)}, BatchOptions{ExpectedLen: offsetPtr(0)})
			mu.Lock()
			defer mu.Unlock()
			var e *sdk.Error
			switch {
			case err == nil:
				won = append(won, b)
			case errors.As(err, &e) && e.Code == sdk.CodeSeqConflict:
				actuals = append(actuals, e.Meta["actual"])
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(won) != 1 || len(actuals) != racers-1 || s.Len() != 3 {
		t.Fatalf("%d winners, %d conflicts, Len %d", len(won), len(actuals), s.Len())
	}
	for _, a := range actuals {
		if a != "3" {
			t.Fatalf("a loser saw actual length %s, want 3", a)
		}
	}
}
