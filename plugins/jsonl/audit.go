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
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The audit log, <root>/.audit.jsonl (docs/storage.md, "Deleting
// sessions"): one JSON object a line, each appended whole and fsynced
// under an exclusive flock of the file. Format 2 records a change in two
// lines, so that the log and the state agree after a crash at any point:
//
//	{<record>,"phase":"intent"}                        before the change, fsynced
//	{"time","op","session","phase":"done"|"annulled"}  after it: made, or found not made
//
// The outcome closes the intent just before it (same op and session);
// nothing else is written between the two, as both are written under one
// flock. A line without "phase" is a record of format 1, which earlier
// builds wrote before changing anything; it counts as done.
//
// Each change has one step that makes it (its commit point), and the state
// after that step is what decides an intent left without an outcome by a
// crash: a hold is made when <enc(id)>/hold exists, a release when it no
// longer does, and a delete when the session directory has been renamed to
// <root>/.deleting. Delete and SetHold settle such an intent (write its
// outcome, and remove what a finished delete left in .deleting) under the
// flock before anything else; Audit, which writes nothing, reads the state
// by the same rule.

const (
	auditName = ".audit.jsonl"
	// trashName is where a delete moves the session directory, in one
	// rename, before removing its files: a name EncodeID never produces.
	trashName = ".deleting"
	// auditLockWait bounds how long a Delete, SetHold or Audit waits for
	// another one to release the audit log (BACKEND_BUSY after it).
	auditLockWait = 10 * time.Second
	// auditTail is how much of the end of the log is read to find its last
	// line: more than any record (a 4 KiB reason escaped 6 times over, an
	// id, a digest).
	auditTail = 64 << 10
)

// The phases of a format 2 line.
const (
	phaseIntent   = "intent"
	phaseDone     = "done"
	phaseAnnulled = "annulled"
)

// auditTag is what a line says besides a record: its phase.
type auditTag struct {
	Phase string `json:"phase"`
}

// auditOutcome is an outcome line.
type auditOutcome struct {
	Time    string      `json:"time"`
	Op      sdk.AuditOp `json:"op"`
	Session string      `json:"session"`
	Phase   string      `json:"phase"`
}

// intentLine is the intent line of rec: its JSON with "phase":"intent"
// added as the last member.
func intentLine(rec sdk.AuditRecord) []byte {
	line, _ := json.Marshal(rec) // an AuditRecord always marshals
	return append(line[:len(line)-1], `,"phase":"`+phaseIntent+`"}`...)
}

// outcomeLine is the line that closes the intent of rec.
func outcomeLine(rec sdk.AuditRecord, made bool) []byte {
	phase := phaseAnnulled
	if made {
		phase = phaseDone
	}
	line, _ := json.Marshal(auditOutcome{Time: handles.AuditTime().Format(time.RFC3339Nano), Op: rec.Op, Session: rec.Session, Phase: phase})
	return line
}

// parseAuditLine reads one line of the log: its record and its phase ("" for
// a format 1 record).
func parseAuditLine(line []byte) (sdk.AuditRecord, string, error) {
	var rec sdk.AuditRecord
	var tag auditTag
	if err := json.Unmarshal(line, &rec); err != nil {
		return rec, "", err
	}
	if err := json.Unmarshal(line, &tag); err != nil {
		return rec, "", err
	}
	switch tag.Phase {
	case "", phaseIntent, phaseDone, phaseAnnulled:
		return rec, tag.Phase, nil
	}
	return rec, "", errors.New("unknown phase " + strconv.Quote(tag.Phase))
}

// made reports whether the change that the intent rec announced is made,
// by the state of its commit point.
func (b *Backend) made(root string, rec sdk.AuditRecord) (bool, error) {
	if rec.Op == sdk.AuditDelete {
		return b.exists(rec.Session, filepath.Join(root, trashName))
	}
	held, err := b.exists(rec.Session, filepath.Join(root, EncodeID(rec.Session), holdName))
	return held == (rec.Op == sdk.AuditHold), err
}

// exists reports whether path exists (Lstat).
func (b *Backend) exists(id, path string) (bool, error) {
	switch _, err := b.fs.Lstat(path); {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, handles.IOError(op, id, "examining "+path, err)
	}
}

// Audit calls fn with the record of every change the audit log of the
// root records as made, oldest first (sdk.Deleter): format 1 records, and
// format 2 intents closed as done. An intent closed as annulled is left
// out, and so is one left without an outcome by a crash unless the state
// shows it made. A last line without its newline (an append cut by a
// crash) is left out; any other line that is not a record, or an outcome
// that closes no intent, is CORRUPT_LOG naming the file and the line.
// Audit writes nothing; it reads under a shared flock, so it never sees a
// change half-way.
func (b *Backend) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	if err := handles.Ended(ctx, op, "audit"); err != nil {
		return err
	}
	cfg, err := b.config()
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.Root, auditName)
	f, err := b.fs.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return handles.IOError(op, "", "opening "+path, err)
	}
	defer f.Close()
	var data []byte
	var pending *sdk.AuditRecord
	err = lockAudit(f, path, "", f.LockShared, func() error {
		fi, err := f.Stat()
		if err == nil {
			data = make([]byte, fi.Size)
			err = readFull(f, data, 0)
		}
		if err != nil {
			return handles.IOError(op, "", "reading "+path, err)
		}
		if pending, err = lastIntent(path, data); err != nil || pending == nil {
			return err
		}
		made, err := b.made(cfg.Root, *pending)
		if !made {
			pending = nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return eachMade(path, data, pending, fn)
}

// lastIntent returns the record of the last line of data when it is an
// intent (nil otherwise).
func lastIntent(path string, data []byte) (*sdk.AuditRecord, error) {
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil, nil
	}
	start := bytes.LastIndexByte(data[:end], '\n') + 1
	rec, phase, err := parseAuditLine(data[start:end])
	if err != nil {
		return nil, sdk.Wrapf(sdk.CodeCorruptLog, op, err, "%s: the line at byte %d is not an audit record", path, start)
	}
	if phase != phaseIntent {
		return nil, nil
	}
	return &rec, nil
}

// eachMade calls fn with the records of data that are made; last is the
// final intent when the state shows it made, nil otherwise.
func eachMade(path string, data []byte, last *sdk.AuditRecord, fn func(sdk.AuditRecord) error) error {
	var pending *sdk.AuditRecord
	for n := 1; ; n++ {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			break // empty, or a torn last line
		}
		data = rest
		rec, phase, err := parseAuditLine(line)
		if err != nil {
			return sdk.Wrapf(sdk.CodeCorruptLog, op, err, "%s line %d is not an audit record", path, n)
		}
		switch phase {
		case "":
			if err := fn(rec); err != nil {
				return err
			}
		case phaseIntent:
			pending = &rec
		default:
			if pending == nil || pending.Op != rec.Op || pending.Session != rec.Session {
				return sdk.Errorf(sdk.CodeCorruptLog, op, "%s line %d closes a %s of %q that no intent before it announced", path, n, rec.Op, rec.Session)
			}
			if phase == phaseDone {
				if err := fn(*pending); err != nil {
					return err
				}
			}
			pending = nil
		}
	}
	if pending != nil && last != nil {
		return fn(*pending)
	}
	return nil
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

// withAudit runs fn with the audit log of cfg.Root open, flocked and
// settled, creating it (0600) when missing.
func (b *Backend) withAudit(cfg Config, id string, fn func(*auditLog) error) error {
	path := filepath.Join(cfg.Root, auditName)
	_, statErr := b.fs.Lstat(path)
	f, err := b.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return handles.IOError(op, id, "opening "+path, err)
	}
	defer f.Close()
	return lockAudit(f, path, id, f.Lock, func() error {
		a := &auditLog{b: b, id: id, path: path, f: f, root: cfg.Root, made: errors.Is(statErr, fs.ErrNotExist)}
		if err := a.settle(); err != nil {
			return err
		}
		return fn(a)
	})
}

// lockAudit runs fn holding the lock that take takes on the audit log f,
// waiting up to auditLockWait for it.
func lockAudit(f vfs.File, path, id string, take func() error, fn func() error) error {
	deadline := time.Now().Add(auditLockWait)
	for {
		err := take()
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
	return fn()
}

// settle closes an intent that a crash left as the last line of the log,
// as done or annulled by the state of its commit point, and then removes
// what a finished delete left in <root>/.deleting: after it, no change is
// half-way and a new one may start.
func (a *auditLog) settle() error {
	size, err := a.size()
	if err != nil || size == 0 {
		return err
	}
	off := max(0, size-auditTail)
	tail := make([]byte, size-off)
	if err := readFull(a.f, tail, off); err != nil {
		return handles.IOError(op, a.id, "reading "+a.path, err)
	}
	if i := bytes.IndexByte(tail, '\n'); off > 0 && i >= 0 {
		tail = tail[i+1:] // a line cut by the window
	}
	pending, err := lastIntent(a.path, tail)
	if err != nil {
		return err
	}
	if pending != nil {
		made, err := a.b.made(a.root, *pending)
		if err != nil {
			return err
		}
		if err := a.append(outcomeLine(*pending, made)); err != nil {
			return err
		}
	}
	return a.b.removeTrash(a.id, a.root)
}

// size returns the log's size, less a last line that a crash left without
// its newline.
func (a *auditLog) size() (int64, error) {
	fi, err := a.f.Stat()
	if err != nil {
		return 0, handles.IOError(op, a.id, "fstat "+a.path, err)
	}
	size := fi.Size
	if size == 0 {
		return 0, nil
	}
	last := []byte{0}
	if err := readFull(a.f, last, size-1); err != nil {
		return 0, handles.IOError(op, a.id, "reading "+a.path, err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	data := make([]byte, size)
	if err := readFull(a.f, data, 0); err != nil {
		return 0, handles.IOError(op, a.id, "reading "+a.path, err)
	}
	return int64(bytes.LastIndexByte(data, '\n') + 1), nil
}

// append writes line as the last line of the log and syncs it (and the
// root, when this open created the file). A last line left without its
// newline by a crash is cut first; a failed write is cut back.
func (a *auditLog) append(line []byte) error {
	size, err := a.size()
	if err != nil {
		return err
	}
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

// change records the intent of rec, runs do (the change, up to and
// including its commit point), and records the outcome: done when do
// succeeds; when it fails, whatever the state shows (settle), and do's
// error is returned.
func (a *auditLog) change(rec sdk.AuditRecord, do func() error) error {
	if err := a.append(intentLine(rec)); err != nil {
		return err
	}
	if err := do(); err != nil {
		return errors.Join(err, a.settle())
	}
	return a.append(outcomeLine(rec, true))
}
