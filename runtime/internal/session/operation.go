package session

import (
	"bytes"
	"context"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/envelope"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// heldOperation is where the log holds the events of one operation id
// (docs/format.md, "Operation ids"): count events from seq first. In a
// fork child whose fork point cut the operation, fewer of them may exist.
type heldOperation struct {
	first sdk.Seq
	count int64
}

// AppendOperation appends ins once under operation id (docs/format.md,
// "Operation ids"): as one atomic group whose first event stores the id
// and the number of events. It runs A1–A4, then A5–A9 on every member,
// then the operation id check, then expectedSeq (first ≥ 0 is the seq the
// first member must get, SEQ_CONFLICT otherwise; -1 accepts any), then
// A10a–A12 per member, as AppendGroup does.
//
// When the log already holds id with as many events, each byte-equal in
// its canonical type, data, surfaceOp, sourceEventSeqs and ignorable to
// the corresponding member of ins, nothing is appended and the original
// events are returned with replayed true (first is not checked: the
// operation already happened). Other events under a held id are
// OPERATION_CONFLICT with Meta "operationId", "firstSeq" and "count"; an
// id that is not 1–128 bytes of printable ASCII is OPERATION_ID_INVALID
// (the empty id before any other check, as it names no operation), and no
// events at all USAGE. Nothing changes on any error.
func (s *Session) AppendOperation(ctx context.Context, id string, first sdk.Seq, ins []AppendInput) (evs []Event, replayed bool, err error) {
	if id == "" {
		return nil, false, sdk.ValidateOperationID(id).(*sdk.Error).WithSession(s.id)
	}
	if len(ins) == 0 {
		return nil, false, sdk.Errorf(sdk.CodeUsage, "append", "an append with an operation id needs at least one event")
	}
	if err := s.writable(); err != nil {
		return nil, false, err
	}
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	e, evs, replayed, err := s.appendLocked(ctx, first, ins, id)
	if err == nil && evs == nil {
		evs = []Event{e}
	}
	return evs, replayed, err
}

// prepareOperation runs A5–A9 on every member of ins, to be appended from
// seq base, then the operation id check (docs/format.md, The order of
// checks). It returns the prepared records, the first carrying the
// operation member; or, for a replay, the original events and no records.
func (s *Session) prepareOperation(id string, base sdk.Seq, ins []AppendInput) ([]*record, []Event, error) {
	group := len(ins) > 1
	held, isHeld := s.ops[id]
	// A request/header's reason depends on whether a header precedes it:
	// for a replay, as of the original operation's first seq.
	seen := s.folds.header != nil
	if isHeld {
		seen = s.folds.firstHeader >= 0 && sdk.Seq(s.folds.firstHeader) < held.first
	}
	member := envelope.AppendOperation(nil, id, int64(len(ins)))
	recs := make([]*record, len(ins))
	for i := range ins {
		seq := base + sdk.Seq(i)
		var op []byte
		if i == 0 {
			op = member
		}
		r, err := s.prepare(ins[i], seq, op, seen)
		if err != nil {
			return nil, nil, s.memberError(err, seq, i, group)
		}
		seen = seen || r.typ == TypeRequestHeader
		recs[i] = r
	}
	if err := sdk.ValidateOperationID(id); err != nil {
		return nil, nil, err.(*sdk.Error).WithSession(s.id)
	}
	if !isHeld {
		return recs, nil, nil
	}
	if held.count == int64(len(recs)) {
		if evs := s.replay(held, recs); evs != nil {
			return nil, evs, nil
		}
	}
	f, c := strconv.FormatInt(int64(held.first), 10), strconv.FormatInt(held.count, 10)
	return nil, nil, &sdk.Error{Code: sdk.CodeOperationConflict, Op: "append", SessionID: s.id,
		Detail: "operation id " + strconv.Quote(id) + " is held by the " + c + " events from seq " + f + ", which differ from these " + strconv.Itoa(len(recs)) + "; nothing was appended",
		Meta:   map[string]string{"operationId": id, "firstSeq": f, "count": c}}
}

// replay returns the held operation's events when each is byte-equal to
// its member in recs after seq and time (the operation member included,
// which only the first of each has, with the same id and count), else nil:
// also when the log does not hold all of them (a fork point cut them).
func (s *Session) replay(held heldOperation, recs []*record) []Event {
	if held.first < s.surf.base || held.first+sdk.Seq(len(recs)) > s.nextSeq() {
		return nil
	}
	evs := make([]Event, len(recs))
	for i, r := range recs {
		stored := s.recordAt(held.first + sdk.Seq(i))
		if stored == nil || !bytes.Equal(stored.body(), r.body()) {
			return nil
		}
		evs[i] = Event{stored}
	}
	return evs
}

// body returns the envelope after its seq and time members: from the
// comma before "type" to the end.
func (r *record) body() []byte {
	var digits [20]byte
	n := len(`{"seq":`) + len(strconv.AppendInt(digits[:0], int64(r.seq), 10)) +
		len(`,"time":`) + len(strconv.AppendInt(digits[:0], r.time, 10))
	return r.env[n:]
}

// operation reads the operation member of a record with flagOperation:
// the last member, the only place its name occurs outside a string.
func (r *record) operation() (id string, count int64) {
	i := bytes.LastIndex(r.env, []byte(envelope.OperationMember))
	if i < 0 {
		return "", 0
	}
	doc, err := jsonv.Parse(r.env[i+len(envelope.OperationMember):len(r.env)-1], jsonv.Options{})
	if err != nil {
		return "", 0
	}
	id, count, _ = envelope.Operation(doc.Root())
	return id, count
}

// holdOperation adds the operation r opens to the index (commit).
func (s *Session) holdOperation(r *record) {
	id, count := r.operation()
	if id == "" {
		return
	}
	if s.ops == nil {
		s.ops = make(map[string]heldOperation)
	}
	s.ops[id] = heldOperation{first: r.seq, count: count}
}

// checkOperation refuses, on restore, a record that opens an operation
// whose id an earlier event opened already.
func (s *Session) checkOperation(r *record) error {
	if r.flags&flagOperation == 0 {
		return nil
	}
	id, _ := r.operation()
	if held, ok := s.ops[id]; ok {
		return sdk.Errorf(sdk.CodeEnvelopeInvalid, "restore", "operation id %s is opened by seq %d already", strconv.Quote(id), held.first)
	}
	return nil
}
