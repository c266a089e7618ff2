package memory

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The delete capability (sdk.Deleter): the audit log and the holds are
// the store's, shared by every instance, and gone with it. A session's
// digest is that of its plain JSONL form (handles.Digest).

// Delete removes the stored session id after appending its record to the
// audit log (sdk.Deleter).
func (b *Backend) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	if err := handles.Ended(ctx, op, "delete"); err != nil {
		return sdk.AuditRecord{}, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if hd := b.st.claims.Holder(id); hd != nil {
		why := "another handle holds it"
		if hd.pending != nil {
			why = "a create handle holds it, and it is not stored yet"
		}
		return sdk.AuditRecord{}, handles.DeleteOwned(op, id, why)
	}
	s, err := b.st.stored(id)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	if b.st.held[id] {
		return sdk.AuditRecord{}, handles.Held(op, id)
	}
	rec := b.st.record(sdk.AuditDelete, id, s, r)
	delete(b.st.sessions, id)
	b.st.signalGrowth() // a watch of the session notices it is gone
	return rec, nil
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter).
func (b *Backend) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	if err := handles.Ended(ctx, op, "hold"); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, err := b.st.stored(id)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	if b.st.held[id] == held {
		return sdk.AuditRecord{}, false, nil
	}
	o := sdk.AuditHold
	if !held {
		o = sdk.AuditReleaseHold
	}
	rec := b.st.record(o, id, s, r)
	if held {
		b.st.held[id] = true
	} else {
		delete(b.st.held, id)
	}
	return rec, true, nil
}

// Held reports whether the stored session id is under a legal hold
// (sdk.Deleter).
func (b *Backend) Held(ctx context.Context, id string) (bool, error) {
	if err := handles.Ended(ctx, op, "held"); err != nil {
		return false, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return false, err
	}
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	if _, err := b.st.stored(id); err != nil {
		return false, err
	}
	return b.st.held[id], nil
}

// Audit calls fn with every record of the store's audit log, oldest first
// (sdk.Deleter).
func (b *Backend) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	if err := handles.Ended(ctx, op, "audit"); err != nil {
		return err
	}
	b.st.mu.Lock()
	recs := b.st.audit[:len(b.st.audit):len(b.st.audit)]
	b.st.mu.Unlock()
	for _, r := range recs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// record appends the audit record of o on the stored session s to the
// audit log and returns it; st.mu is held.
func (st *store) record(o sdk.AuditOp, id string, s *session, r sdk.AuditRequest) sdk.AuditRecord {
	d := handles.NewDigest()
	d.Line(s.header)
	for _, ev := range s.events {
		d.Line(ev)
	}
	rec := handles.Record(o, id, sdk.Offset(len(s.events)), d.String(), r)
	st.audit = append(st.audit, rec)
	return rec
}

var _ sdk.Deleter = (*Backend)(nil)
