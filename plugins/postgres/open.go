package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Create takes the write claim on h.ID (this instance's claim table, then
// the advisory lock on the ownership connection) and returns its write
// handle: from then on, until the handle closes, a Create of the id on any
// host is SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The
// session is stored, header and first batch in one transaction, at the
// first Append or Flush of the handle.
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
	h, hdr, err := handles.CheckCreate(op, h, st.where())
	if err != nil {
		return sdk.Opened{}, err
	}
	if b.pending.Holder(h.ID) != nil {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
	}
	// A stored row answers without the claim: taking it, even for a
	// moment, would refuse a write open of that session elsewhere.
	if _, found, err := st.session(ctx, st.pool, h.ID, false); err != nil {
		return sdk.Opened{}, err
	} else if found {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored")
	}
	hd := &handle{name: b.handles.NewName(), id: h.ID, write: true, key: st.lockKey(h.ID), pending: hdr, header: h}
	oc, why, err := b.claim(ctx, st, hd)
	if err != nil {
		return sdk.Opened{}, err
	}
	if why != "" {
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, why+": it is stored or being created")
	}
	// Once the claim is held no other host can store the id, so this
	// answer cannot go stale.
	_, found, err := st.session(ctx, st.pool, h.ID, false)
	if err == nil && found {
		err = handles.AlreadyExists(op, h.ID, "it is stored")
	}
	if err != nil {
		b.release(hd, oc)
		return sdk.Opened{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return sdk.Opened{}, configErr("this postgres backend was shut down")
	}
	hd.oc = oc
	if hidden {
		b.pending.TakeHidden(h.ID, hd)
	} else {
		b.pending.Take(h.ID, hd)
	}
	b.handles.Put(hd.name, hd)
	return sdk.Opened{Handle: hd.name, Header: h}, nil
}

// claim takes the write claim on hd.id: this instance's claim table, then
// the advisory lock. why is set, and nothing is held, when another handle
// of this instance or another host holds it.
func (b *Backend) claim(ctx context.Context, st space, hd *handle) (oc *ownerConn, why string, err error) {
	b.mu.Lock()
	_, ok := b.claims.Take(hd.id, hd)
	b.mu.Unlock()
	if !ok {
		return nil, "another handle of this backend holds its write claim", nil
	}
	oc, got, err := b.own.lock(ctx, hd.key)
	if err != nil || !got {
		b.release(hd, nil)
		if err != nil {
			return nil, "", err
		}
		return nil, st.ownerOf(ctx, hd.id), nil
	}
	return oc, "", nil
}

// Open opens a stored session (docs/plugins.md, docs/storage.md). The format gate
// and the header check come first; AccessWrite then takes the write claim
// (ALREADY_OWNED naming the owning host when another handle or host holds
// it) and bumps the session's owner epoch, which fences every earlier
// owner. The rows are then scanned in one snapshot for a torn tail and for
// damage: a read open reports a torn tail and leaves it alone; a write open
// keeps the torn rows in the torn_rows table and removes them.
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
	hd := &handle{name: b.handles.NewName(), id: id, write: write, key: st.lockKey(id)}
	r, found, err := st.session(ctx, st.pool, id, false)
	if err != nil {
		return sdk.Opened{}, err
	}
	if !found {
		return sdk.Opened{}, b.missing(ctx, st, hd)
	}
	h, err := st.header(r, id)
	if err != nil {
		return sdk.Opened{}, err
	}
	stored := h.FormatVersion
	h, migrated, err := headerjson.Migrate(h, r.header, st.where())
	if err != nil {
		return sdk.Opened{}, err
	}
	var oc *ownerConn
	if write {
		var why string
		if oc, why, err = b.claim(ctx, st, hd); err != nil {
			return sdk.Opened{}, err
		}
		if why != "" {
			return sdk.Opened{}, handles.AlreadyOwned(op, id, why)
		}
		if hd.epoch, err = st.bumpEpoch(ctx, id); err != nil {
			b.release(hd, oc)
			return sdk.Opened{}, err
		}
		if h.FormatVersion != stored {
			if err := st.migrate(ctx, id, hd.epoch, r.header, migrated); err != nil {
				b.release(hd, oc)
				return sdk.Opened{}, err
			}
		}
		hd.oc = oc
	}
	o, err := st.openScan(ctx, hd)
	if err != nil {
		if write {
			b.release(hd, oc)
		}
		return sdk.Opened{}, err
	}
	o.Header = h
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shut {
		return sdk.Opened{}, configErr("this postgres backend was shut down")
	}
	if write {
		hd.view.Saw(int64(o.NextSeq))
	} else if o.Torn != (sdk.Torn{}) {
		hd.view.Clamp(int64(o.NextSeq), o.Revision)
	}
	b.handles.Put(hd.name, hd)
	return o, nil
}

// missing is Open's error for a session without a row: ALREADY_OWNED for
// a write open of a session being created (its claim is held), else
// SESSION_NOT_FOUND.
func (b *Backend) missing(ctx context.Context, st space, hd *handle) error {
	if !hd.write {
		return handles.NotFound(op, hd.id)
	}
	oc, why, err := b.claim(ctx, st, hd)
	if err != nil {
		return err
	}
	if why != "" {
		return newErr(sdk.CodeAlreadyOwned, hd.id, "session %s is being created and is not stored yet; %s", strconv.Quote(hd.id), why)
	}
	b.release(hd, oc)
	return handles.NotFound(op, hd.id)
}

// migrate stores the migration of session id (docs/format.md "Format
// versions") for its owner of epoch epoch: one statement, so one
// transaction, replaces the stored header from with to, the migrated
// header (revision + 1); the event rows stay as they are, as every edge
// of this build keeps them byte-exact. Until it commits the session is
// the old version, which the next write open migrates again.
func (s space) migrate(ctx context.Context, id string, epoch int64, from, to []byte) error {
	tag, err := s.pool.Exec(ctx, "UPDATE "+s.q()+".sessions SET header = $2, revision = revision + 1 WHERE tenant = $5 AND id = $1 AND owner_epoch = $3 AND header = $4", id, string(to), epoch, string(from), s.tenant)
	if err != nil {
		return s.dbErr(ctx, id, "storing the format migration", err)
	}
	if tag.RowsAffected() != 1 {
		return newErr(sdk.CodeOwnershipLost, id, "session %s changed owner or header while its format migration was stored; nothing was migrated", strconv.Quote(id))
	}
	return nil
}

// bumpEpoch makes the caller, which holds the write claim, the session's
// owner: owner_epoch + 1 and owner_host, committed before it returns. An
// append of an earlier owner checks the epoch in its own transaction, so
// from here on none can commit (docs/storage.md, "Ownership and fencing").
func (s space) bumpEpoch(ctx context.Context, id string) (int64, error) {
	var epoch int64
	err := s.pool.QueryRow(ctx, "UPDATE "+s.q()+".sessions SET owner_epoch = owner_epoch + 1, owner_host = $2 WHERE tenant = $3 AND id = $1 RETURNING owner_epoch", id, s.host, s.tenant).Scan(&epoch)
	if err == pgx.ErrNoRows {
		return 0, handles.NotFound(op, id)
	}
	if err != nil {
		return 0, s.dbErr(ctx, id, "taking ownership", err)
	}
	return epoch, nil
}

// openScan reads the session row and scans its rows in one snapshot
// (docs/storage.md, "Torn rows"), cuts a torn tail for a write handle,
// and fills hd's incarnation and first-read cache.
func (s space) openScan(ctx context.Context, hd *handle) (sdk.Opened, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return sdk.Opened{}, s.dbErr(ctx, hd.id, "open", err)
	}
	defer tx.Rollback(context.Background())
	r, found, err := s.session(ctx, tx, hd.id, false)
	if err != nil {
		return sdk.Opened{}, err
	}
	if !found {
		return sdk.Opened{}, handles.NotFound(op, hd.id)
	}
	sc, err := s.scan(ctx, tx, hd.id, r.nextSeq, true)
	if err == nil {
		err = sc.Corrupt(op, hd.id, s.where())
	}
	if err != nil {
		return sdk.Opened{}, err
	}
	if err := tx.Commit(ctx); err != nil {
		return sdk.Opened{}, s.dbErr(ctx, hd.id, "open", err)
	}
	if sc.Torn.Bytes > 0 && hd.write {
		if r, sc, err = s.cut(ctx, hd.id); err != nil {
			return sdk.Opened{}, err
		}
	}
	if sc.Events != nil && int64(len(sc.Events)) == sc.End {
		hd.cache, hd.cacheRev = sc.Events, s.rev(r)
	}
	hd.incarnation = r.incarnation
	return sdk.Opened{Handle: hd.name, NextSeq: sdk.Offset(sc.End), Revision: s.rev(r), Torn: sc.Torn}, nil
}
