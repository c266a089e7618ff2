package postgres

import (
	"context"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting
// sessions": the audit table holds the audit log of the schema, the holds
// table the sessions under a legal hold. A record is inserted in the
// transaction that makes the change it records, which locks the sessions
// row first, so a hold and a delete of one session never interleave. A
// session's digest is that of its plain JSONL form: the header JSON and
// the envelopes of its valid prefix, each followed by a newline
// (handles.Digest).

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter, sqlstore.Delete):
// under its write claim (ALREADY_OWNED naming the owning host), one
// transaction inserts the audit record and deletes the sessions row (its
// events and checkpoint cascade) and its torn_rows artifacts.
func (b *Backend) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	return sqlstore.Delete(ctx, op, id, r, func() (space, func(), error) {
		st, err := b.store()
		if err != nil {
			return space{}, nil, err
		}
		if b.pending.Holder(id) != nil {
			return space{}, nil, handles.DeleteOwned(op, id, "it was created in this instance and is not stored yet")
		}
		hd := &handle{name: "delete", id: id, write: true, key: st.lockKey(id)}
		oc, why, err := b.claim(ctx, st, hd)
		if err != nil {
			return space{}, nil, err
		}
		if why != "" {
			return space{}, nil, handles.DeleteOwned(op, id, why)
		}
		return st, func() { b.release(hd, oc) }, nil
	})
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter, sqlstore.SetHold), beside a writer.
func (b *Backend) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return sqlstore.SetHold(ctx, op, id, held, r, b.store)
}

// Held reports whether the stored session id has a holds row
// (sdk.Deleter).
func (b *Backend) Held(ctx context.Context, id string) (bool, error) {
	return sqlstore.Held(ctx, op, id, b.store)
}

// Audit calls fn with every row of the audit table in insertion order
// (sdk.Deleter).
func (b *Backend) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	return sqlstore.Audit(ctx, op, fn, b.store)
}
