package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// SalvageRequest names a stored session whose log is damaged inside its
// committed part (CORRUPT_LOG) and the new session that keeps what the
// damaged log still holds.
type SalvageRequest struct {
	// SourceID is the damaged stored session; it is only read.
	SourceID string
	// ChildID is the new session's id; "" generates one.
	ChildID string
}

// SalvageReport says what Salvage kept and what it left out.
type SalvageReport struct {
	// Salvaged is what the child's session/salvaged event records; its
	// Artifact is the file that keeps the left-out bytes.
	session.Salvaged
	// ValidEvents is the length of the source's valid prefix, which the
	// child inherits.
	ValidEvents int64
	// Reason names the check the damaged part of the source failed.
	Reason string
}

// Salvage creates a live child session from the longest valid prefix of a
// stored session whose log is damaged inside its committed part. The
// primary backend reads the damaged log without refusing it (it must be an
// sdk.SalvageReader); the source is never modified. The child is exactly
// the fork of that prefix at its last event — the byte-identical prefix,
// the {inherited: true} marker, forked closers when the prefix ends inside
// a turn — followed by one session/salvaged event. The damaged region and
// everything after it go to an artifact file (0600, durable) in
// Options.SalvageDir, named after the child; the event names it by its
// absolute path. The child is stored (flushed) before the artifact gets
// its name, and a salvage killed in between is finished by the next one,
// so the artifact and the child exist together or not at all (see
// salvagedir.go). A prefix that is empty
// (the damage right after the header) gives the marker at seq 0 and the
// salvaged event, as a fork of an empty log would.
//
// In order, the first failure is returned and nothing is created: the
// child id live or stored → SESSION_ALREADY_EXISTS; the source live here or
// stored with a log that loads → INVALID_BOUNDARY naming fork, the tool for
// an intact log; the source not stored → SESSION_NOT_FOUND; a primary that
// cannot read a damaged log, or no SalvageDir → CONFIG_INVALID. A prefix the
// restore pipeline refuses fails with its CORRUPT_LOG: salvage keeps what
// storage still proves, it does not cut a log that breaks the event rules.
func (st *Store) Salvage(ctx context.Context, r SalvageRequest) (*session.Session, SalvageReport, error) {
	var rep SalvageReport
	child := r.ChildID
	if child == "" {
		child = st.opts.NewID()
	}
	if err := sdk.ValidateSessionID(child); err != nil {
		return nil, rep, err
	}
	if err := st.checkFree(ctx, child); err != nil {
		return nil, rep, err
	}
	sl, err := st.takeSlot("salvage", child)
	if err != nil {
		return nil, rep, err
	}
	defer sl.done()
	src := r.SourceID
	if err := sdk.ValidateSessionID(src); err != nil {
		return nil, rep, err
	}
	if _, live := st.Get(src); live {
		return nil, rep, salvageIntact(src, "it is live in this store")
	}
	p, ok := st.primary()
	if !ok {
		return nil, rep, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "salvage", SessionID: src, Detail: "no persistence backend is configured"}
	}
	sr, ok := capability(p.Persistence, salvageReaderAccessor.SalvageReader)
	if !ok {
		return nil, rep, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "salvage", SessionID: src,
			Detail: "the primary backend " + p.Name + " cannot read a damaged log (it is no sdk.SalvageReader)"}
	}
	if st.opts.SalvageDir == "" {
		return nil, rep, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "salvage", SessionID: src,
			Detail: "no salvage directory is configured for the artifact of the damaged bytes (store Options.SalvageDir)"}
	}

	dir, err := filepath.Abs(st.opts.SalvageDir) // the event names the artifact wherever it is read
	if err != nil {
		return nil, rep, &sdk.Error{Code: sdk.CodeConfigInvalid, Op: "salvage", SessionID: src, Detail: "the salvage directory " + st.opts.SalvageDir + " cannot be made absolute", Err: err}
	}
	d, prefix, err := st.readDamaged(ctx, sr, src)
	if err != nil {
		return nil, rep, err
	}
	if !d.Corrupt {
		return nil, rep, salvageIntact(src, "its stored log of "+plural(d.ValidEvents, "event")+" loads")
	}
	unlock, err := lockSalvageDir(ctx, dir)
	if err != nil {
		return nil, rep, salvageDirErr(child, "cannot take the lock of the salvage directory "+dir, err)
	}
	defer unlock()
	if err := st.recoverSalvage(ctx, p, dir); err != nil {
		return nil, rep, salvageDirErr(child, "cannot finish the salvage a crash interrupted in "+dir, err)
	}
	now := st.now()
	name := salvageArtifactName(child, now)
	rep.Salvaged = session.Salvaged{
		From:                 src,
		DamagedAtOffset:      d.Damage.Offset,
		DamagedBytes:         d.Damage.Bytes,
		IntactEventsExcluded: d.Damage.IntactEventsExcluded,
		Artifact:             filepath.Join(dir, name),
	}
	rep.ValidEvents, rep.Reason = d.ValidEvents, d.Damage.Reason
	intent, _ := json.Marshal(salvageIntent{Child: child, Artifact: name}) // two strings: never fails
	if err := durable.WriteFile(filepath.Join(dir, salvageIntentName), intent, 0o600); err != nil {
		return nil, SalvageReport{}, salvageDirErr(child, "cannot record the salvage in "+dir, err)
	}
	pending := filepath.Join(dir, salvagePendingName)
	if err := durable.WriteFile(pending, d.Damage.Tail, 0o600); err != nil {
		removeSalvageLeftovers(dir) // best effort: nothing names them
		return nil, SalvageReport{}, salvageDirErr(child, "cannot write the damaged bytes of "+strconv.Quote(src)+" to "+dir, err)
	}
	h := session.ForkHeader(d.Header, child, int64(prefix.Len()), now)
	s, err := st.createFrom(ctx, h, nil, func(o session.Options) (*session.Session, error) {
		return session.SalvageFork(ctx, o, prefix, rep.Salvaged, now)
	})
	if err != nil {
		removeSalvageLeftovers(dir) // best effort: no child names them
		return nil, SalvageReport{}, err
	}
	// The child is stored before its artifact gets its name; a failure
	// from here leaves the intent, which the next salvage finishes.
	if _, err := st.Flush(ctx, s); err != nil {
		return nil, SalvageReport{}, err
	}
	if err := os.Link(pending, rep.Artifact); err != nil {
		return nil, SalvageReport{}, salvageDirErr(child, "cannot name the artifact "+rep.Artifact, err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return nil, SalvageReport{}, salvageDirErr(child, "cannot sync the salvage directory "+dir, err)
	}
	if err := removeSalvageLeftovers(dir); err != nil {
		return nil, SalvageReport{}, salvageDirErr(child, "cannot sync the salvage directory "+dir, err)
	}
	return s, rep, nil
}

// salvageDirErr is the IO_ERROR of a salvage directory operation.
func salvageDirErr(child, what string, err error) error {
	return &sdk.Error{Code: sdk.CodeIOError, Op: "salvage", SessionID: child, Detail: what, Err: err}
}

// readDamaged reads the source through the backend's ReadDamaged and the
// restore pipeline and returns the backend's reply with the valid prefix,
// restored read-only.
// The prefix may end before a marker the whole log has, so its lineage is
// taken from the markers it holds.
func (st *Store) readDamaged(ctx context.Context, sr sdk.SalvageReader, src string) (sdk.Damaged, *session.Session, error) {
	// The header is known only when the read is done; the restore needs
	// only its id (its lineage comes from the prefix).
	opts := st.sessionOptions(sdk.Header{FormatVersion: sdk.FormatVersion, ID: src}, nil)
	rr, err := session.NewRestorer(ctx, opts, session.RestoreOptions{Source: session.FromStorage, Prefix: true})
	if err != nil {
		return sdk.Damaged{}, nil, err
	}
	var d sdk.Damaged
	v, err := restoreRead(ctx, rr, opts.MaxEventBytes, 0, func(fn func([][]byte) error) error {
		var rerr error
		d, rerr = sr.ReadDamaged(ctx, src, fn)
		return rerr
	})
	if err != nil {
		return sdk.Damaged{}, nil, err
	}
	dm := d.Damage
	if int64(v.Len()) != d.ValidEvents || (d.Corrupt && (dm.Offset < 0 || dm.Bytes < 0 || dm.IntactEventsExcluded < 0)) || d.Header.ID != src {
		return sdk.Damaged{}, nil, &sdk.Error{Code: sdk.CodeIOError, Op: "salvage", SessionID: src,
			Detail: "the backend's damage report contradicts itself: " + plural(int64(v.Len()), "event") + " read, " + strconv.FormatInt(d.ValidEvents, 10) +
				" reported valid, damage at " + strconv.FormatInt(dm.Offset, 10) + " of " + strconv.FormatInt(dm.Bytes, 10) + " bytes, header id " + strconv.Quote(d.Header.ID)}
	}
	return d, v, nil
}

// salvageIntact refuses to salvage a session whose log is intact.
func salvageIntact(src, why string) error {
	return &sdk.Error{Code: sdk.CodeInvalidBoundary, Op: "salvage", SessionID: src,
		Detail: "session " + strconv.Quote(src) + " is not damaged (" + why + "); salvage is for a CORRUPT_LOG session; use fork to copy an intact one"}
}

// plural renders a count of things: "1 event", "2 events".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.FormatInt(n, 10) + " " + thing + "s"
}
