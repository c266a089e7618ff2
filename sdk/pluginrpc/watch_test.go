package pluginrpc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// watchClient serves b over in-memory gRPC and returns the host's Watcher.
func watchClient(t *testing.T, b sdk.Persistence, caps ...string) sdk.Watcher {
	t.Helper()
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "store", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: caps},
		Persistence: b,
	})
	p, err := c.Persistence()
	if err != nil {
		t.Fatal(err)
	}
	w, ok := p.(sdk.Watcher)
	if !ok {
		t.Fatalf("the persistence client %T is no sdk.Watcher", p)
	}
	return w
}

// The lengths a backend reports cross the wire in order, the first once the
// log holds `from` events; fn's error ends the watch with that error, and a
// cancelled context with the context's.
func TestWatchRoundTrip(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	w := watchClient(t, b, sdk.CapabilityWatch)
	o, err := b.Create(ctx, testHeader("s"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, o.Handle, 0, [][]byte{event(0, 10)}); err != nil {
		t.Fatal(err)
	}

	wctx, cancel := context.WithCancel(ctx)
	lengths := make(chan sdk.Offset, 16)
	done := make(chan error, 1)
	go func() {
		done <- w.Watch(wctx, "s", 2, func(n sdk.Offset) error { lengths <- n; return nil })
	}()
	select {
	case n := <-lengths:
		t.Fatalf("reported length %d before the log held 2 events", n)
	case <-time.After(50 * time.Millisecond):
	}
	for seq := 1; seq < 4; seq++ {
		if _, err := b.Append(ctx, o.Handle, sdk.Seq(seq), [][]byte{event(seq, 10)}); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-lengths:
			if n != sdk.Offset(seq+1) {
				t.Fatalf("reported length %d; want %d", n, seq+1)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no length reported after the append of seq %d", seq)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled watch ended with %v", err)
	}

	stop := errors.New("enough")
	if err := w.Watch(ctx, "s", 0, func(sdk.Offset) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("a watch whose fn fails ended with %v; want its error", err)
	}
	wantCode(t, w.Watch(ctx, "nobody", 0, func(sdk.Offset) error { return nil }), sdk.CodeSessionNotFound)
}

// A plugin whose backend cannot watch answers CONFIG_INVALID naming the
// capability, so a caller that asks one that did not declare it is told
// why; declaring it without a Watcher is refused before serving.
func TestWatchUnimplementedIsConfigInvalid(t *testing.T) {
	w := watchClient(t, newFakeStore())
	err := w.Watch(context.Background(), "s", 0, func(sdk.Offset) error { return nil })
	wantCode(t, err, sdk.CodeConfigInvalid)

	bad := pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "store", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: []string{sdk.CapabilityWatch}},
		Persistence: newFakeStore(),
	}
	wantCode(t, bad.Validate(), sdk.CodeConfigInvalid)
}
