package main

import (
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// The logbook binary serves every plugin the config accepts as bundled
// (a name without a command), and no other.
func TestServesWhatTheConfigCallsBundled(t *testing.T) {
	var want []string
	for _, b := range config.BundledPlugins() {
		want = append(want, b.Name)
	}
	slices.Sort(want)
	if got := pluginrpc.BundledNames(); !slices.Equal(got, want) {
		t.Errorf("bundled plugins %v; the config's list is %v", got, want)
	}
	if _, ok := pluginrpc.Bundled("nope", "dev"); ok {
		t.Error("Bundled returned a plugin that is not bundled")
	}
	if cfg, ok := pluginrpc.Bundled("sqlite", "v1.2.3"); !ok || cfg.Info.Name != "sqlite" || cfg.Info.Version != "v1.2.3" {
		t.Errorf("Bundled(sqlite) = %+v, %v", cfg.Info, ok)
	}
}
