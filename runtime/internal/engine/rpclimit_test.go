package engine

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// With max_event_bytes and rpc_max_bytes configured above their defaults,
// an event of nearly the configured size crosses to every plugin
// subprocess and back: the plugin process serves the host's RPC limit,
// not its own default, so it never refuses what the host accepted.
func TestConfiguredRPCLimitReachesThePlugins(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const maxEvent = sdk.DefaultRPCMaxBytes + 8<<20 // larger than any default limit
	cfg := config.Headless(config.Overrides{})
	cfg.MaxEventBytes = maxEvent
	cfg.RPCMaxBytes = int64(sdk.MinRPCMaxBytes(maxEvent))
	cfg.Persistence = nil
	for _, b := range parityBackends {
		if b.name != "jsonl-zstd" { // one JSONL suffices; zstd of 40 MiB is slow
			cfg.Persistence = append(cfg.Persistence, config.Persistence{Name: b.plugin, Config: b.config(dir)})
		}
	}
	e, err := Start(ctx, cfg, Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	s, err := e.Store.Create(ctx, store.CreateOptions{ID: "large"})
	if err != nil {
		t.Fatal(err)
	}
	data := `{"text":"` + strings.Repeat("x", maxEvent-200) + `"}`
	if _, err := s.Append(ctx, session.AppendInput{Type: "x-test/large", Data: []byte(data), Ignorable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Flush(ctx, s); err != nil {
		t.Fatalf("flush of a %d-byte event: %v", len(data), err)
	}
	want, _ := s.Event(0)
	for _, p := range cfg.Persistence {
		got := readStored(t, e.Plugins[p.Name].Persistence(), "large")
		if len(got) != 1 || !bytes.Equal(got[0], want.Envelope()) {
			t.Fatalf("%s: %d events stored; want the one appended", p.Name, len(got))
		}
	}
}
