package pluginhost

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A write-behind batch larger than the gRPC limit reaches a real plugin
// subprocess split into several appends, never as ResourceExhausted.
func TestBatchLargerThanRPCLimitIsSplit(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Options{})
	p, err := h.Start(ctx, Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "mem", Persistence: p.Persistence()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{ID: "big"})
	if err != nil {
		t.Fatal(err)
	}
	openTurn(t, s)
	text := strings.Repeat("x", 1<<20)
	in := session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"user"}}`)}
	const n = 40 // 40 MiB > the 32 MiB default limit
	for range n {
		if _, err := s.Append(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.Flush(ctx, s)
	if err != nil || res.Backends[0].DurableSeq != n { // the turn/start and n messages
		t.Fatalf("flush of %d MiB: %+v %v", n, res, err)
	}
	pp := p.Persistence()
	o, err := pp.Open(ctx, "big", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	if err := pp.Read(ctx, o.Handle, 0, -1, func(c [][]byte) error {
		for _, e := range c {
			want, _ := s.Event(sdk.Seq(got))
			if string(e) != string(want.Envelope()) {
				t.Fatalf("event %d differs", got)
			}
			got++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != n+1 {
		t.Fatalf("read back %d events", got)
	}
}
