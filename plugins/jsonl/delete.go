package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/vfs"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting sessions":
//
//	<root>/.audit.jsonl           the audit log: one JSON record per line, appended and fsynced
//	<root>/<enc(id)>/hold         a legal hold: the JSON record that set it
//
// Both names are ones EncodeID never produces for a session (a leading
// "." is encoded; "hold" is not a log name), so no session collides with
// them. Every Delete and SetHold of a root runs under an exclusive flock
// on the audit log, in every process: a hold and a delete never
// interleave, and records are appended whole.

const (
	auditName = ".audit.jsonl"
	holdName  = "hold"
	// auditLockWait bounds how long a Delete or SetHold waits for another
	// one to release the audit log (BACKEND_BUSY after it).
	auditLockWait = 10 * time.Second
)

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter): it takes the write
// claim (in this instance and across processes, through session.lock),
// checks the hold, appends the audit record with the log file's SHA-256
// and the length of its valid prefix, then removes the log, then every
// other file of the session directory (checkpoint, torn-tail artifacts),
// then session.lock and the directory, syncing the directories. A crash
// in between leaves a directory without a log, which no call sees as a
// session and a Create of the id reuses.
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
		if err := a.append(rec); err != nil {
			return err
		}
		return b.removeSession(id, dir, cfg.Root)
	})
	return rec, err
}

// removeSession removes the session directory dir, log first, holding
// its session.lock.
func (b *Backend) removeSession(id, dir, root string) error {
	names, err := b.fs.ReadDir(dir)
	if err != nil {
		return handles.IOError(op, id, "listing "+dir, err)
	}
	fail := func(what string, err error) error {
		return handles.IOError(op, id, what+" (the audit record is written; delete the session again to finish)", err)
	}
	for _, logs := range []bool{true, false} {
		for _, n := range names {
			if _, _, isLog := parseLogName(n); isLog != logs || n == lockName {
				continue
			}
			if err := b.fs.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fail("removing "+filepath.Join(dir, n), err)
			}
		}
		if err := b.fs.SyncDir(dir); err != nil {
			return fail("syncing "+dir, err)
		}
	}
	if err := b.fs.Remove(filepath.Join(dir, lockName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("removing "+filepath.Join(dir, lockName), err)
	}
	if err := b.fs.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fail("removing "+dir, err)
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
		now, err := b.isHeld(id, path)
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
		if err := a.append(rec); err != nil {
			return err
		}
		changed = true
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
	return b.isHeld(id, filepath.Join(dir, holdName))
}

func (b *Backend) isHeld(id, path string) (bool, error) {
	switch _, err := b.fs.Lstat(path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, handles.IOError(op, id, "examining "+path, err)
	}
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

// Audit calls fn with every record of <root>/.audit.jsonl, oldest first
// (sdk.Deleter). A last line without its newline (an append cut by a
// crash) is left out; any other line that is not a record is CORRUPT_LOG
// naming the file and the line.
func (b *Backend) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	if err := handles.Ended(ctx, op, "audit"); err != nil {
		return err
	}
	cfg, err := b.config()
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.Root, auditName)
	data, err := b.readSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return handles.IOError(op, "", "reading "+path, err)
	}
	for n := 1; ; n++ {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			return nil // empty, or a torn last line
		}
		data = rest
		var rec sdk.AuditRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return sdk.Wrapf(sdk.CodeCorruptLog, op, err, "%s line %d is not an audit record", path, n)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

// auditLog is <root>/.audit.jsonl, open and flocked exclusively.
type auditLog struct {
	b    *Backend
	id   string
	path string
	f    vfs.File
	root string
	made bool // created by this open: the root is synced after the first append
}

// withAudit runs fn with the audit log of cfg.Root open and flocked,
// creating it (0600) when missing.
func (b *Backend) withAudit(cfg Config, id string, fn func(*auditLog) error) error {
	path := filepath.Join(cfg.Root, auditName)
	_, statErr := b.fs.Lstat(path)
	f, err := b.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return handles.IOError(op, id, "opening "+path, err)
	}
	defer f.Close()
	deadline := time.Now().Add(auditLockWait)
	for {
		err := f.Lock()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return handles.IOError(op, id, "locking "+path, err)
		}
		if time.Now().After(deadline) {
			return sdk.Errorf(sdk.CodeBackendBusy, op, "%s stayed locked by another delete or hold for %s; try again", path, auditLockWait).WithSession(id)
		}
		time.Sleep(5 * time.Millisecond)
	}
	defer f.Unlock()
	return fn(&auditLog{b: b, id: id, path: path, f: f, root: cfg.Root, made: errors.Is(statErr, fs.ErrNotExist)})
}

// append writes rec as the last line of the log and syncs it (and the
// root, when this open created the file). A last line left without its
// newline by a crash is cut first; a failed write is cut back.
func (a *auditLog) append(rec sdk.AuditRecord) error {
	fi, err := a.f.Stat()
	if err != nil {
		return handles.IOError(op, a.id, "fstat "+a.path, err)
	}
	size := fi.Size
	if size > 0 {
		last := []byte{0}
		if err := readFull(a.f, last, size-1); err != nil {
			return handles.IOError(op, a.id, "reading "+a.path, err)
		}
		if last[0] != '\n' { // a torn last line: cut it
			data := make([]byte, size)
			if err := readFull(a.f, data, 0); err != nil {
				return handles.IOError(op, a.id, "reading "+a.path, err)
			}
			size = int64(bytes.LastIndexByte(data, '\n') + 1)
		}
	}
	line, _ := json.Marshal(rec) // an AuditRecord always marshals
	line = append(line, '\n')
	_, err = a.f.WriteAt(line, size)
	if err == nil {
		err = a.f.Truncate(size + int64(len(line)))
	}
	if err == nil {
		err = a.f.Sync()
	}
	if err != nil {
		a.f.Truncate(size)
		return handles.IOError(op, a.id, "appending to "+a.path+" at byte "+strconv.FormatInt(size, 10), err)
	}
	if a.made {
		if err := a.b.fs.SyncDir(a.root); err != nil {
			return handles.IOError(op, a.id, "syncing "+a.root, err)
		}
		a.made = false
	}
	return nil
}
