package pluginhost

import (
	"context"
	"slices"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The delete capability over the current plugin process. Every
// persistence proxy is an sdk.Deleter, so that a caller learns why it
// cannot delete: a plugin that did not declare sdk.CapabilityDelete at its
// start answers CONFIG_INVALID naming it, without a call.

// deleter returns the current process's sdk.Deleter, or CONFIG_INVALID
// when the plugin did not declare the capability.
func (x persistenceProxy) deleter(id string) (sdk.Deleter, error) {
	if info := x.p.Info(); !slices.Contains(info.Capabilities, sdk.CapabilityDelete) {
		return nil, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "pluginhost", SessionID: id,
			Detail: "the persistence plugin " + info.Name + " cannot delete sessions: it does not declare the capability " + sdk.CapabilityDelete + "; use a backend that does (every bundled one does)"}
	}
	return adapter[sdk.Deleter](x.p, sdk.KindPersistence)
}

// Delete is sdk.Deleter over the current plugin process.
func (x persistenceProxy) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	d, err := x.deleter(id)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	rec, err := d.Delete(ctx, id, r)
	return rec, x.p.observe(err)
}

// SetHold is sdk.Deleter over the current plugin process.
func (x persistenceProxy) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	d, err := x.deleter(id)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	rec, changed, err := d.SetHold(ctx, id, held, r)
	return rec, changed, x.p.observe(err)
}

// Held is sdk.Deleter over the current plugin process.
func (x persistenceProxy) Held(ctx context.Context, id string) (bool, error) {
	d, err := x.deleter(id)
	if err != nil {
		return false, err
	}
	held, err := d.Held(ctx, id)
	return held, x.p.observe(err)
}

// Audit is sdk.Deleter over the current plugin process.
func (x persistenceProxy) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	d, err := x.deleter("")
	if err != nil {
		return err
	}
	return x.p.observe(d.Audit(ctx, fn))
}

var _ sdk.Deleter = persistenceProxy{}
