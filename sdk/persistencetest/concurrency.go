package persistencetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// requireEnded checks the error of a call made with an ended context: an
// *sdk.Error that wraps the context's error or carries a retryable code
// (what a gRPC client reports for a cancelled call, docs/errors.md).
func requireEnded(t *testing.T, what string, err error) {
	t.Helper()
	var e *sdk.Error
	switch {
	case err == nil:
		t.Fatalf("%s with an ended context succeeded; want it to fail", what)
	case !errors.As(err, &e):
		t.Fatalf("%s with an ended context: got %T %v; want an *sdk.Error", what, err, err)
	case !errors.Is(err, context.Canceled) && !sdk.Retryable(err):
		t.Fatalf("%s with an ended context: got %v; want an error wrapping context.Canceled or with a retryable code", what, err)
	}
}

var contextRules = []rule{
	{name: "ended-context-fails-every-call-but-close-and-changes-nothing", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		w, _ := stored(t, p, "s1", Batch(0, 3))
		closeHandle(t, p, stored1(t, p, "free"))
		pending := create(t, p, "pending").Handle
		r := open(t, p, "s1", sdk.AccessRead).Handle
		before := snap(t, p, "s1")

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.Describe(ctx)
		requireEnded(t, "Describe", err)
		_, err = p.Create(ctx, header("new"))
		requireEnded(t, "Create", err)
		_, err = p.Open(ctx, "free", sdk.AccessWrite)
		requireEnded(t, "Open(write)", err)
		_, err = p.Open(ctx, "free", sdk.AccessRead)
		requireEnded(t, "Open(read)", err)
		_, err = p.Append(ctx, w, 3, Batch(3, 2))
		requireEnded(t, "Append", err)
		called := false
		err = p.Read(ctx, r, 0, -1, func([][]byte) error { called = true; return nil })
		requireEnded(t, "Read", err)
		if called {
			t.Fatal("Read with an ended context called fn")
		}
		_, err = p.Flush(ctx, pending)
		requireEnded(t, "Flush", err)
		_, err = p.Stat(ctx, "s1")
		requireEnded(t, "Stat", err)
		err = p.List(ctx, func(sdk.ListEntry) error { called = true; return nil })
		requireEnded(t, "List", err)
		if called {
			t.Fatal("List with an ended context called fn")
		}

		requireUnchanged(t, p, "s1", before)
		_, err = p.Stat(t.Context(), "pending")
		RequireCode(t, err, sdk.CodeSessionNotFound, "pending") // the Flush did not materialize it
		create(t, p, "new")                                     // the Create took nothing
		open(t, p, "free", sdk.AccessWrite)                     // the Open(write) took no claim
		appendOK(t, p, w, Batch(3, 2))                          // the Append consumed nothing
	}},
	{name: "context-ending-during-a-read-ends-it", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		h := create(t, p, "s1").Handle
		for first := 0; first < 10_000; first += 1_000 {
			appendOK(t, p, h, Batch(first, 1_000))
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		got := 0
		err := p.Read(ctx, h, 0, -1, func(events [][]byte) error {
			got += len(events)
			cancel()
			return nil
		})
		if err != nil || got != 10_000 { // nil only when one chunk held everything
			requireEnded(t, "Read whose context ended after its first chunk", err)
		}
		if n := len(ReadAll(t, p, h)); n != 10_000 {
			t.Fatalf("a later read with a live context got %d events; want 10000", n)
		}
	}},
}

var concurrencyRules = []rule{
	{name: "appenders-on-different-sessions-beside-readers", run: func(t *testing.T, s *suite) {
		const sessions, batches, per = 8, 25, 8
		p := s.backend(t)
		ctx := t.Context()
		want := Batch(0, batches*per)
		id := func(i int) string { return fmt.Sprintf("c%d", i) }

		done := make(chan struct{})
		var readers sync.WaitGroup
		for k := range 2 {
			readers.Go(func() {
				// Each read handle must show a growing prefix of want.
				handles := map[string]string{}
				seen := map[string]int{}
				for i := 0; ; i++ {
					select {
					case <-done:
						return
					default:
					}
					sid := id((i + k) % sessions)
					if err := p.List(ctx, func(sdk.ListEntry) error { return nil }); err != nil {
						t.Errorf("List beside appenders: %v", err)
						return
					}
					if _, err := p.Stat(ctx, sid); err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
						t.Errorf("Stat(%q) beside appenders: %v", sid, err)
						return
					}
					if handles[sid] == "" {
						o, err := p.Open(ctx, sid, sdk.AccessRead)
						if errors.Is(err, sdk.CodeSessionNotFound) {
							continue
						} else if err != nil {
							t.Errorf("Open(%q, read) beside appenders: %v", sid, err)
							return
						}
						handles[sid] = o.Handle
					}
					var got [][]byte
					err := p.Read(ctx, handles[sid], 0, -1, func(ev [][]byte) error { got = append(got, ev...); return nil })
					if err != nil {
						t.Errorf("Read(%q) beside appenders: %v", sid, err)
						return
					}
					if len(got) < seen[sid] || len(got) > len(want) {
						t.Errorf("Read(%q) returned %d events after %d (at most %d exist)", sid, len(got), seen[sid], len(want))
						return
					}
					for j := range got {
						if !bytes.Equal(got[j], want[j]) {
							t.Errorf("Read(%q) event %d = %s; want %s", sid, j, clip(got[j]), clip(want[j]))
							return
						}
					}
					seen[sid] = len(got)
				}
			})
		}
		var writers sync.WaitGroup
		for i := range sessions {
			writers.Go(func() {
				o, err := p.Create(ctx, header(id(i)))
				if err != nil {
					t.Errorf("Create(%q): %v", id(i), err)
					return
				}
				for b := range batches {
					first := b * per
					d, err := p.Append(ctx, o.Handle, sdk.Seq(first), want[first:first+per])
					if err != nil || d.NextSeq != sdk.Offset(first+per) {
						t.Errorf("Append(%q, firstSeq %d) = next seq %d, %v; want %d", id(i), first, d.NextSeq, err, first+per)
						return
					}
				}
				if err := p.Close(ctx, o.Handle); err != nil {
					t.Errorf("Close(%q): %v", id(i), err)
				}
			})
		}
		writers.Wait()
		close(done)
		readers.Wait()
		if t.Failed() {
			return
		}
		for i := range sessions {
			r := open(t, p, id(i), sdk.AccessRead)
			requireEvents(t, id(i), ReadAll(t, p, r.Handle), want)
		}
	}},
	{name: "racing-appends-on-one-handle-store-one-batch", run: func(t *testing.T, s *suite) {
		const racers = 8
		p := s.backend(t)
		h, events := stored(t, p, "s1", Batch(0, 5))
		batch := func(g int) [][]byte {
			out := make([][]byte, 3)
			for i := range out {
				out[i] = Envelope(5+i, "todo/write", fmt.Sprintf(`{"todos":[{"content":"racer %d","status":"pending"}]}`, g))
			}
			return out
		}
		errs := race(racers, func(g int) error {
			_, err := p.Append(t.Context(), h, 5, batch(g))
			return err
		})
		winner := -1
		for g, err := range errs {
			if err == nil {
				if winner >= 0 {
					t.Fatalf("racers %d and %d both appended at firstSeq 5", winner, g)
				}
				winner = g
				continue
			}
			RequireCode(t, err, sdk.CodeSeqConflict, 5, 8)
		}
		if winner < 0 {
			t.Fatal("no racer appended")
		}
		requireEvents(t, "after the race", ReadAll(t, p, h), append(events, batch(winner)...))
	}},
	{name: "racing-write-opens-grant-one-claim", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		closeHandle(t, p, stored1(t, p, "s1"))
		errs := race(16, func(int) error {
			_, err := p.Open(t.Context(), "s1", sdk.AccessWrite)
			return err
		})
		requireOneWinner(t, errs, sdk.CodeAlreadyOwned, "s1")
	}},
	{name: "racing-creates-of-one-id-grant-one", run: func(t *testing.T, s *suite) {
		p := s.backend(t)
		handles := make([]string, 16)
		errs := race(16, func(g int) error {
			o, err := p.Create(t.Context(), header("s1"))
			handles[g] = o.Handle
			return err
		})
		w := requireOneWinner(t, errs, sdk.CodeSessionAlreadyExists, "s1")
		appendOK(t, p, handles[w], Batch(0, 2))
	}},
}

// race runs fn(0 … n−1) on n goroutines released together and returns
// their errors by index.
func race(n int, fn func(g int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			<-start
			errs[g] = fn(g)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// requireOneWinner requires exactly one nil error and every other to carry
// code and name values; it returns the winner's index.
func requireOneWinner(t *testing.T, errs []error, code sdk.Code, values ...any) int {
	t.Helper()
	winner := -1
	for g, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("racers %d and %d both succeeded", winner, g)
			}
			winner = g
			continue
		}
		RequireCode(t, err, code, values...)
	}
	if winner < 0 {
		t.Fatal("no racer succeeded")
	}
	return winner
}
