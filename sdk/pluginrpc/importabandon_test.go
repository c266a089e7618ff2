package pluginrpc_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// slowAbandon is a backend whose abandonment of a failed import takes a
// while, as a backend's cleanup of a partly written import may.
type slowAbandon struct {
	*memory.Backend
	abandoned atomic.Bool
}

func (b *slowAbandon) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	o, err := b.Backend.Import(ctx, h, events)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		b.abandoned.Store(true)
	}
	return o, err
}

// connectSlowAbandon serves a slowAbandon backend as a plugin and returns
// it with the client's Importer.
func connectSlowAbandon(t *testing.T) (*slowAbandon, sdk.Importer) {
	t.Helper()
	b := &slowAbandon{Backend: memory.New()}
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:        sdk.Info{Name: "store", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}, Capabilities: []string{sdk.CapabilityImport}},
		Persistence: b,
	})
	p, err := c.Persistence()
	if err != nil {
		t.Fatal(err)
	}
	imp, ok := persistencetest.Capability[sdk.Importer](p)
	if !ok {
		t.Fatal("the client offers no Importer")
	}
	return b, imp
}

// An import whose events func fails returns only once the plugin has
// abandoned it, so that a retry right after never finds it half made.
func TestFailedImportReturnsAfterThePluginAbandonedIt(t *testing.T) {
	b, imp := connectSlowAbandon(t)
	broken := errors.New("the export could not be read further")
	_, err := imp.Import(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "imp"}, func(yield func(batch [][]byte) error) error {
		if err := yield(persistencetest.Batch(0, 2)); err != nil {
			return err
		}
		return broken
	})
	if !errors.Is(err, broken) {
		t.Fatalf("Import = %v; want the events func's failure", err)
	}
	if !b.abandoned.Load() {
		t.Fatal("Import returned before the plugin abandoned the import")
	}
}

// An import whose context ends midway also returns only once the plugin has
// abandoned it: the stream outlives the context by a grace period, so the
// plugin's answer is awaited rather than cut off (a retry right after found
// the create still pending, SESSION_ALREADY_EXISTS, in a loaded CI run).
func TestCancelledImportReturnsAfterThePluginAbandonedIt(t *testing.T) {
	b, imp := connectSlowAbandon(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := imp.Import(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "imp"}, func(yield func(batch [][]byte) error) error {
		if err := yield(persistencetest.Batch(0, 2)); err != nil {
			return err
		}
		cancel()
		return yield(persistencetest.Batch(2, 2))
	})
	if err == nil {
		t.Fatal("an import whose context ended midway succeeded")
	}
	if !b.abandoned.Load() {
		t.Fatal("Import returned before the plugin abandoned the import")
	}
	if _, err := imp.Import(t.Context(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: "imp"}, func(yield func(batch [][]byte) error) error {
		return yield(persistencetest.Batch(0, 2))
	}); err != nil {
		t.Fatalf("a retry right after: %v", err)
	}
}
