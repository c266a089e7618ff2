package host

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Delete deletes the stored session id through the store (store.Delete):
// a session live in this host is ALREADY_OWNED; one ReleaseIdle released
// is forgotten (Flush and Release of it are SESSION_NOT_LIVE again). A
// read-only host refuses it with SESSION_READ_ONLY.
func (h *Host) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	if err := h.refuseWrite("delete", id); err != nil {
		return sdk.AuditRecord{}, err
	}
	rec, err := h.st.Delete(ctx, id, r)
	if err == nil {
		h.forget(id) // nothing of it is durable any more
	}
	return rec, err
}

// SetHold puts a legal hold on the stored session id (held) or lifts it
// through the store (store.Hold, store.ReleaseHold). A read-only host
// refuses it with SESSION_READ_ONLY.
func (h *Host) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	op := "hold"
	if !held {
		op = "release-hold"
	}
	if err := h.refuseWrite(op, id); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	if held {
		return h.st.Hold(ctx, id, r)
	}
	return h.st.ReleaseHold(ctx, id, r)
}
