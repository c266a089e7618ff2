package pluginhost

import (
	"context"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Importer returns the import capability of the plugin process of the
// moment, and true, when the plugin declared sdk.CapabilityImport at its
// start; otherwise false, and the caller imports by Create and Append.
// It is the one accessor of the capability on every persistence proxy.
func (x persistenceProxy) Importer() (sdk.Importer, bool) {
	if !slices.Contains(x.p.Info().Capabilities, sdk.CapabilityImport) {
		return nil, false
	}
	return importProxy(x), true
}

// importProxy is sdk.Importer over the current plugin process.
type importProxy struct{ p *Plugin }

// Import is sdk.Importer over the current plugin process.
func (x importProxy) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	c, err := adapter[sdk.Importer](x.p, sdk.KindPersistence)
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.Import(ctx, h, events)
	return o, x.p.observe(err)
}
