package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// gatedAppend wraps a backend whose Append, once armed, reports that it
// was entered and waits for the gate before it appends.
type gatedAppend struct {
	sdk.Persistence
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedAppend) arm() {
	g.mu.Lock()
	g.armed, g.entered, g.gate = true, make(chan struct{}), make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedAppend) Append(ctx context.Context, h string, first sdk.Seq, evs [][]byte) (sdk.Durable, error) {
	g.mu.Lock()
	armed, entered, gate := g.armed, g.entered, g.gate
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(entered)
		<-gate
	}
	return g.Persistence.Append(ctx, h, first, evs)
}

// An append made while Release's final drain is under way is refused with
// SESSION_CLOSED and appends nothing: the release closed the session
// before it drained. (Before, it was acknowledged, queued behind the
// drain, and dropped when the queues stopped.)
func TestReleaseClosesAppendsBeforeItsFinalFlush(t *testing.T) {
	p := mem()
	g := &gatedAppend{Persistence: p}
	st, err := New(Options{Backends: []Backend{{Name: "mem", Persistence: g}}, WriteWindow: time.Minute, RetryMaxBackoff: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	ctx := context.Background()
	s, err := st.Create(ctx, CreateOptions{ID: "racy"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("before"))
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, todo("queued")) // the release's drain writes it

	g.arm()
	released := make(chan error, 1)
	go func() { released <- st.Release(ctx, s) }()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("Release never reached the backend's append")
	}
	_, aerr := s.Append(ctx, todo("during"))
	close(g.gate)
	if err := <-released; err != nil {
		t.Fatalf("release: %v", err)
	}
	if aerr == nil {
		t.Fatalf("an append during the release's final drain was acknowledged; stored %d of %d events", len(stored(t, p, "racy")), s.Len())
	}
	if sdk.CodeOf(aerr) != sdk.CodeSessionClosed {
		t.Fatalf("append during release: %v, want SESSION_CLOSED", aerr)
	}
	if n := len(stored(t, p, "racy")); n != int(s.Len()) || n != 2 {
		t.Fatalf("stored %d events, the session has %d, want 2", n, s.Len())
	}
}

// Appends racing Release, many times over: every acknowledged event is
// stored, exactly once and in place, and every refused one is
// SESSION_CLOSED.
func TestReleaseNeverDropsAcknowledgedAppends(t *testing.T) {
	const rounds, appenders = 200, 4
	p := mem()
	st := newTestStore(t, nil, Backend{Name: "mem", Persistence: p})
	ctx := context.Background()
	for round := range rounds {
		s, err := st.Create(ctx, CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			acked []sdk.Seq
			first = make(chan struct{})
			once  sync.Once
		)
		for range appenders {
			wg.Go(func() {
				for {
					e, err := s.Append(ctx, todo("x"))
					if err != nil {
						if sdk.CodeOf(err) != sdk.CodeSessionClosed {
							t.Errorf("round %d: append: %v, want SESSION_CLOSED", round, err)
						}
						once.Do(func() { close(first) })
						return
					}
					mu.Lock()
					acked = append(acked, e.Seq())
					mu.Unlock()
					once.Do(func() { close(first) })
				}
			})
		}
		<-first
		if err := st.Release(ctx, s); err != nil {
			t.Fatalf("round %d: release: %v", round, err)
		}
		wg.Wait()
		got := stored(t, p, s.ID())
		if len(got) != int(s.Len()) || len(acked) != int(s.Len()) {
			t.Fatalf("round %d: %d acknowledged, the session holds %d, the backend stored %d", round, len(acked), s.Len(), len(got))
		}
		for i, b := range got {
			e, ok := s.Event(sdk.Seq(i))
			if !ok || string(e.Envelope()) != string(b) {
				t.Fatalf("round %d: stored event %d is not the session's", round, i)
			}
		}
	}
}
