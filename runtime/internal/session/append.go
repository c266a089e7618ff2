package session

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// AppendInput is one event to append (docs/format.md): the harnesses'
// events.Input, so an input built with package events needs no conversion.
type AppendInput = events.Input

// Append validates in and commits it as the next event (docs/format.md). A
// rejected input returns an *sdk.Error and changes nothing: no seq is
// consumed and no state, snapshot or feed moves.
func (s *Session) Append(ctx context.Context, in AppendInput) (Event, error) {
	ins := [1]AppendInput{in}
	e, _, err := s.appendUnit(ctx, -1, ins[:])
	return e, err
}

// staged is a validated member of an append unit, not yet committed.
type staged struct {
	r  *record
	pl plan
}

// appendUnit runs steps A1–A12 (docs/format.md, The order of checks) for
// ins as one atomic unit: a single event for Append, the members of a group
// for AppendGroup. Each member is validated against the state that includes
// the members before it (their records are visible to A9–A11 through
// s.pending, and folded into a scratch loop state for A10a); nothing is committed unless every member passes, and then
// all members are committed and published together and handed to OnCommit
// in one call. first ≥ 0 is the seq the first member must get
// (SEQ_CONFLICT otherwise); -1 accepts any. It returns the first member's
// event and, for a group, all of them (a single event is not put in a
// slice unless OnCommit needs one).
func (s *Session) appendUnit(ctx context.Context, first sdk.Seq, ins []AppendInput) (Event, []Event, error) {
	if err := s.writable(); err != nil {
		return Event{}, nil, err
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	e, evs, _, err := s.appendLocked(ctx, first, ins, "")
	return e, evs, err
}

// appendLocked is appendUnit with the append lock held; with an operation
// id op it is AppendOperation's unit, and replayed reports a replay (evs
// are then the original events).
func (s *Session) appendLocked(ctx context.Context, first sdk.Seq, ins []AppendInput, op string) (_ Event, _ []Event, replayed bool, _ error) {
	if err := s.writable(); err != nil {
		return Event{}, nil, false, err
	}
	if len(ins) == 0 {
		return Event{}, nil, false, nil
	}
	if bp := s.opts.Backpressure; bp != nil {
		if err := bp(ctx); err != nil {
			return Event{}, nil, false, err
		}
	}
	if err := s.projectionRemoved(s.pub.Load()); err != nil {
		return Event{}, nil, false, err
	}
	group := len(ins) > 1
	var err error
	var one [1]staged
	members := one[:0]
	if group {
		members = make([]staged, 0, len(ins))
		defer s.clearPending()
	}
	base := s.nextSeq()
	var prepared []*record
	if op != "" {
		recs, original, err := s.prepareOperation(op, base, ins)
		if err != nil || original != nil {
			return Event{}, original, original != nil, err
		}
		prepared = recs
	}
	if first >= 0 && first != base {
		return Event{}, nil, false, SeqConflict(s.id, sdk.Offset(first), sdk.Offset(base))
	}
	surfaceMember, surfaceReads := -1, false
	// The loop state the members are checked against (A10a): the session's
	// own for a single event, folded at commit; a scratch copy for a group,
	// which sees the members before each one and becomes the session's at
	// commit.
	loop := &s.loop
	var scratch loopState
	if group {
		scratch = s.loop.clone()
		loop = &scratch
	}
	for i := range ins {
		seq := base + sdk.Seq(i)
		var r *record
		if prepared != nil {
			r = prepared[i]
		} else if r, err = s.prepare(ins[i], seq, nil, s.folds.header != nil || s.pendingHeader()); err != nil {
			return Event{}, nil, false, s.memberError(err, seq, i, group)
		}
		if group && (r.cls == classS || r.cls == classJ) {
			// An operation may hold any number of surface appends: their
			// planning reads no surface. A member whose planning does (a
			// replace, a projection, a developer/message) must be its
			// group's one surface or projection event.
			reads := r.cls == classJ || r.meta.op.Replace || r.typ == TypeDeveloperMessage
			switch {
			case surfaceMember >= 0 && op == "":
				return Event{}, nil, false, s.memberError(sdk.Errorf(sdk.CodeSurfaceOpNotAllowed, "session",
					"an atomic group may hold one surface or projection event; member %d (%s) follows member %d", i, r.typ, surfaceMember), seq, i, group)
			case surfaceMember >= 0 && (reads || surfaceReads):
				return Event{}, nil, false, s.memberError(sdk.Errorf(sdk.CodeSurfaceOpNotAllowed, "session",
					"an operation may hold many surface appends, but a replace, a projection or a developer/message only as its one surface or projection event; member %d (%s) follows member %d", i, r.typ, surfaceMember), seq, i, group)
			case surfaceMember < 0:
				surfaceMember = i
			}
			surfaceReads = surfaceReads || reads
		}
		if err := s.checkLoop(loop, r); err != nil {
			return Event{}, nil, false, s.memberError(err, seq, i, group)
		}
		pl, err := s.plan(ctx, r)
		if err != nil {
			return Event{}, nil, false, s.memberError(err, seq, i, group)
		}
		if len(s.opts.Relational) > 0 {
			events := s.eventsWithPending()
			for _, v := range s.opts.Relational {
				if err := v.CheckAppend(events, Event{r}); err != nil {
					return Event{}, nil, false, s.memberError(err, seq, i, group)
				}
			}
		}
		members = append(members, staged{r: r, pl: pl})
		if group {
			s.pending = append(s.pending, r)
			scratch.fold(r)
		}
	}
	if admit := s.opts.Admit; admit != nil {
		var n int64
		for _, m := range members {
			n += int64(len(m.r.env))
		}
		if err := admit(ctx, n); err != nil {
			return Event{}, nil, false, err
		}
	}
	if group {
		s.loop = scratch
	} else {
		s.loop.fold(members[0].r)
	}
	s.stateMu.Lock()
	for _, m := range members {
		s.commit(m.r, m.pl)
	}
	s.publish()
	s.stateMu.Unlock()
	cb := s.opts.OnCommit
	if cb == nil && !group {
		return Event{members[0].r}, nil, false, nil
	}
	evs := make([]Event, len(members))
	for i, m := range members {
		evs[i] = Event{m.r}
	}
	if cb == nil {
		return evs[0], evs, false, nil
	}
	cb(evs)
	if group {
		return evs[0], slices.Clone(evs), false, nil // the hook's slice stays the hook's
	}
	return evs[0], nil, false, nil
}

// AppendPluginRecord appends a plugin record plugin:<owner>/<record>
// (docs/plugins.md); it always sets ignorable.
func (s *Session) AppendPluginRecord(ctx context.Context, owner, record string, data json.RawMessage) (Event, error) {
	return s.Append(ctx, AppendInput{Type: PluginRecordPrefix + owner + "/" + record, Data: data, Ignorable: true})
}

// writable runs steps A1–A3.
func (s *Session) writable() error {
	if s.closed.Load() {
		return &sdk.Error{Code: sdk.CodeSessionClosed, Op: "session", SessionID: s.id, Detail: "the session was released; open it again to append"}
	}
	if s.readOnly {
		return &sdk.Error{Code: sdk.CodeSessionReadOnly, Op: "session", SessionID: s.id, Detail: "an inspect view is read-only; open the session to append"}
	}
	if cause := s.Fenced(); cause != nil {
		return &sdk.Error{Code: sdk.CodeSessionFenced, Op: "session", SessionID: s.id, Detail: "a final persistence failure fenced the session", Err: cause}
	}
	return nil
}

// prepare runs steps A5–A9 and returns the record to plan; op is the
// operation member its envelope ends with (nil: none), and headerSeen
// whether a request/header precedes it (docs/format.md).
func (s *Session) prepare(in AppendInput, seq sdk.Seq, op []byte, headerSeen bool) (*record, error) {
	cls, err := s.appendClass(in.Type, in.Ignorable)
	if err != nil {
		return nil, err
	}
	// A6: the data bytes.
	data := []byte(in.Data)
	if in.Data == nil {
		return nil, sdk.Errorf(sdk.CodePayloadInvalid, "session", "an input of type %q has no Data; Data must be exactly one JSON value", in.Type)
	}
	if max := sdk.MaxRawEventBytes(s.opts.MaxEventBytes); len(data) > max {
		return nil, sdk.Errorf(sdk.CodeEventTooLarge, "session", "data of type %q is %d bytes; the raw input cap is %d (2 × MaxEventBytes)", in.Type, len(data), max)
	}
	meta := surfaceMeta{}
	if in.SurfaceOp != nil {
		meta.opPresent, meta.opOK, meta.op = true, true, *in.SurfaceOp
	}
	if in.SourceEventSeqs != nil {
		meta.srcPresent, meta.srcOK, meta.sources = true, true, append([]sdk.Seq{}, in.SourceEventSeqs...)
	}
	r, err := buildEnvelope(seq, s.opts.Clock.NowMillis(), in.Type, data, &meta, in.Ignorable, op)
	if err != nil {
		return nil, err
	}
	// A7: surface metadata within the Seq domain.
	if op := meta.op; meta.opPresent && op.Replace && (!inSeqDomain(op.StartSeq) || !inSeqDomain(op.EndSeq)) {
		return nil, sdk.Errorf(sdk.CodeSurfaceOpInvalid, "session", "surfaceOp replace endpoints must be in 0 … 2^53−1; got startSeq %d, endSeq %d", op.StartSeq, op.EndSeq)
	}
	for _, src := range meta.sources {
		if !inSeqDomain(src) {
			return nil, sdk.Errorf(sdk.CodeSourcesInvalid, "session", "sourceEventSeqs element %d is outside 0 … 2^53−1", src)
		}
	}
	// A8: time within its domain and the size cap.
	if t := r.time; t < 0 || t > sdk.MaxSeq {
		return nil, sdk.Errorf(sdk.CodeInvalidSeq, "session", "clock time %d is outside 0 … 2^53−1", t)
	}
	if len(r.env) > s.opts.MaxEventBytes {
		return nil, sdk.Errorf(sdk.CodeEventTooLarge, "session", "canonical envelope of type %q is %d bytes; MaxEventBytes is %d", in.Type, len(r.env), s.opts.MaxEventBytes)
	}
	r.cls = cls
	// A9: event-local validation, then the bound on call ids, which only
	// appends check (a stored log is read as it is).
	if err := checkLocal(r, headerSeen); err != nil {
		return nil, err
	}
	if err := checkCallIDs(r); err != nil {
		return nil, err
	}
	return r, nil
}

func inSeqDomain(s sdk.Seq) bool { return s >= 0 && s <= sdk.MaxSeq }

// appendClass runs step A5: the type grammar, reservation, class and
// ignorable rules of docs/format.md (append side).
func (s *Session) appendClass(typ string, ignorable bool) (class, error) {
	if !validTypeName(typ) {
		return 0, sdk.Errorf(sdk.CodeEventTypeInvalid, "session", "type %s does not match ^[a-z][a-z0-9-]*(?:[/:][a-z0-9][a-z0-9._-]*)+$ within 128 bytes", strconv.Quote(typ))
	}
	if c, ok := coreClass(typ); ok {
		if c == classX {
			return 0, sdk.Errorf(sdk.CodeEventTypeReserved, "session", "type %q is written only by the store", typ)
		}
		if ignorable {
			return 0, sdk.Errorf(sdk.CodeIgnorableNotAllowed, "session", "core type %q must not be ignorable", typ)
		}
		return c, nil
	}
	if decl, ok := s.opts.PluginTypes[typ]; ok {
		if ignorable && !decl {
			return 0, sdk.Errorf(sdk.CodeIgnorableNotAllowed, "session", "plugin type %q is declared not ignorable", typ)
		}
		if !ignorable && decl {
			return 0, sdk.Errorf(sdk.CodeIgnorableRequired, "session", "plugin type %q is declared ignorable", typ)
		}
		return classP, nil
	}
	if strings.HasPrefix(typ, ProjectionPrefix) {
		owner, name, ok := splitOwned(typ, ProjectionPrefix)
		if !ok || !validPluginName(owner) || name == "" {
			return 0, sdk.Errorf(sdk.CodeEventTypeInvalid, "session", "projection type %q must be projection:<owner>/<name>", typ)
		}
		if _, found := s.lookupProjection(typ); !found {
			return 0, projectionRequired(typ, owner)
		}
		if ignorable {
			return 0, sdk.Errorf(sdk.CodeIgnorableNotAllowed, "session", "projection type %q must not be ignorable", typ)
		}
		return classJ, nil
	}
	if strings.HasPrefix(typ, PluginRecordPrefix) {
		owner, record, ok := splitOwned(typ, PluginRecordPrefix)
		if !ok || !validPluginName(owner) || !validRecordName(record) {
			return 0, sdk.Errorf(sdk.CodeEventTypeInvalid, "session", "plugin record type %q must be plugin:<owner>/<record> with owner [a-z0-9][a-z0-9._-]{0,63} and record [a-z0-9][a-z0-9._/-]*", typ)
		}
		if !ignorable {
			return 0, sdk.Errorf(sdk.CodeIgnorableRequired, "session", "plugin record %q must be ignorable", typ)
		}
		return classR, nil
	}
	if !ignorable {
		return 0, sdk.Errorf(sdk.CodeUnknownEventType, "session", "type %q is not known to this build; only ignorable events of unknown types may be appended", typ)
	}
	return classU, nil
}

// checkLocal runs the event-local validation of docs/format.md on the log
// s has so far, pending group members included.
func (s *Session) checkLocal(r *record) error {
	return checkLocal(r, s.folds.header != nil || s.pendingHeader())
}

// checkLocal runs the event-local validation of docs/format.md; headerSeen says
// whether a request/header precedes r (only a header's reason depends on it).
func checkLocal(r *record, headerSeen bool) error {
	switch r.cls {
	case classS, classB, classL, classX:
		if err := checkPayload(r.typ, r.dataView(), headerSeen); err != nil {
			return err
		}
	case classJ:
		if err := checkProjectionTargets(r.dataView(), r.seq); err != nil {
			return err
		}
	}
	if r.cls == classS {
		r.msg, r.yields = recordedMessage(r)
	}
	return nil
}
