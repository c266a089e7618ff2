package pluginrpc

import (
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// A program serves the plugins it registered, under the version it asks
// for, and no other; registering one name twice is a bug that panics.
func TestBundleServesWhatTheProgramRegistered(t *testing.T) {
	Bundle("bundle-test", func(v string) ServeConfig {
		return ServeConfig{Info: sdk.Info{Name: "bundle-test", Version: v}}
	})
	if !slices.Contains(BundledNames(), "bundle-test") {
		t.Errorf("BundledNames %v lacks bundle-test", BundledNames())
	}
	if cfg, ok := Bundled("bundle-test", "v9"); !ok || cfg.Info.Version != "v9" {
		t.Errorf("Bundled(bundle-test) = %+v, %v", cfg.Info, ok)
	}
	if _, ok := Bundled("not-registered", "v9"); ok {
		t.Error("Bundled returned an unregistered plugin")
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Bundle of one name did not panic")
		}
	}()
	Bundle("bundle-test", func(string) ServeConfig { return ServeConfig{} })
}
