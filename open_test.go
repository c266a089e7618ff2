package logbook

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// withoutServePlugins runs f as in a program that never called
// ServePlugins (the test binary's TestMain does call it).
func withoutServePlugins(t *testing.T, f func()) {
	t.Helper()
	was := servesPlugins.Swap(false)
	defer servesPlugins.Store(was)
	f()
}

// A program that neither serves the bundled plugins nor names a logbook
// binary is told at once how to fix it, instead of waiting for a plugin
// handshake that its own main never answers.
func TestOpenWithoutAPluginProgramFailsAtOnce(t *testing.T) {
	withoutServePlugins(t, func() {
		start := time.Now()
		rt, err := Open(context.Background(), Options{DataDir: t.TempDir()})
		took := time.Since(start)
		if err == nil {
			rt.Close(context.Background())
			t.Fatal("Open without ServePlugins or PluginBinary succeeded")
		}
		if !errors.Is(err, sdk.CodePluginUnavailable) {
			t.Errorf("code %s, want PLUGIN_UNAVAILABLE: %v", sdk.CodeOf(err), err)
		}
		for _, want := range []string{"logbook.ServePlugins()", "Options.PluginBinary", "jsonl, compactor-summary, pruner"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		if took >= time.Second {
			t.Errorf("Open took %v to fail; want < 1s", took)
		}
	})
}

// A configuration that names a bundled plugin this program does not link
// (the test binary links no SQL backend) fails at once, naming the package
// that registers it, and writes nothing.
func TestOpenRefusesABundledPluginThisProgramDoesNotLink(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(`
data_dir = "data"
persistence "jsonl" {}
persistence "sqlite" {}
`), filepath.Join(dir, "logbook.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := Open(context.Background(), Options{Config: cfg})
	if err == nil {
		rt.Close(context.Background())
		t.Fatal("Open with an unlinked sqlite succeeded")
	}
	if !errors.Is(err, sdk.CodePluginUnavailable) {
		t.Errorf("code %s, want PLUGIN_UNAVAILABLE: %v", sdk.CodeOf(err), err)
	}
	for _, want := range []string{
		"bundled plugins sqlite, which this program does not link",
		`import _ "github.com/seed-e5e476df/logbook/plugins/sqlite/bundle"`,
		"Options.PluginBinary",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused Open wrote into %s: %d entries", dir, len(entries))
	}
}

// A configuration whose plugins all have their own command needs no
// program for bundled plugins.
func TestBundledNamesLeavesOutPluginsWithACommand(t *testing.T) {
	cfg, err := config.Parse([]byte(`
persistence "jsonl" {}
persistence "archive" {}
plugin "archive" { command = "/opt/archive" }
plugin "pruner" { command = "/opt/my-pruner" }
compaction {
  summarizer = "compactor-summary"
  pruner     = "pruner"
}
`), filepath.Join(t.TempDir(), "logbook.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(bundledNames(cfg), ","); got != "jsonl,compactor-summary" {
		t.Errorf("bundled plugins %s; want jsonl,compactor-summary", got)
	}
}

// Each way Options can be wrong has its own error naming the rule.
func TestOpenRefusesBadOptions(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default(config.Overrides{DataDir: dir})
	for _, c := range []struct {
		name string
		o    Options
		code sdk.Code
		want string
	}{
		{"both configs", Options{Config: cfg, ConfigFile: "x.hcl"}, sdk.CodeUsage, "not both"},
		{"DataDir with a Config", Options{Config: cfg, DataDir: dir}, sdk.CodeUsage, "carries its own DataDir"},
		{"nothing", Options{}, sdk.CodeUsage, "set Options.DataDir"},
		{"missing config file", Options{ConfigFile: filepath.Join(dir, "none.hcl")}, sdk.CodeConfigInvalid, "none.hcl"},
		{"missing plugin binary", Options{DataDir: dir, PluginBinary: filepath.Join(dir, "no-logbook")}, sdk.CodeConfigInvalid, "no-logbook"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rt, err := Open(context.Background(), c.o)
			if err == nil {
				rt.Close(context.Background())
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, c.code) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v; want %s naming %q", err, c.code, c.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused Open wrote %d entries into the data directory", len(entries))
	}
}

// A process started as a bundled plugin this build does not have exits
// with status 2 and says which plugins it has; nothing else of the program
// runs.
func TestServePluginsRefusesAnUnknownPlugin(t *testing.T) {
	cmd := exec.Command(os.Args[0], "plugin", "nope")
	cmd.Env = append(os.Environ(), sdk.MagicCookieKey+"="+sdk.MagicCookieValue)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want status 2; output %s", err, out)
	}
	if want := `logbook: USAGE: no bundled plugin "nope"; bundled: compactor-summary, jsonl, memory, pruner`; strings.TrimSpace(string(out)) != want {
		t.Errorf("output %q; want %q", out, want)
	}
}
