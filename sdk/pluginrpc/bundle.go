package pluginrpc

import (
	"fmt"
	"slices"
	"sync"
)

// bundles is the table of the plugins this program can serve as
// `<program> plugin <name>`: filled by Bundle from the init functions of
// the packages that register them, read by Bundled and BundledNames.
var bundles struct {
	sync.RWMutex
	serve map[string]func(version string) ServeConfig
}

// Bundle registers the plugin name, served as config(version), in this
// program's table of bundled plugins, which the logbook binary and a
// program that calls logbook.ServePlugins serve when the plugin host runs
// them as `<program> plugin <name>`. It is called from the init function
// of a registration package (logbook's are plugins/<name>/bundle), so a
// program links, and can serve, exactly the plugins it imports. Registering
// an empty name, a nil config or one name twice is a bug of the program
// and panics.
func Bundle(name string, config func(version string) ServeConfig) {
	bundles.Lock()
	defer bundles.Unlock()
	if name == "" || config == nil {
		panic("pluginrpc: Bundle needs a name and a config")
	}
	if _, dup := bundles.serve[name]; dup {
		panic(fmt.Sprintf("pluginrpc: Bundle called twice for %q", name))
	}
	if bundles.serve == nil {
		bundles.serve = map[string]func(string) ServeConfig{}
	}
	bundles.serve[name] = config
}

// Bundled returns the config of the bundled plugin name for version, and
// false when this program registered no plugin of that name.
func Bundled(name, version string) (ServeConfig, bool) {
	bundles.RLock()
	config, ok := bundles.serve[name]
	bundles.RUnlock()
	if !ok {
		return ServeConfig{}, false
	}
	return config(version), true
}

// BundledNames returns the names of the plugins this program registered
// with Bundle, sorted.
func BundledNames() []string {
	bundles.RLock()
	defer bundles.RUnlock()
	names := make([]string, 0, len(bundles.serve))
	for n := range bundles.serve {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
