package postgres

import (
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// ConfigSchema documents the plugin's config block; GetInfo returns it.
const ConfigSchema = `persistence "postgres" {
  dsn                = env("LOGBOOK_PG_DSN") # required: libpq connection string or postgres:// URL
  schema             = "logbook"   # created when missing; a lowercase SQL identifier
  max_conns          = 8           # pooled connections for appends and reads, 1 – 1000
  host_name          = "web-1"     # recorded as the owner of the sessions this host writes; default <hostname>:<pid>
  compress_data      = true        # zstd level 3 for envelopes of ≥ compress_min_bytes when smaller
  compress_min_bytes = 256         # bytes, 64 – 1048576 (1 MiB)
}`

// ServeConfig returns what a plugin process serving this backend runs with
// pluginrpc.Serve: Info{Name: "postgres", Kinds: [persistence], Capabilities:
// [sdk.CapabilityCopyPrefix, sdk.CapabilityCheckpoint,
// sdk.CapabilityWatch, sdk.CapabilityDelete, sdk.CapabilityImport,
// sdk.CapabilityTenants]} reporting
// version, and one unconfigured Backend as both the Persistence and the
// Configurable (the host configures it before any other call).
func ServeConfig(version string) pluginrpc.ServeConfig {
	b := New()
	return pluginrpc.ServeConfig{
		Info: sdk.Info{
			Name:         Name,
			Version:      version,
			Kinds:        []sdk.Kind{sdk.KindPersistence},
			ConfigSchema: ConfigSchema,
			Capabilities: []string{sdk.CapabilityCopyPrefix, sdk.CapabilityCheckpoint, sdk.CapabilityWatch, sdk.CapabilityDelete, sdk.CapabilityImport, sdk.CapabilityTenants},
		},
		Persistence:  b,
		Configurable: b,
	}
}
