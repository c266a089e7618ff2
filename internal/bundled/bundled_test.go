package bundled

import (
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
)

// The config accepts a bundled name without a command exactly when this
// table serves it.
func TestServesWhatTheConfigCallsBundled(t *testing.T) {
	var want []string
	for _, b := range config.BundledPlugins() {
		want = append(want, b.Name)
	}
	slices.Sort(want)
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("bundled plugins %v; the config's list is %v", got, want)
	}
	if Has("nope") || !Has("jsonl") {
		t.Error("Has disagrees with Names")
	}
	if Serve("nope", "dev") {
		t.Error("Serve reported serving a plugin that is not bundled")
	}
}
