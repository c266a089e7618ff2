package pluginhost

import (
	"context"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The optional capabilities of a persistence plugin, one accessor each on
// the proxy that Plugin.Persistence returns. An accessor reports false when
// the plugin did not declare the capability at its start; otherwise it
// returns the capability over the plugin process of the moment, so that it
// follows the plugin across restarts like the proxy.

// declares reports whether the plugin declared capability c at its start.
func (x persistenceProxy) declares(c string) bool {
	return slices.Contains(x.p.Info().Capabilities, c)
}

// Watcher returns the watch capability (sdk.CapabilityWatch). A watch does
// not outlive the plugin process it runs on: a restart ends it with
// PLUGIN_UNAVAILABLE, and the caller watches again.
func (x persistenceProxy) Watcher() (sdk.Watcher, bool) {
	return watchProxy(x), x.declares(sdk.CapabilityWatch)
}

// PrefixCopier returns the copy-prefix capability (sdk.CapabilityCopyPrefix).
func (x persistenceProxy) PrefixCopier() (sdk.PrefixCopier, bool) {
	return prefixCopierProxy(x), x.declares(sdk.CapabilityCopyPrefix)
}

// Importer returns the import capability (sdk.CapabilityImport); without
// it the caller imports by Create and Append.
func (x persistenceProxy) Importer() (sdk.Importer, bool) {
	return importProxy(x), x.declares(sdk.CapabilityImport)
}

// Checkpointer returns the checkpoint capability (sdk.CapabilityCheckpoint).
func (x persistenceProxy) Checkpointer() (sdk.Checkpointer, bool) {
	return checkpointProxy(x), x.declares(sdk.CapabilityCheckpoint)
}

// FrameReader returns the frame-reading capability
// (sdk.CapabilityReadFrames); without it the caller reads through Read.
func (x persistenceProxy) FrameReader() (sdk.FrameReader, bool) {
	return frameProxy(x), x.declares(sdk.CapabilityReadFrames)
}

// SalvageReader returns the capability to read a damaged log. No Info
// capability declares it, so every persistence plugin reports it: one whose
// backend is no sdk.SalvageReader answers ReadDamaged with CONFIG_INVALID.
func (x persistenceProxy) SalvageReader() (sdk.SalvageReader, bool) {
	return salvageProxy(x), true
}

// Deleter returns the delete capability (sdk.CapabilityDelete).
func (x persistenceProxy) Deleter() (sdk.Deleter, bool) {
	return deleteProxy(x), x.declares(sdk.CapabilityDelete)
}

// watchProxy has the layout of persistenceProxy, whose tenant it serves.
type watchProxy struct {
	p      *Plugin
	tenant string
}

// Watch is sdk.Watcher over the current plugin process.
func (x watchProxy) Watch(ctx context.Context, id string, from sdk.Offset, fn func(length sdk.Offset) error) error {
	c, err := view[sdk.Watcher](x.p, x.tenant)
	if err != nil {
		return err
	}
	return x.p.observe(c.Watch(ctx, id, from, fn))
}

// prefixCopierProxy has the layout of persistenceProxy, whose tenant it serves.
type prefixCopierProxy struct {
	p      *Plugin
	tenant string
}

// CopyPrefix is sdk.PrefixCopier over the current plugin process.
func (x prefixCopierProxy) CopyPrefix(ctx context.Context, source string, boundary sdk.Seq, child sdk.Header) (sdk.Opened, error) {
	c, err := view[sdk.PrefixCopier](x.p, x.tenant)
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.CopyPrefix(ctx, source, boundary, child)
	return o, x.p.observe(err)
}

// importProxy has the layout of persistenceProxy, whose tenant it serves.
type importProxy struct {
	p      *Plugin
	tenant string
}

// Import is sdk.Importer over the current plugin process.
func (x importProxy) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	c, err := view[sdk.Importer](x.p, x.tenant)
	if err != nil {
		return sdk.Opened{}, err
	}
	o, err := c.Import(ctx, h, events)
	return o, x.p.observe(err)
}

// checkpointProxy has the layout of persistenceProxy, whose tenant it serves.
type checkpointProxy struct {
	p      *Plugin
	tenant string
}

// WriteCheckpoint is sdk.Checkpointer over the current plugin process.
func (x checkpointProxy) WriteCheckpoint(ctx context.Context, handle string, events sdk.Offset, data []byte) error {
	c, err := view[sdk.Checkpointer](x.p, x.tenant)
	if err != nil {
		return err
	}
	return x.p.observe(c.WriteCheckpoint(ctx, handle, events, data))
}

// ReadCheckpoint is sdk.Checkpointer over the current plugin process.
func (x checkpointProxy) ReadCheckpoint(ctx context.Context, handle string) (sdk.Offset, []byte, bool, error) {
	c, err := view[sdk.Checkpointer](x.p, x.tenant)
	if err != nil {
		return 0, nil, false, err
	}
	events, data, found, err := c.ReadCheckpoint(ctx, handle)
	return events, data, found, x.p.observe(err)
}

// frameProxy has the layout of persistenceProxy, whose tenant it serves.
type frameProxy struct {
	p      *Plugin
	tenant string
}

// ReadFrames is sdk.FrameReader over the current plugin process.
func (x frameProxy) ReadFrames(ctx context.Context, handle string, off sdk.Offset, n int64, fn func([]sdk.Frame) error) (bool, error) {
	c, err := view[sdk.FrameReader](x.p, x.tenant)
	if err != nil {
		return false, err
	}
	framed, err := c.ReadFrames(ctx, handle, off, n, fn)
	return framed, x.p.observe(err)
}

// salvageProxy has the layout of persistenceProxy, whose tenant it serves.
type salvageProxy struct {
	p      *Plugin
	tenant string
}

// ReadDamaged is sdk.SalvageReader over the current plugin process.
func (x salvageProxy) ReadDamaged(ctx context.Context, id string, fn func([][]byte) error) (sdk.Damaged, error) {
	c, err := view[sdk.SalvageReader](x.p, x.tenant)
	if err != nil {
		return sdk.Damaged{}, err
	}
	d, err := c.ReadDamaged(ctx, id, fn)
	return d, x.p.observe(err)
}

// deleteProxy has the layout of persistenceProxy, whose tenant it serves.
type deleteProxy struct {
	p      *Plugin
	tenant string
}

// Delete is sdk.Deleter over the current plugin process.
func (x deleteProxy) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	d, err := view[sdk.Deleter](x.p, x.tenant)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	rec, err := d.Delete(ctx, id, r)
	return rec, x.p.observe(err)
}

// SetHold is sdk.Deleter over the current plugin process.
func (x deleteProxy) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	d, err := view[sdk.Deleter](x.p, x.tenant)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	rec, changed, err := d.SetHold(ctx, id, held, r)
	return rec, changed, x.p.observe(err)
}

// Held is sdk.Deleter over the current plugin process.
func (x deleteProxy) Held(ctx context.Context, id string) (bool, error) {
	d, err := view[sdk.Deleter](x.p, x.tenant)
	if err != nil {
		return false, err
	}
	held, err := d.Held(ctx, id)
	return held, x.p.observe(err)
}

// Audit is sdk.Deleter over the current plugin process.
func (x deleteProxy) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	d, err := view[sdk.Deleter](x.p, x.tenant)
	if err != nil {
		return err
	}
	return x.p.observe(d.Audit(ctx, fn))
}
