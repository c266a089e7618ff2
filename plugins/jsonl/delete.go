package jsonl

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting sessions":
//
//	<root>/.audit.jsonl           the audit log (audit.go)
//	<root>/.deleting              a session directory being deleted
//	<root>/<enc(id)>/hold         a legal hold: the JSON record that set it
//
// These names are ones EncodeID never produces for a session (a leading
// "." is encoded; "hold" is not a log name), so no session collides with
// them. Every Delete and SetHold of a root runs under an exclusive flock
// on the audit log, in every process: a hold and a delete never
// interleave, and records are appended whole.

const holdName = "hold"

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter): it takes the write
// claim (in this instance and across processes, through session.lock),
// checks the hold, records the intent with the log file's SHA-256 and the
// length of its valid prefix, renames the session directory to
// <root>/.deleting and syncs the root (the commit point: the session is
// gone in one step), records the delete as done, then removes the files of
// .deleting and the directory. A crash before the rename leaves the
// session as it was and the intent is annulled; after it, the delete is
// done and the next Delete or SetHold of the root records it and removes
// what is left (audit.go).
func (b *Backend) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	if err := handles.Ended(ctx, op, "delete"); err != nil {
		return sdk.AuditRecord{}, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	dir := filepath.Join(cfg.Root, EncodeID(id))
	if err := b.checkSessionDir(id, dir); err != nil {
		return sdk.AuditRecord{}, err
	}
	hd := &handle{id: id, write: true, dir: dir}
	if holder, ok := b.claims.Take(id, hd); !ok {
		why := "a write handle of this instance holds it"
		if holder.pending {
			why = "it was created in this instance and is not stored yet"
		}
		return sdk.AuditRecord{}, handles.DeleteOwned(op, id, why)
	}
	defer b.claims.Release(id, hd)
	lock, err := b.lockSession(id, dir)
	if err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return sdk.AuditRecord{}, handles.DeleteOwned(op, id, "another process holds "+filepath.Join(dir, lockName))
		}
		return sdk.AuditRecord{}, handles.IOError(op, id, "taking the write lock", err)
	}
	defer func() {
		lock.Unlock()
		lock.Close()
	}()
	if _, _, err := b.findLog(id, dir, cfg); err != nil {
		return sdk.AuditRecord{}, err
	}
	var rec sdk.AuditRecord
	err = b.withAudit(cfg, id, func(a *auditLog) error {
		if _, err := b.fs.Lstat(filepath.Join(dir, holdName)); err == nil {
			return handles.Held(op, id)
		}
		if rec, err = b.recordOf(id, cfg, sdk.AuditDelete, r); err != nil {
			return err
		}
		trash := filepath.Join(cfg.Root, trashName)
		err := a.change(rec, func() error {
			if err := b.fs.Rename(dir, trash); err != nil {
				return handles.IOError(op, id, "renaming "+dir+" to "+trash, err)
			}
			if err := b.fs.SyncDir(cfg.Root); err != nil {
				return handles.IOError(op, id, "syncing "+cfg.Root, err)
			}
			return nil
		})
		if err == nil {
			// The delete is made and recorded; what a failure here leaves
			// in .deleting goes at the next settle, which reports its own
			// failure.
			_ = b.removeTrash(id, cfg.Root)
		}
		return err
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return rec, nil
}

// removeTrash removes <root>/.deleting, the directory of a session whose
// delete is made, with the files in it, and syncs the root; a missing one
// is nothing to do.
func (b *Backend) removeTrash(id, root string) error {
	trash := filepath.Join(root, trashName)
	names, err := b.fs.ReadDir(trash)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	fail := func(what string, err error) error {
		return handles.IOError(op, id, what+" (left by a delete that is made and recorded)", err)
	}
	if err != nil {
		return fail("listing "+trash, err)
	}
	for _, n := range names {
		if err := b.fs.Remove(filepath.Join(trash, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail("removing "+filepath.Join(trash, n), err)
		}
	}
	if err := b.fs.Remove(trash); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("removing "+trash, err)
	}
	if err := b.fs.SyncDir(root); err != nil {
		return fail("syncing "+root, err)
	}
	return nil
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter). It takes no claim: it works beside a writer.
func (b *Backend) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	if err := handles.Ended(ctx, op, "hold"); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	if err := handles.CheckLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	cfg, err := b.config()
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	dir := filepath.Join(cfg.Root, EncodeID(id))
	if _, _, err := b.findLog(id, dir, cfg); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	var rec sdk.AuditRecord
	changed := false
	err = b.withAudit(cfg, id, func(a *auditLog) error {
		path := filepath.Join(dir, holdName)
		now, err := b.exists(id, path)
		if err != nil || now == held {
			return err
		}
		o := sdk.AuditHold
		if !held {
			o = sdk.AuditReleaseHold
		}
		if rec, err = b.recordOf(id, cfg, o, r); err != nil {
			return err
		}
		changed = true
		return a.change(rec, func() error {
			if held {
				line, _ := json.Marshal(rec) // an AuditRecord always marshals
				if err := durable.On(vfs.Durable(b.fs)).ReplaceFile(path, append(line, '\n'), filePerm); err != nil {
					return handles.IOError(op, id, "writing "+path, err)
				}
				return nil
			}
			if err := b.fs.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return handles.IOError(op, id, "removing "+path, err)
			}
			if err := b.fs.SyncDir(dir); err != nil {
				return handles.IOError(op, id, "syncing "+dir, err)
			}
			return nil
		})
	})
	return rec, changed, err
}

// Held reports whether the stored session id has a hold file
// (sdk.Deleter).
func (b *Backend) Held(ctx context.Context, id string) (bool, error) {
	if err := handles.Ended(ctx, op, "held"); err != nil {
		return false, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return false, err
	}
	cfg, err := b.config()
	if err != nil {
		return false, err
	}
	dir := filepath.Join(cfg.Root, EncodeID(id))
	if _, _, err := b.findLog(id, dir, cfg); err != nil {
		return false, err
	}
	return b.exists(id, filepath.Join(dir, holdName))
}

// recordOf returns the record of o on the stored session id: the SHA-256
// of its log file as stored, and the length of the log's valid prefix
// (the events before a torn tail or before committed damage).
func (b *Backend) recordOf(id string, cfg Config, o sdk.AuditOp, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	sl, err := b.scanStored(id, cfg)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	sl.f.Close()
	d := handles.NewDigest()
	d.Bytes(sl.data)
	return handles.Record(o, id, sdk.Offset(sl.ix.next), d.String(), r), nil
}
