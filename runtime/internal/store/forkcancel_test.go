package store

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// remote is a copy-prefix backend that answers as a plugin across a
// connection does: a call runs to its end whatever the caller's context
// does, and when that context ended meanwhile, the caller gets the
// context's error instead of the answer (the reply is lost). The caller's
// context is cancelled as the call named cancelAt starts.
type remote struct {
	*copier
	cancelAt string
	cancel   context.CancelFunc
}

func (r *remote) call(ctx context.Context, name string, f func(context.Context) error) error {
	if name == r.cancelAt {
		r.cancel()
	}
	if err := f(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil { // as pluginrpc reports a call its caller cancelled
		return &sdk.Error{Code: sdk.CodePluginUnavailable, Op: "remote", Detail: name + " failed with gRPC Canceled", Err: err}
	}
	return nil
}

func (r *remote) Create(ctx context.Context, h sdk.Header) (o sdk.Opened, err error) {
	err = r.call(ctx, "Create", func(ctx context.Context) (err error) { o, err = r.copier.Create(ctx, h); return err })
	return o, err
}

func (r *remote) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (o sdk.Opened, err error) {
	err = r.call(ctx, "CopyPrefix", func(ctx context.Context) (err error) {
		o, err = r.copier.CopyPrefix(ctx, source, boundary, child)
		return err
	})
	return o, err
}

// A fork whose caller's context ends at any point — before it, while the
// backend copies the prefix, while it creates the child after a refused
// copy — leaves nothing or the whole child (the prefix and its marker),
// never the prefix alone (docs/architecture.md, "Fork and salvage"); a
// retry then forks, or finds the whole child.
func TestForkCancelledLeavesNothingOrEverything(t *testing.T) {
	for _, tc := range []struct {
		name, cancelAt string
		refuse         sdk.Code
	}{
		{"before", "", ""},
		{"during-copy", "CopyPrefix", ""},
		{"during-create", "Create", sdk.CodeSessionNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			prim := &remote{copier: &copier{Persistence: mem(), refuse: tc.refuse}, cancelAt: tc.cancelAt, cancel: cancel}
			st := newTestStore(t, nil, Backend{Name: "prim", Persistence: prim})
			src, err := st.Create(bg, CreateOptions{ID: "src"})
			if err != nil {
				t.Fatal(err)
			}
			mustAppend(t, src, todo("a"), todo("b"), todo("c"))
			if _, err := st.Flush(bg, src); err != nil {
				t.Fatal(err)
			}
			if tc.cancelAt == "" {
				cancel()
			}
			at := sdk.Seq(1)
			_, forkErr := st.Fork(ctx, ForkRequest{SourceID: "src", Boundary: &at, ChildID: "child"})
			child, live := st.Get("child")
			if forkErr != nil {
				if live {
					t.Fatalf("Fork = %v, yet the child is live", forkErr)
				}
				if _, err := prim.Persistence.Open(bg, "child", sdk.AccessRead); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
					t.Fatalf("Fork = %v, yet the backend opens the child: %v; want SESSION_NOT_FOUND", forkErr, err)
				}
				if child, err = st.Fork(bg, ForkRequest{SourceID: "src", Boundary: &at, ChildID: "child"}); err != nil {
					t.Fatalf("the retry of a fork that created nothing: %v", err)
				}
			} else {
				if !live {
					t.Fatal("Fork succeeded, yet the child is not live")
				}
				if _, err := st.Fork(bg, ForkRequest{SourceID: "src", Boundary: &at, ChildID: "child"}); sdk.CodeOf(err) != sdk.CodeSessionAlreadyExists {
					t.Fatalf("the retry of a fork that created the child: %v; want SESSION_ALREADY_EXISTS", err)
				}
			}
			if _, err := st.Flush(bg, child); err != nil {
				t.Fatal(err)
			}
			got := stored(t, prim.Persistence, "child")
			if want := int(at) + 2; len(got) != want { // the prefix [0, at] and the marker
				t.Fatalf("the child stores %d events; want %d (the prefix and its marker)", len(got), want)
			}
			if n := len(prim.boundaries()); tc.refuse == "" && n == 0 {
				t.Fatal("the fork copied no prefix; the test cuts nothing")
			}
		})
	}
}
