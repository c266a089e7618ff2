package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/flockclaim"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Create claims h.ID and returns its write handle. Before it returns it
// takes the write claim every process respects: the root and session
// directories are created (0700, parents fsynced) and session.lock is
// flocked, so until the handle closes a Create of the id in any process is
// SESSION_ALREADY_EXISTS and an Open(write) ALREADY_OWNED. The session
// materializes, header and first batch in one new file, at the first
// non-empty Append or at Flush; until then no log exists, and other
// processes do not see the session.
func (b *Backend) Create(ctx context.Context, h sdk.Header) (sdk.Opened, error) {
	return b.create(ctx, h, false)
}

// create is Create; a hidden create (an Import's) is left out of List
// while it is not stored.
func (b *Backend) create(ctx context.Context, h sdk.Header, hidden bool) (sdk.Opened, error) {
	if err := handles.Ended(ctx, op, "create"); err != nil {
		return sdk.Opened{}, err
	}
	if err := handles.CheckTenant(op, h, b.tenant); err != nil {
		return sdk.Opened{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.Opened{}, err
	}
	h, _, err = handles.CheckCreate(op, h, "")
	if err != nil {
		return sdk.Opened{}, err
	}
	hd := b.newHandle(h.ID, true, filepath.Join(cfg.Root, EncodeID(h.ID)))
	hd.pending, hd.header, hd.zst = true, h, cfg.Compression == CompressionZstd
	take := b.claims.Take
	if hidden {
		take = b.claims.TakeHidden
	}
	if c, ok := take(h.ID, hd); !ok {
		b.mu.Lock()
		pending := c.pending
		b.mu.Unlock()
		if pending {
			return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it was created in this instance and is not stored yet")
		}
		return sdk.Opened{}, handles.AlreadyExists(op, h.ID, "it is stored and open for writing in this instance")
	}
	if err := b.claimNew(hd, cfg); err != nil {
		b.release(hd)
		return sdk.Opened{}, err
	}
	b.handles.Put(hd.name, hd)
	return sdk.Opened{Handle: hd.name, Header: h}, nil
}

// claimNew takes the cross-process claim for the create hd, which holds
// the in-process claim: the session directory (made when missing), the
// flock on its session.lock, and, under the lock, the check that no log is
// stored there. hd holds the lock file afterwards.
func (b *Backend) claimNew(hd *handle, cfg Config) error {
	if err := b.checkSessionDir(hd.id, hd.dir); err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
		return err
	}
	// A log stored already answers without the lock: taking it, even for
	// a moment, would refuse a write open of that session elsewhere.
	if _, _, err := b.findLog(hd.id, hd.dir, cfg); err == nil || errors.Is(err, sdk.CodeCompressionMismatch) || errors.Is(err, sdk.CodeCorruptLog) {
		return handles.AlreadyExists(op, hd.id, "it is stored in "+hd.dir)
	}
	if err := durable.On(vfs.Durable(b.fs)).MkdirAll(hd.dir); err != nil {
		return handles.IOError(op, hd.id, "creating "+hd.dir, err)
	}
	if err := b.syncTenantDir(hd.id, cfg.Root); err != nil {
		return err
	}
	lock, err := b.lockSession(hd.id, hd.dir)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return handles.AlreadyExists(op, hd.id, "another process holds "+filepath.Join(hd.dir, lockName)+": it has it open for writing or is creating it")
		}
		return handles.IOError(op, hd.id, "taking the write lock", err)
	}
	if _, _, err := b.findLog(hd.id, hd.dir, cfg); err == nil || !errors.Is(err, sdk.CodeSessionNotFound) {
		lock.Unlock()
		lock.Close()
		if err == nil || errors.Is(err, sdk.CodeCompressionMismatch) || errors.Is(err, sdk.CodeCorruptLog) {
			return handles.AlreadyExists(op, hd.id, "it is stored in "+hd.dir)
		}
		return err
	}
	hd.mu.Lock()
	hd.lock = lock
	hd.mu.Unlock()
	return nil
}

// createdElsewhere returns ALREADY_OWNED when id, which has no log, is
// claimed by a create that is not stored yet: a pending create of this
// instance, or a flock held on its session.lock by another. It creates
// nothing: without a lock file nobody holds the claim.
func (b *Backend) createdElsewhere(id, dir string) error {
	if b.claims.Holder(id) != nil {
		return handles.AlreadyOwned(op, id, "a create handle of this instance holds it, and it is not stored yet")
	}
	path := filepath.Join(dir, lockName)
	lock, err := b.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	defer lock.Close()
	// Shared: a look must not pass for a claim (flockclaim).
	if err := flockclaim.Take(lock.LockShared, nil); errors.Is(err, syscall.EWOULDBLOCK) {
		return handles.AlreadyOwned(op, id, "another process holds "+path+" and is creating it (it is not stored yet)")
	}
	return nil
}

// claim takes the write claim for hd: the in-process table first, then
// flock on session.lock. hd holds the lock file afterwards.
func (b *Backend) claim(hd *handle) error {
	if _, ok := b.claims.Take(hd.id, hd); !ok {
		return handles.AlreadyOwned(op, hd.id, "another handle of this instance holds it")
	}
	lock, err := b.lockSession(hd.id, hd.dir)
	if err != nil {
		b.claims.Release(hd.id, hd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return handles.AlreadyOwned(op, hd.id, "another process holds "+filepath.Join(hd.dir, lockName))
		}
		return handles.IOError(op, hd.id, "taking the write lock", err)
	}
	hd.lock = lock
	return nil
}

// lockSession opens session.lock in dir (creating it) and flocks it
// exclusively. It fails with EWOULDBLOCK only when another open file holds
// it exclusively beyond an instant, never for a write open's shared look
// at whether a create is pending (flockclaim).
func (b *Backend) lockSession(id, dir string) (vfs.File, error) {
	path := filepath.Join(dir, lockName)
	lock, err := b.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	onlyShared := func() bool {
		f, err := b.fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		return f.LockShared() == nil
	}
	if err := flockclaim.Take(lock.Lock, onlyShared); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// release undoes a failed open or materialization: the files hd holds and
// its claim.
func (b *Backend) release(hd *handle) {
	hd.mu.Lock()
	hd.closeFiles()
	hd.mu.Unlock()
	b.claims.Release(hd.id, hd)
}

// closeFiles closes every file hd holds; hd.mu is held.
func (hd *handle) closeFiles() {
	if hd.f != nil {
		hd.f.Close()
		hd.f = nil
	}
	for _, f := range hd.retired {
		f.Close()
	}
	hd.retired = nil
	if hd.lock != nil {
		hd.lock.Unlock()
		hd.lock.Close()
		hd.lock = nil
	}
}
