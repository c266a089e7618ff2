package sqlite

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Create refuses a header whose Tenant is not b's tenant (USAGE), then
// takes the write claim on h.ID (the in-process claim table, then
// the flock of its lock file) and returns its write handle: from then on,
// until the handle closes, a Create of the id in any process is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The session is
// stored, header and first batch in one transaction, at the first Append
// or Flush of the handle.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	return b.create(ctx, h, false)
}

// create is Create; a hidden create (an Import's) is left out of List
// while it is not stored.
func (b *Backend) create(ctx context.Context, h sdk.Header, hidden bool) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "create"); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckTenant(op, h, st.tenant); err != nil {
		return sdk.Opened{}, err
	}
	h, hdr, err := handles.CheckCreate(op, h, st.path)
	if err != nil {
		return sdk.Opened{}, err
	}
	if b.pending.Holder(h.ID) != nil {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
	}
	hd := &handle{name: b.handles.NewName(), id: h.ID, write: true, pending: hdr, header: h}
	// A stored row answers without the claim: taking it, even for a
	// moment, would refuse a write open of that session elsewhere. Else the
	// claim comes before the look that counts: once it is held, no other
	// process can store the id, so the answer cannot go stale.
	if _, found, err := st.session(ctx, st.stmts.session, h.ID); err == nil && found {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored")
	}
	if err := st.acquire(h.ID, hd); err != nil {
		if errors.Is(err, errClaimed) {
			return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "another handle holds its write claim ("+err.Error()+"): it is stored or being created")
		}
		return sdk.Opened{}, withSession(err, h.ID)
	}
	_, found, err := st.session(ctx, st.stmts.session, h.ID)
	if err == nil && found {
		err = handles.AlreadyExists(op, h.ID, "it is stored")
	} else if err != nil {
		err = st.dbErr(ctx, h.ID, "create", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err == nil && b.shut {
		err = configErr("this sqlite backend was shut down")
	}
	if err != nil {
		st.release(h.ID, hd)
		return sdk.Opened{}, err
	}
	// No other create of the id is pending here, so the Take succeeds: a
	// pending create holds the store's claim until it is stored or its
	// handle closes, and this one holds it now.
	if hidden {
		b.pending.TakeHidden(h.ID, hd)
	} else {
		b.pending.Take(h.ID, hd)
	}
	b.handles.Put(hd.name, hd)
	return sdk.Opened{Handle: hd.name, Header: h}, nil
}

// Open opens a stored session (docs/plugins.md, docs/storage.md). The format gate
// and the header check come first; AccessWrite then takes the write claim
// (ALREADY_OWNED when a handle of any process holds it). The rows are
// scanned for a torn tail: a read open reports it and leaves it alone; a
// write open saves the torn rows to <path>.torn/ and removes them.
func (b *Backend) Open(ctx context.Context, id string, access sdk.Access) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "open"); err != nil {
		return sdk.Opened{}, err
	}
	st, err := b.store()
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckOpen(op, id, access); err != nil {
		return sdk.Opened{}, err
	}
	write := access == sdk.AccessWrite
	hd := &handle{name: b.handles.NewName(), id: id, write: write}

	o, err := st.openSession(ctx, id, hd)
	if err != nil {
		if write {
			st.release(id, hd)
		}
		return sdk.Opened{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		if write {
			st.release(id, hd)
		}
		return sdk.Opened{}, configErr("this sqlite backend was shut down")
	}
	if !write && o.Torn != (sdk.Torn{}) {
		hd.view.Clamp(int64(o.NextSeq), o.Revision)
	}
	b.handles.Put(hd.name, hd)
	return o, nil
}
