package store

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// copier is a backend with the copy-prefix capability: it copies by
// reading the source and appending to a new session (what a real backend
// does inside its storage), or answers every copy with refuse, and counts
// the copies it is asked for.
type copier struct {
	sdk.Persistence
	refuse sdk.Code

	mu     sync.Mutex
	copies []sdk.Seq // the boundary of each CopyPrefix
}

func (c *copier) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	c.mu.Lock()
	c.copies = append(c.copies, boundary)
	c.mu.Unlock()
	if c.refuse != "" {
		return sdk.Opened{}, sdk.Errorf(c.refuse, "copier", "refused")
	}
	r, err := c.Open(ctx, source, sdk.AccessRead)
	if err != nil {
		return sdk.Opened{}, err
	}
	defer c.Close(ctx, r.Handle)
	var prefix [][]byte
	if err := c.Read(ctx, r.Handle, 0, int64(boundary)+1, func(evs [][]byte) error { prefix = append(prefix, evs...); return nil }); err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.Create(ctx, child)
	if err != nil {
		return sdk.Opened{}, err
	}
	d, err := c.Append(ctx, o.Handle, 0, prefix)
	if err != nil {
		return sdk.Opened{}, err
	}
	o.NextSeq, o.Revision = d.NextSeq, d.Revision
	return o, nil
}

func (c *copier) boundaries() []sdk.Seq {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.Seq(nil), c.copies...)
}

// A fork of a live source copies the prefix inside the backend that can
// (after draining the source's queue to it), and creates and appends on a
// backend whose copy is refused because it lacks the source; both store
// the child's events.
func TestForkCopiesThePrefixWhereItCanAndAppendsElsewhere(t *testing.T) {
	ctx := context.Background()
	prim, mirror := &copier{Persistence: mem()}, &copier{Persistence: mem(), refuse: sdk.CodeSessionNotFound}
	st := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim}, Backend{Name: "mirror", Persistence: mirror})
	src, err := st.Create(ctx, CreateOptions{ID: "src"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, src, raw("turn/start", `{"turn":1}`), todo("a"), todo("b"), todo("c"))
	at := sdk.Seq(2)
	child, err := st.Fork(ctx, ForkRequest{Source: src, Boundary: &at, ChildID: "child"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Flush(ctx, child); err != nil {
		t.Fatal(err)
	}
	if got := prim.boundaries(); len(got) != 1 || got[0] != at {
		t.Fatalf("the primary copied %v; want one copy up to %d", got, at)
	}
	if got := mirror.boundaries(); len(got) != 1 {
		t.Fatalf("the mirror was asked %v; want one copy, refused", got)
	}
	for name, p := range map[string]*copier{"prim": prim, "mirror": mirror} {
		got := stored(t, p, "child")
		if len(got) != int(child.Len()) {
			t.Fatalf("%s stores %d events of the child; want %d", name, len(got), child.Len())
		}
		for i, e := range child.Events().All() {
			if !bytes.Equal(got[i], e.Envelope()) {
				t.Fatalf("%s: stored child event %d = %s, want %s", name, i, got[i], e.Envelope())
			}
		}
	}
}

// A copy that fails for another reason than a missing source, prefix or
// capability fails the fork, and nothing is live.
func TestForkFailsWithACopyThatFails(t *testing.T) {
	ctx := context.Background()
	prim := &copier{Persistence: mem(), refuse: sdk.CodeIOError}
	st := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim})
	src, err := st.Create(ctx, CreateOptions{ID: "src"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, src, todo("a"))
	if _, err := st.Fork(ctx, ForkRequest{Source: src, ChildID: "child"}); sdk.CodeOf(err) != sdk.CodeIOError {
		t.Fatalf("Fork = %v; want the copy's IO_ERROR", err)
	}
	if _, live := st.Get("child"); live {
		t.Fatal("the child is live after a failed fork")
	}
}
