package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
)

// Deleting sessions and legal holds (docs/operations.md, "Deleting
// sessions, holds and retention"): every operation runs on the primary
// first, which decides (ownership, existence, hold) and audits, then on
// each mirror, which audits its own deletion too.
//
// Partial failure: when the primary has deleted the session and a mirror
// fails, Delete returns the primary's record with an error naming the
// mirror. Nothing is rolled back (the primary's deletion is on its audit
// log); deleting again finishes: a backend that no longer holds the
// session (SESSION_NOT_FOUND) is skipped, and the call fails with
// SESSION_NOT_FOUND only when no backend held it.

// deleters returns every backend as an sdk.Deleter, primary first, or
// SESSION_NOT_FOUND without backends and CONFIG_INVALID naming a backend
// that cannot delete.
func (st *Store) deleters(id, op string) ([]sdk.Deleter, error) {
	if len(st.opts.Backends) == 0 {
		return nil, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: op, SessionID: id, Detail: "no persistence backend is configured"}
	}
	out := make([]sdk.Deleter, len(st.opts.Backends))
	for i, b := range st.opts.Backends {
		d, ok := capability(b.Persistence, deleterAccessor.Deleter)
		if !ok {
			return nil, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: op, SessionID: id,
				Detail: "backend " + b.Name + " cannot delete sessions (its persistence implements no delete capability); configure backends that do"}
		}
		out[i] = d
	}
	return out, nil
}

// Delete removes the stored session id from every backend (sdk.Deleter),
// each appending its audit record first, and the salvage artifacts of the
// session in Options.SalvageDir. A session live in this store is
// ALREADY_OWNED (release it first); a backend's refusal (ALREADY_OWNED
// from a writer elsewhere, SESSION_HELD) comes from the primary before
// anything is deleted. It returns the primary's record, or the first
// mirror's when the primary no longer held the session.
func (st *Store) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	const op = "delete"
	if err := checkLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, err
	}
	if _, live := st.liveEntry(id); live {
		return sdk.AuditRecord{}, &sdk.Error{Code: sdk.CodeAlreadyOwned, Op: op, SessionID: id,
			Detail: "session " + id + " is live in this store (open for writing here); release it first"}
	}
	ds, err := st.deleters(id, op)
	if err != nil {
		return sdk.AuditRecord{}, err
	}
	var rec sdk.AuditRecord
	found := false
	var errs []error
	var notFound error
	for i, d := range ds {
		name := st.opts.Backends[i].Name
		got, err := d.Delete(ctx, id, r)
		switch {
		case errors.Is(err, sdk.CodeSessionNotFound):
			if i == 0 {
				notFound = err
			}
			continue
		case err != nil && i == 0:
			return sdk.AuditRecord{}, err
		case err != nil:
			errs = append(errs, &sdk.Error{Code: sdk.CodeOf(err), Op: op, SessionID: id,
				Detail: "mirror " + name + " failed to delete it (the primary's deletion stands; delete again to finish)", Err: err})
			continue
		}
		if !found {
			rec, found = got, true
		}
	}
	if err := st.removeSalvageArtifacts(id); err != nil {
		errs = append(errs, err)
	}
	if !found && len(errs) == 0 {
		return sdk.AuditRecord{}, notFound // as the primary words it
	}
	return rec, errors.Join(errs...)
}

// removeSalvageArtifacts removes the artifacts Salvage wrote for a child
// named id: the files of SalvageDir named salvageArtifactName(id, ms).
func (st *Store) removeSalvageArtifacts(id string) error {
	if st.opts.SalvageDir == "" {
		return nil
	}
	names, err := os.ReadDir(st.opts.SalvageDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &sdk.Error{Code: sdk.CodeIOError, Op: "delete", SessionID: id, Detail: "listing the salvage directory", Err: err}
	}
	for _, e := range names {
		if !isSalvageArtifactOf(e.Name(), id) {
			continue
		}
		if err := os.Remove(filepath.Join(st.opts.SalvageDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &sdk.Error{Code: sdk.CodeIOError, Op: "delete", SessionID: id, Detail: "removing the salvage artifact " + e.Name(), Err: err}
		}
	}
	return nil
}

// Hold puts a legal hold on the stored session id in every backend (see
// sdk.Deleter.SetHold); changed is the primary's answer. It works on a
// live session too.
func (st *Store) Hold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return st.setHold(ctx, id, true, r)
}

// ReleaseHold lifts the legal hold on the stored session id in every
// backend.
func (st *Store) ReleaseHold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return st.setHold(ctx, id, false, r)
}

func (st *Store) setHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	op := "hold"
	if !held {
		op = "release-hold"
	}
	if err := checkLifecycle(id, r); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	ds, err := st.deleters(id, op)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	rec, changed, err := ds[0].SetHold(ctx, id, held, r)
	if err != nil {
		return sdk.AuditRecord{}, false, err
	}
	var errs []error
	for i, d := range ds[1:] {
		if _, _, err := d.SetHold(ctx, id, held, r); err != nil && !errors.Is(err, sdk.CodeSessionNotFound) {
			errs = append(errs, &sdk.Error{Code: sdk.CodeOf(err), Op: op, SessionID: id,
				Detail: "mirror " + st.opts.Backends[i+1].Name + " failed (the primary's change stands; run it again to finish)", Err: err})
		}
	}
	return rec, changed, errors.Join(errs...)
}

// Held reports whether the stored session id is under a legal hold in the
// primary.
func (st *Store) Held(ctx context.Context, id string) (bool, error) {
	ds, err := st.deleters(id, "held")
	if err != nil {
		return false, err
	}
	return ds[0].Held(ctx, id)
}

// Audit calls fn with every record of the primary's audit log, oldest
// first.
func (st *Store) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	if len(st.opts.Backends) == 0 {
		return nil
	}
	ds, err := st.deleters("", "audit")
	if err != nil {
		return err
	}
	return ds[0].Audit(ctx, fn)
}

func checkLifecycle(id string, r sdk.AuditRequest) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return err
	}
	return sdk.CheckAuditRequest(r)
}

// LastActivity returns when the stored session id was last written: the
// time of its last stored event (epoch ms), or its header's createdAt when
// it holds none. It reads the primary without a claim.
func (st *Store) LastActivity(ctx context.Context, id string) (int64, error) {
	p, ok := st.primary()
	if !ok {
		return 0, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "last activity", SessionID: id, Detail: "no persistence backend is configured"}
	}
	o, err := p.Persistence.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return 0, err
	}
	defer st.closeBackends([]*backend{{name: p.Name, p: p.Persistence, handle: o.Handle}})
	if o.NextSeq == 0 {
		return o.Header.CreatedAt, nil
	}
	var last []byte
	if err := p.Persistence.Read(ctx, o.Handle, o.NextSeq-1, 1, func(evs [][]byte) error {
		if len(evs) > 0 {
			last = evs[len(evs)-1]
		}
		return nil
	}); err != nil {
		return 0, err
	}
	parts, err := envelope.Split("last activity", last)
	if err != nil {
		return 0, err
	}
	return parts.Time, nil
}
