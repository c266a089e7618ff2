package sqlite

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/plugins/internal/sqlstore"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// The delete capability (sdk.Deleter), docs/storage.md "Deleting
// sessions": the audit table holds the audit log, the holds table the
// sessions under a legal hold. A record is inserted in the transaction
// that makes the change it records, so the log never misses a change and
// never records one that did not happen. A session's digest is that of
// its plain JSONL form: the header JSON and the envelopes of its valid
// prefix, each followed by a newline (handles.Digest).

var _ sdk.Deleter = (*Backend)(nil)

// Delete removes the stored session id (sdk.Deleter,
// sqlstore.Delete): under its write claim, the audit record, the sessions
// row and with it (ON DELETE CASCADE) its events in one transaction; then
// its torn-row artifacts in <path>.torn/. The lock file stays, as every
// lock file does.
func (b *Backend) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	var st space
	rec, err := sqlstore.Delete(ctx, op, id, r, func() (space, func(), error) {
		var err error
		if st, err = b.store(); err != nil {
			return space{}, nil, err
		}
		hd := &handle{name: "delete", id: id, write: true}
		if err := st.acquire(id, hd); err != nil {
			if errors.Is(err, errClaimed) {
				return space{}, nil, handles.DeleteOwned(op, id, "the write claim is held "+strings.TrimPrefix(err.Error(), errClaimed.Error()+" "))
			}
			return space{}, nil, withSession(err, id)
		}
		return st, func() { st.release(id, hd) }, nil
	})
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	return rec, st.removeArtifacts(id)
}

// removeArtifacts removes the torn-row artifacts of session id: the files
// of <path>.torn/ named artifactName(id, ms) for some epoch ms.
func (s space) removeArtifacts(id string) error {
	dir := s.tornDirOf()
	if dir == "" {
		return nil
	}
	names, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return newErr(sdk.CodeIOError, id, "listing %s for the torn-row artifacts of the deleted session: %v", dir, err)
	}
	removed := false
	for _, e := range names {
		if !isArtifactOf(e.Name(), id) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return newErr(sdk.CodeIOError, id, "removing the torn-row artifact %s of the deleted session: %v", filepath.Join(dir, e.Name()), err)
		}
		removed = true
	}
	if removed {
		if err := durable.SyncDir(dir); err != nil {
			return newErr(sdk.CodeIOError, id, "syncing %s: %v", dir, err)
		}
	}
	return nil
}

// isArtifactOf reports whether name is artifactName(id, ms) for some
// epoch ms: the digits before ".jsonl", after the last "." before them.
func isArtifactOf(name, id string) bool {
	rest, ok := strings.CutSuffix(name, ".jsonl")
	dot := strings.LastIndexByte(rest, '.')
	if !ok || dot < 0 {
		return false
	}
	ms, err := strconv.ParseInt(rest[dot+1:], 10, 64)
	return err == nil && ms >= 0 && name == artifactName(id, ms)
}

// SetHold puts a legal hold on the stored session id or releases it
// (sdk.Deleter, sqlstore.SetHold), beside a writer: the record and the
// holds row change in one transaction.
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
