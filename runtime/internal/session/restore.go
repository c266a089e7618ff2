package session

import (
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Source says where restored events come from; it decides how a failure is
// reported (docs/format.md).
type Source uint8

const (
	// FromStorage: failures are CORRUPT_LOG wrapping the rule's error.
	FromStorage Source = iota
	// FromSeed: a caller's seed; failures are SEED_INVALID wrapping it.
	FromSeed
)

// RestoreOptions tune Restore.
type RestoreOptions struct {
	Source Source
	// ReadOnly builds an inspect view that refuses appends.
	ReadOnly bool
	// PendingRepair counts trailing events that exist only in memory.
	PendingRepair int
	// Prefix says the events are a prefix of the session's log (a view as
	// of an earlier event): the header's lineage (isSeeded,
	// inheritedEventCount) is taken from the last {inherited: true} marker
	// among them instead of being checked against it, since the prefix may
	// end before the marker the whole log has.
	Prefix bool
	// Events, when known, is the number of events the restore will see
	// (the stored log's length): the log's arrays are sized for it once
	// instead of growing, which keeps a long restore from allocating them
	// several times over. A wrong hint costs only memory or growth.
	Events int
}

// Restore rebuilds a session from stored envelopes through the restore
// pipeline (docs/format.md): envelope, lossless JSON, S1, class rules, event-local
// validation, S2–S7, then the lineage rules of docs/architecture.md against
// opts.Header. Format refusals (FORMAT_*, PROJECTION_REQUIRED) are returned
// unwrapped, and so is PROJECTION_FAILED (a failing plugin is not a corrupt
// log); other failures are CORRUPT_LOG or SEED_INVALID (per ro.Source)
// wrapping the rule's error, with Index = the event's position.
// FirstLiveSeq of the result is its length.
func Restore(ctx context.Context, opts Options, ro RestoreOptions, envelopes [][]byte) (*Session, error) {
	r, err := NewRestorer(ctx, opts, ro)
	if err != nil {
		return nil, err
	}
	if err := r.Add(envelopes); err != nil {
		return nil, err
	}
	return r.Finish()
}

// maxSizeHint bounds RestoreOptions.Events, so that a damaged length
// cannot make a restore allocate without bound.
const maxSizeHint = 1 << 26

// Restorer runs the restore pipeline of Restore over envelopes as they
// arrive, so a reader can validate chunks while the next ones are read.
type Restorer struct {
	ctx context.Context
	s   *Session
	ro  RestoreOptions
	err error
	ck  *DecodedCheckpoint // the checkpoint in use; nil when none
}

// NewRestorer starts a restore; see Restore.
func NewRestorer(ctx context.Context, opts Options, ro RestoreOptions) (*Restorer, error) {
	s, err := newSession(opts, 0)
	if err != nil {
		return nil, err
	}
	if n := min(ro.Events, maxSizeHint); n > 0 {
		s.records = make([]*record, 0, n)
		s.surf.links = make([]link, 0, n)
		s.flat = make([]sdk.Seq, 0, n/2)
		s.transcript = make([]TranscriptEntry, 0, n/2)
	}
	return &Restorer{ctx: ctx, s: s, ro: ro}, nil
}

// Add validates and folds the next envelopes. After an error every later
// call returns it.
func (r *Restorer) Add(envelopes [][]byte) error {
	if r.err != nil {
		return r.err
	}
	s := r.s
	for _, b := range envelopes {
		i := len(s.records)
		if r.ck != nil && i < r.ck.events {
			if err := r.trusted(b); err != nil {
				r.err = s.restoreError(r.ro.Source, i, sdk.Seq(i), err)
				return r.err
			}
			continue
		}
		rec, err := parseEnvelope(b, s.opts.MaxEventBytes)
		if err == nil {
			err = s.restoreOne(r.ctx, rec, sdk.Seq(i), true)
		}
		if err != nil {
			r.err = s.restoreError(r.ro.Source, i, sdk.Seq(i), err)
			return r.err
		}
	}
	return nil
}

// AddEvents is Add for envelopes the caller parsed with a StoredParser (on
// other goroutines, say): the events are validated and folded the same
// way, skipping the rules the StoredParser already ran. The restorer takes the
// events over: the caller must not hand them to anything else.
func (r *Restorer) AddEvents(events []Event) error {
	if r.err != nil {
		return r.err
	}
	s := r.s
	for _, e := range events {
		i := len(s.records)
		if r.ck != nil && i < r.ck.events {
			if err := r.Add([][]byte{e.r.env}); err != nil {
				return err
			}
			continue
		}
		if err := s.restoreOne(r.ctx, e.r, sdk.Seq(i), true); err != nil {
			r.err = s.restoreError(r.ro.Source, i, sdk.Seq(i), err)
			return r.err
		}
	}
	return nil
}

// Finish checks the lineage and returns the session; FirstLiveSeq is its
// length.
func (r *Restorer) Finish() (*Session, error) {
	if r.err != nil {
		return nil, r.err
	}
	return r.s.finishRestore(r.ro)
}

// RestoreEvents is Restore over events that were already parsed (a seed, a
// fork prefix, a stored log plus its closers). The events are re-validated;
// the Event values are shared, never changed.
func RestoreEvents(ctx context.Context, opts Options, ro RestoreOptions, events []Event) (*Session, error) {
	s, err := newSession(opts, 0)
	if err != nil {
		return nil, err
	}
	for i, e := range events {
		if err := s.restoreOne(ctx, e.r, sdk.Seq(i), false); err != nil {
			return nil, s.restoreError(ro.Source, i, sdk.Seq(i), err)
		}
	}
	return s.finishRestore(ro)
}

func (s *Session) finishRestore(ro RestoreOptions) (*Session, error) {
	if ro.Prefix {
		h := &s.opts.Header
		h.IsSeeded, h.InheritedEventCount = s.folds.inherited >= 0, max(s.folds.inherited, 0)
	}
	if err := s.checkLineage(); err != nil {
		code := sdk.CodeCorruptLog
		if ro.Source == FromSeed {
			code = sdk.CodeSeedInvalid
		}
		return nil, sdk.Wrap(code, "restore", err).WithSession(s.id)
	}
	s.readOnly = ro.ReadOnly
	s.pendingRepair = ro.PendingRepair
	s.refoldLoop()
	s.publish()
	s.firstLive = s.Len()
	return s, nil
}

// checkLineage runs the lineage rules of docs/architecture.md.
func (s *Session) checkLineage() error {
	h := s.opts.Header
	inherited := s.folds.inherited
	switch {
	case h.IsSeeded && inherited < 0:
		return sdk.Errorf(sdk.CodeSeedInvalid, "restore", "the header says isSeeded but the log has no {inherited: true} session/end-seed")
	case !h.IsSeeded && inherited >= 0:
		return sdk.Errorf(sdk.CodeSeedInvalid, "restore", "the log has an {inherited: true} session/end-seed at seq %d but the header is not seeded", inherited)
	case !h.IsSeeded && h.InheritedEventCount != 0:
		return sdk.Errorf(sdk.CodeSeedInvalid, "restore", "an unseeded header must not carry inheritedEventCount (got %d)", h.InheritedEventCount)
	case h.IsSeeded && h.InheritedEventCount != inherited:
		return sdk.Errorf(sdk.CodeSeedInvalid, "restore", "header inheritedEventCount %d differs from the seq %d of the last inherited marker", h.InheritedEventCount, inherited)
	}
	return nil
}

// restoreOne runs the restore steps for one parsed event and commits it.
// A record the caller does not own (shared with another session) is copied
// before the validation fields are written.
func (s *Session) restoreOne(ctx context.Context, src *record, expected sdk.Seq, owned bool) error {
	if src.seq != expected { // S1
		return sdk.Errorf(sdk.CodeSeqNotContiguous, "restore", "event seq %d is not the expected next seq %d", src.seq, expected)
	}
	r := src
	if !owned {
		c := *src
		r = &c
	}
	if r.flags&flagChecked != 0 {
		r.flags &^= flagChecked // the StoredParser ran the class and local rules; a later restore of this record runs them again
	} else {
		cls, err := s.restoreClass(r.typ, r.ignorable)
		if err != nil {
			return err
		}
		r.cls = cls
		if err := s.checkLocal(r); err != nil {
			if !(s.surf.base > 0 && errors.Is(err, sdk.CodeHeaderReasonInvalid)) {
				return err
			}
			// A window cannot tell whether a header precedes it.
		}
	}
	if err := s.checkOperation(r); err != nil {
		return err
	}
	pl, err := s.plan(ctx, r)
	if err != nil {
		return err
	}
	s.stateMu.Lock()
	s.commit(r, pl)
	s.stateMu.Unlock()
	return nil
}

// restoreClass runs the class rules of docs/format.md, restore side.
func (s *Session) restoreClass(typ string, ignorable bool) (class, error) {
	if !validTypeName(typ) {
		return 0, sdk.Errorf(sdk.CodeEventTypeInvalid, "restore", "type %q does not match the type grammar", typ)
	}
	known := classU
	if c, ok := coreClass(typ); ok {
		known = c
	} else if decl, ok := s.opts.PluginTypes[typ]; ok {
		if ignorable != decl {
			code := sdk.CodeIgnorableNotAllowed
			if decl {
				code = sdk.CodeIgnorableRequired
			}
			return 0, sdk.Errorf(code, "restore", "plugin type %q is declared with ignorable=%v", typ, decl)
		}
		return classP, nil
	} else if owner, _, ok := splitOwned(typ, ProjectionPrefix); ok {
		if _, found := s.lookupProjection(typ); !found {
			return 0, projectionRequired(typ, owner)
		}
		known = classJ
	} else if owner, _, ok := splitOwned(typ, PluginRecordPrefix); ok && ignorable && s.opts.Plugins[owner] {
		return classR, nil
	}
	if known == classU {
		if !ignorable {
			return 0, sdk.Errorf(sdk.CodeFormatUnknownEventType, "restore", "type %q is not ignorable and unknown to this build: written by a newer build or by a plugin that is not loaded", typ)
		}
		return classU, nil
	}
	if ignorable {
		return 0, sdk.Errorf(sdk.CodeIgnorableNotAllowed, "restore", "type %q must not be ignorable", typ)
	}
	return known, nil
}

// restoreError wraps a rule's error per docs/format.md.
func (s *Session) restoreError(src Source, index int, seq sdk.Seq, err error) error {
	switch sdk.CodeOf(err) {
	case sdk.CodeFormatTooNew, sdk.CodeFormatUnsupported, sdk.CodeFormatUnknownEventType, sdk.CodeFormatMigrationRefused, sdk.CodeProjectionRequired,
		sdk.CodeProjectionFailed: // a failing plugin is not a corrupt log
		if e, ok := err.(*sdk.Error); ok {
			return e.WithSession(s.id).WithSeq(int64(seq)).WithIndex(index)
		}
		return err
	}
	code := sdk.CodeCorruptLog
	if src == FromSeed {
		code = sdk.CodeSeedInvalid
	}
	return sdk.Wrapf(code, "restore", err, "event %d breaks %s", index, sdk.CodeOf(err)).WithSession(s.id).WithSeq(int64(seq)).WithIndex(index)
}

// SurfaceFold is the result of folding a log from scratch (docs/format.md).
type SurfaceFold struct {
	Nodes        []sdk.Seq
	Replacements []Replacement
	Projected    map[sdk.Seq]MessageView
}

// Fold replays events (contiguous from seq 0) with the given projection
// definitions and returns the surface, the replacements and the projected
// messages. It runs the restore steps and returns the first rule's error
// unwrapped, with Index set.
func Fold(ctx context.Context, events []Event, defs Projections) (SurfaceFold, error) {
	w := NewSurface(0, defs)
	for _, e := range events {
		if err := w.Apply(ctx, e); err != nil {
			return SurfaceFold{}, err
		}
	}
	return w.Fold(), nil
}

// Window folds a window of a log starting at a base seq (docs/format.md): a
// replacement reaching before the window fails with REPLACE_START_NOT_FOUND
// or REPLACE_END_NOT_FOUND. Not safe for concurrent use.
type Window struct{ s *Session }

// NewSurface returns an empty window whose first event has seq base.
func NewSurface(base sdk.Seq, defs Projections) *Window {
	s, err := newSession(Options{Projections: defs}, base)
	if err != nil {
		panic(err) // the zero options are always valid
	}
	return &Window{s}
}

// Apply folds the next event of the window.
func (w *Window) Apply(ctx context.Context, e Event) error {
	index := len(w.s.records)
	if err := w.s.restoreOne(ctx, e.r, w.s.nextSeq(), false); err != nil {
		if se, ok := err.(*sdk.Error); ok {
			return se.WithIndex(index).WithSeq(int64(e.r.seq))
		}
		return err
	}
	return nil
}

// Fold returns the window's current fold.
func (w *Window) Fold() SurfaceFold {
	s := w.s
	f := SurfaceFold{Nodes: s.surf.appendNodes(nil), Replacements: append([]Replacement{}, s.replacements...)}
	if len(s.projected) > 0 {
		f.Projected = make(map[sdk.Seq]MessageView, len(s.projected))
		for seq, m := range s.projected {
			f.Projected[seq] = MessageView{m}
		}
	}
	return f
}
