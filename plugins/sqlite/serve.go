package sqlite

import (
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// ConfigSchema documents the plugin's config block; GetInfo returns it.
const ConfigSchema = `persistence "sqlite" {
  path          = "sessions.db"  # required: a database file, or ":memory:" (tests)
  journal_mode  = "wal"          # wal | delete | truncate | persist
  busy_timeout  = 5000           # milliseconds, 0 – 2147483647
  compress_data = true           # zstd level 3 for data of ≥ compress_min_bytes when smaller
  compress_min_bytes = 256       # bytes, 64 – 1048576 (1 MiB)
}`

// ServeConfig returns what a plugin process serving this backend runs with
// pluginrpc.Serve: Info{Name: "sqlite", Kinds: [persistence], Capabilities:
// [sdk.CapabilityCopyPrefix, sdk.CapabilityWatch, sdk.CapabilityDelete, sdk.CapabilityImport, sdk.CapabilityTenants]} reporting version, and one unconfigured Backend as both the Persistence and the
// Configurable (the host configures it before any other call).
func ServeConfig(version string) pluginrpc.ServeConfig {
	b := New()
	return pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:         Name,
			Version:      version,
			Kinds:        []sdk.Kind{sdk.KindPersistence},
			ConfigSchema: ConfigSchema,
			Capabilities: []string{sdk.CapabilityCopyPrefix, sdk.CapabilityWatch, sdk.CapabilityDelete, sdk.CapabilityImport, sdk.CapabilityTenants},
		},
		Persistence:  b,
		Configurable: b,
	}
}
