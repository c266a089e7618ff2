package session

import (
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// ForkSeed builds the seed of a fork child (docs/architecture.md):
// the byte-identical prefix events[0..boundary], a session/end-seed
// {inherited: true} marker stamped with the boundary event's time (now when
// the prefix is empty), and the forked closers of an open cut. It returns the
// seed and the child's inheritedEventCount. events must start at seq 0.
// boundary nil means the last event.
func ForkSeed(events []Event, boundary *sdk.Seq, now int64) (seed []Event, inherited int64, err error) {
	b, err := forkBoundary(int64(len(events)), func(i int64) sdk.Seq { return events[i].r.seq }, boundary)
	if err != nil {
		return nil, 0, err
	}
	seed = make([]Event, 0, b+8)
	seed = append(seed, events[:b+1]...)
	return appendForkTail(seed, now), b + 1, nil
}

// ForkBoundary resolves a fork's inclusive boundary over the events of a
// source (docs/architecture.md): nil is the last event (-1 for an empty
// log); a boundary outside the Seq domain, past the last event, or at an
// event whose seq is not its position is INVALID_BOUNDARY. The child's
// inheritedEventCount is the result plus one.
func ForkBoundary(events EventList, boundary *sdk.Seq) (int64, error) {
	return forkBoundary(int64(len(events.records)), func(i int64) sdk.Seq { return events.records[i].seq }, boundary)
}

// forkBoundary is ForkBoundary over n events whose seqs seqAt returns.
func forkBoundary(n int64, seqAt func(int64) sdk.Seq, boundary *sdk.Seq) (int64, error) {
	switch {
	case boundary == nil && n == 0:
		return -1, nil
	case boundary == nil:
		if seqAt(n-1) != sdk.Seq(n-1) {
			return 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "the last event at position %d has seq %d; the source log must start at seq 0", n-1, seqAt(n-1))
		}
		return n - 1, nil
	case *boundary < 0 || *boundary > sdk.MaxSeq:
		return 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "boundary %d is outside 0 … 2^53−1", *boundary)
	case int64(*boundary) >= n:
		last := "none"
		if n > 0 {
			last = strconv.FormatInt(n-1, 10)
		}
		return 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "boundary %d is past the last seq (%s)", *boundary, last)
	}
	b := int64(*boundary)
	if seqAt(b) != sdk.Seq(b) {
		return 0, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "event at position %d has seq %d", b, seqAt(b))
	}
	return b, nil
}

// appendForkTail appends to a fork's prefix (or to its suffix from its
// last turn boundary: the closers depend on nothing before it) the
// {inherited: true} marker, stamped with the last prefix event's time (now
// when the prefix is empty), and the forked closers of an open cut.
func appendForkTail(prefix []Event, now int64) []Event {
	markerSeq, markerTime := sdk.Seq(0), now
	if n := len(prefix); n > 0 {
		markerSeq, markerTime = prefix[n-1].r.seq+1, prefix[n-1].r.time
	}
	seed := append(prefix, mustEvent(markerSeq, markerTime, TypeSessionEndSeed, []byte(`{"inherited":true}`), nil))
	return append(seed, OpenTurnClosers(seed, Forked)...)
}

// turnTail returns the events of prefix from its last turn/start or
// turn/end on (its last event when it has neither): all OpenTurnClosers
// reads of it.
func turnTail(prefix []*record) []Event {
	from := len(prefix) - 1
	for from > 0 && prefix[from].typ != TypeTurnStart && prefix[from].typ != TypeTurnEnd {
		from--
	}
	out := make([]Event, 0, len(prefix)-max(from, 0)+8)
	for _, r := range prefix[max(from, 0):] {
		out = append(out, Event{r})
	}
	return out
}

// Fork builds the live child of a fork in memory from a source the host
// holds validated (docs/architecture.md): source's events [0, boundary]
// (boundary from ForkBoundary; -1 for an empty prefix), then the marker and
// closers of ForkSeed. opts.Header is the child's (ForkHeader). The prefix
// is not validated again and its events are shared with the source, never
// copied: only the folds are built for it (surface, header, tool history,
// transcript, projections). The marker and closers run the restore
// pipeline, and the lineage is checked; a failure there is SEED_INVALID.
// source must have been built with the same PluginTypes, Plugins and
// Projections as opts, since the prefix keeps the classes it was validated
// with. FirstLiveSeq of the child is its length.
func Fork(ctx context.Context, opts Options, source *Session, boundary int64, now int64) (*Session, error) {
	return fork(ctx, opts, source, boundary, now, nil)
}

// fork is Fork; extra, when set, returns the events that follow the
// marker and closers, the first at seq next, which are validated with
// them.
func fork(ctx context.Context, opts Options, source *Session, boundary int64, now int64, extra func(next sdk.Seq) []Event) (*Session, error) {
	prefix := source.Events().records
	if boundary >= int64(len(prefix)) || boundary < -1 {
		return nil, sdk.Errorf(sdk.CodeInvalidBoundary, "fork", "boundary %d is outside the source's %d events", boundary, len(prefix))
	}
	prefix = prefix[:boundary+1]
	s, err := newSession(opts, 0)
	if err != nil {
		return nil, err
	}
	// The folds' arrays are sized for the prefix once, as a restore
	// sizes them for the stored length.
	n := len(prefix) + 8
	s.records = make([]*record, 0, n)
	s.surf.links = make([]link, 0, n)
	s.flat = make([]sdk.Seq, 0, n/2)
	s.transcript = make([]TranscriptEntry, 0, n/2)
	if err := s.foldPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	cut := turnTail(prefix)
	tail := appendForkTail(cut, now)[len(cut):]
	if extra != nil {
		tail = append(tail, extra(sdk.Seq(len(prefix)+len(tail)))...)
	}
	for _, e := range tail {
		if err := s.restoreOne(ctx, e.r, s.nextSeq(), true); err != nil {
			return nil, s.restoreError(FromSeed, len(s.records), s.nextSeq(), err)
		}
	}
	return s.finishRestore(RestoreOptions{Source: FromSeed})
}

// foldPrefix folds a fork's validated prefix into the new session s,
// which nobody else holds yet: stateMu is taken once for all of it.
func (s *Session) foldPrefix(ctx context.Context, prefix []*record) error {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	for _, r := range prefix {
		pl, err := s.foldPlan(ctx, r)
		if err != nil {
			return s.restoreError(FromSeed, int(r.seq), r.seq, err)
		}
		s.commit(r, pl)
	}
	return nil
}

// foldPlan is the plan of an event the host already validated: the
// surface effect of steps S2–S7 without their checks. A projection (S6)
// is decided again, as every restore decides it.
func (s *Session) foldPlan(ctx context.Context, r *record) (plan, error) {
	switch {
	case r.cls == classU:
		return plan{kind: planOpaque}, nil
	case r.cls == classJ:
		return s.planProjection(ctx, r)
	case r.cls != classS:
		return plan{kind: planNone}, nil
	case !r.meta.op.Replace:
		return plan{kind: planAppend}, nil
	}
	return plan{kind: planReplace, shadowed: s.surf.span(r.meta.op.StartSeq, r.meta.op.EndSeq)}, nil
}

// ForkHeader returns the header of a fork child (docs/architecture.md step 4),
// also used for a salvage child. The child inherits the source's Protocol
// (docs/format.md, "The agent-loop protocol") and Labels (docs/storage.md;
// headers share the map, which no one changes).
func ForkHeader(source sdk.Header, childID string, inherited int64, now int64) sdk.Header {
	return sdk.Header{
		FormatVersion:       sdk.FormatVersion,
		ID:                  childID,
		CreatedAt:           now,
		CWD:                 source.CWD,
		ParentSession:       source.ID,
		IsSeeded:            true,
		InheritedEventCount: inherited,
		Protocol:            source.Protocol,
		Labels:              source.Labels,
	}
}

// SeedWithMarker checks a caller's replay seed for Create (docs/architecture.md): it
// must not contain an {inherited: true} marker (that is Fork's), and gets a
// session/end-seed {} stamped now unless it already ends with one. The seed's
// own rules are checked when it is restored.
func SeedWithMarker(seed []Event, now int64) ([]Event, error) {
	for i, e := range seed {
		if e.r.typ == TypeSessionEndSeed {
			if b, _ := e.r.dataView().Get("inherited").Bool(); b {
				return nil, sdk.Errorf(sdk.CodeSeedInvalid, "create", "a replay seed must not contain an {inherited: true} session/end-seed; use Fork").
					WithSeq(int64(e.r.seq)).WithIndex(i)
			}
		}
	}
	out := append(make([]Event, 0, len(seed)+1), seed...)
	if len(seed) > 0 && seed[len(seed)-1].r.typ == TypeSessionEndSeed {
		return out, nil
	}
	return append(out, mustEvent(sdk.Seq(len(seed)), now, TypeSessionEndSeed, []byte(`{}`), nil)), nil
}

// ResumeBatch returns what Store.Open appends to a stored log as one batch
// (docs/architecture.md): nothing for an empty log with no torn tail
// (its first event is the caller's, at seq 0, as after Create);
// otherwise session/recovered when the open cut a torn tail
// (torn.Bytes > 0), the interrupted closers, then a session/end-seed {}
// unless the log then ends with one (always after a session/recovered).
func ResumeBatch(stored []Event, torn sdk.Torn, now int64) []Event {
	if len(stored) == 0 && torn.Bytes == 0 {
		return nil
	}
	log := stored
	var batch []Event
	if torn.Bytes > 0 {
		b := []byte(`{"tornBytes":` + strconv.FormatInt(torn.Bytes, 10) + `,"tornFromSeq":` + strconv.FormatInt(int64(torn.FromSeq), 10))
		if torn.Artifact != "" {
			b = append(b, `,"artifact":`...)
			b = jsonv.AppendString(b, torn.Artifact)
		}
		b = append(b, '}')
		rec := mustEvent(sdk.Seq(len(stored)), now, TypeSessionRecovered, b, nil)
		batch = append(batch, rec)
		log = append(append(make([]Event, 0, len(stored)+1), stored...), rec)
	}
	batch = append(batch, InterruptedTurnClosers(log)...)
	last := log[len(log)-1]
	if len(batch) > 0 {
		last = batch[len(batch)-1]
	}
	if last.r.typ == TypeSessionEndSeed {
		return batch
	}
	return append(batch, mustEvent(sdk.Seq(len(stored)+len(batch)), now, TypeSessionEndSeed, []byte(`{}`), nil))
}
