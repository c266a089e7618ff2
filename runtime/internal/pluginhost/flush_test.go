package pluginhost

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// flushCounter counts the backend Flush calls that reach a plugin.
type flushCounter struct {
	sdk.Persistence
	flushes atomic.Int64
}

func (c *flushCounter) Flush(ctx context.Context, h string) (sdk.Durable, error) {
	c.flushes.Add(1)
	return c.Persistence.Flush(ctx, h)
}

// An acknowledged Append is durable, so a store's flush of a session in a
// real plugin subprocess asks the plugin for no Flush once the session is
// stored: one to materialize the empty created session, none after the
// appends. What the store acknowledged, the plugin holds.
func TestStoreFlushOverARealPluginCallsNoFlushAfterAnAcknowledgedAppend(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Options{})
	p, err := h.Start(ctx, Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	fc := &flushCounter{Persistence: p.Persistence()}
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "memory", Persistence: fc}}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(ctx)
	s, err := st.Create(ctx, store.CreateOptions{ID: "nf"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Flush(ctx, s); err != nil {
		t.Fatal(err)
	}
	if n := fc.flushes.Load(); n != 1 {
		t.Fatalf("%d backend flushes to materialize the created session; want 1", n)
	}
	openTurn(t, s)
	for range 3 {
		if _, err := s.Append(ctx, event1KiB); err != nil {
			t.Fatal(err)
		}
		res, err := st.Flush(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if want := sdk.Cursor(s.Len() - 1); res.Backends[0].DurableSeq != want {
			t.Fatalf("durable seq %d; want %d", res.Backends[0].DurableSeq, want)
		}
	}
	if n := fc.flushes.Load(); n != 1 {
		t.Fatalf("%d backend flushes; want only the one that materialized the session", n)
	}
	stat, err := p.Persistence().Stat(ctx, "nf")
	if err != nil || stat.EventCount != int64(s.Len()) {
		t.Fatalf("the plugin holds %+v (%v); want %d events", stat, err, s.Len())
	}
}

// The proxy implements no capability interface itself; each capability is
// reported by its accessor, by what the plugin declared.
func TestPersistenceCapabilitiesAreReportedByAccessor(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, Options{})
	p, err := h.Start(ctx, Spec{Name: "memory"})
	if err != nil {
		t.Fatal(err)
	}
	pp := p.Persistence()
	for name, ok := range map[string]bool{
		"sdk.Watcher":       is[sdk.Watcher](pp),
		"sdk.PrefixCopier":  is[sdk.PrefixCopier](pp),
		"sdk.Importer":      is[sdk.Importer](pp),
		"sdk.Checkpointer":  is[sdk.Checkpointer](pp),
		"sdk.FrameReader":   is[sdk.FrameReader](pp),
		"sdk.SalvageReader": is[sdk.SalvageReader](pp),
		"sdk.Deleter":       is[sdk.Deleter](pp),
	} {
		if ok {
			t.Errorf("the proxy is an %s; capabilities go through accessors", name)
		}
	}
	declared := map[string]bool{}
	for _, c := range p.Info().Capabilities {
		declared[c] = true
	}
	acc := pp.(interface {
		Watcher() (sdk.Watcher, bool)
		PrefixCopier() (sdk.PrefixCopier, bool)
		Importer() (sdk.Importer, bool)
		Checkpointer() (sdk.Checkpointer, bool)
		FrameReader() (sdk.FrameReader, bool)
		Deleter() (sdk.Deleter, bool)
	})
	for c, got := range map[string]bool{
		sdk.CapabilityWatch:      second(acc.Watcher()),
		sdk.CapabilityCopyPrefix: second(acc.PrefixCopier()),
		sdk.CapabilityImport:     second(acc.Importer()),
		sdk.CapabilityCheckpoint: second(acc.Checkpointer()),
		sdk.CapabilityReadFrames: second(acc.FrameReader()),
		sdk.CapabilityDelete:     second(acc.Deleter()),
	} {
		if got != declared[c] {
			t.Errorf("accessor of %q reports %v; the plugin declares it: %v", c, got, declared[c])
		}
	}
}

func is[T any](v any) bool { _, ok := v.(T); return ok }

func second[T any](_ T, ok bool) bool { return ok }
