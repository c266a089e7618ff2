package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/frames"
)

// RepairReport says what Open repaired (docs/architecture.md).
type RepairReport struct {
	Torn    sdk.Torn // the torn tail the primary's write open cut; zero when none
	Closers int      // closer events appended for an interrupted turn
	// Appended counts the events the open appended before the session
	// went live (session/recovered after a cut, the closers, the
	// lifecycle marker): they are its last ones. 0 when none.
	Appended int
	// Continued is set when OpenOptions.Continue was honoured: nothing was
	// appended and the log's open turn goes on. It stays false when
	// Continue was asked for but a torn tail forced the repair.
	Continued bool
}

// OpenOptions are the choices of OpenWith; the zero value is Open.
type OpenOptions struct {
	// Continue opens for write without the interrupted-turn closers and
	// the lifecycle marker: the caller asserts that it goes on with the
	// turn the stored log ends in (a second writer of one turn, such as
	// a later `append` of the same agent step). When the write open cut a
	// torn tail the previous writer crashed, so Continue is ignored and
	// the normal repair runs (RepairReport.Continued says which happened).
	Continue bool
	// Expect, when set, is the seq the caller's first event must get after
	// the open: the stored length plus what the open itself appends; nil
	// checks nothing. Another seq is SEQ_CONFLICT and nothing is written
	// (see OpenAt).
	Expect *sdk.Offset
}

// Open resumes a stored session (docs/architecture.md): the primary's write open,
// a full read through the restore pipeline, then one batch — session/recovered
// when a torn tail was cut, the interrupted closers and the lifecycle marker —
// appended and flushed before the session goes live; mirrors are caught up
// from the primary. An empty stored log with no torn tail gets no batch: its
// first event is the caller's, at seq 0, as after Create. On failure
// ownership is released.
func (st *Store) Open(ctx context.Context, id string) (*session.Session, RepairReport, error) {
	return st.OpenWith(ctx, id, OpenOptions{})
}

// OpenAt is Open for a caller that expects its first event to get seq want
// (docs/architecture.md): the stored length plus the open's own batch is compared
// once the write claim is held and the log is read, before the batch is
// written, so no other writer can change it in between; the error's counts
// come from that one read. Another seq is SEQ_CONFLICT (Meta "expected"
// and "actual"), the claim is released and nothing is appended. Nor is a
// torn tail cut: the write open would cut it before reading the log, so
// a log whose read open finds one is checked read-only first (see
// checkBeforeCut).
func (st *Store) OpenAt(ctx context.Context, id string, want sdk.Offset) (*session.Session, RepairReport, error) {
	return st.OpenWith(ctx, id, OpenOptions{Expect: &want})
}

// OpenWith is Open with options: a first-seq check (Expect, as OpenAt)
// and continuing the open turn without a repair batch (Continue).
func (st *Store) OpenWith(ctx context.Context, id string, opts OpenOptions) (*session.Session, RepairReport, error) {
	want := opts.Expect
	var rep RepairReport
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, rep, err
	}
	if err := st.awaitRelease(ctx, id); err != nil {
		return nil, rep, err
	}
	if _, ok := st.Get(id); ok {
		return nil, rep, &sdk.Error{Code: sdk.CodeAlreadyOwned, Op: "open", SessionID: id, Detail: "the session is live in this store"}
	}
	p, ok := st.primary()
	if !ok {
		return nil, rep, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "open", SessionID: id, Detail: "no persistence backend is configured"}
	}
	sl, err := st.takeSlot("open", id)
	if err != nil {
		return nil, rep, err
	}
	defer sl.done()
	if want != nil {
		if err := st.checkBeforeCut(ctx, p, id, *want, opts.Continue); err != nil {
			return nil, rep, err
		}
	}
	o, err := p.Persistence.Open(ctx, id, sdk.AccessWrite)
	if err != nil {
		return nil, rep, err
	}
	prim := &backend{name: p.Name, p: p.Persistence, primary: true, handle: o.Handle}
	fail := func(err error) (*session.Session, RepairReport, error) {
		st.closeBackends([]*backend{prim})
		return nil, RepairReport{}, err
	}
	ls := &live{space: make(chan struct{})}
	s, covered, err := st.restoreFrom(ctx, prim, o, st.sessionOptions(o.Header, ls))
	if err != nil {
		return fail(err)
	}
	ls.checkpointed.Store(int64(covered))
	if o.Torn.Bytes > 0 {
		rep.Torn = o.Torn
	}
	batch := st.openBatch(s.Events().Slice(), rep.Torn, opts.Continue)
	rep.Continued = opts.Continue && rep.Torn.Bytes == 0
	if err := checkFirstSeq(id, want, s.Len(), len(batch)); err != nil {
		return fail(err)
	}
	rep.Appended = len(batch)
	for _, e := range batch {
		switch e.Type() {
		case session.TypeToolResult, session.TypeStepEnd, session.TypeTurnEnd:
			rep.Closers++
		}
	}
	if err := ls.ctl.Extend(ctx, batch, session.FromStorage); err != nil {
		return fail(err)
	}
	// The session is stored and an acknowledged Append is durable: the
	// repair batch needs no backend Flush.
	if err := appendAll(ctx, prim, batch, st.opts.RPCMaxBytes); err != nil {
		return fail(err)
	}
	if rep.Torn.Bytes > 0 || rep.Closers > 0 {
		st.log.Info("session repaired at open", "session", id, "torn_bytes", rep.Torn.Bytes, "torn_from_seq", rep.Torn.FromSeq, "closers", rep.Closers)
	}
	ls.s = s
	last := sdk.Cursor(s.Len()) - 1
	ls.queues = append(ls.queues, newQueue(st, ls, prim, last, true))
	for _, m := range st.opts.Backends[1:] {
		mb, err := st.catchUp(ctx, m, o.Header, s.Events())
		q := newQueue(st, ls, mb, last, true)
		if err != nil {
			q.mu.Lock()
			q.setFinal(err)
			q.mu.Unlock()
		}
		ls.queues = append(ls.queues, q)
	}
	if err := st.goLive(ls); err != nil {
		st.stopQueues(ls)
		var bs []*backend
		for _, q := range ls.queues {
			bs = append(bs, q.b)
		}
		st.closeBackends(bs)
		return nil, RepairReport{}, err
	}
	return s, rep, nil
}

// restoreFrom reads a whole stored log through the restore pipeline,
// through the backend's checkpoint when it has one that matches (see
// restoreLog); covered is the length the checkpoint used covers, 0 when
// none was.
func (st *Store) restoreFrom(ctx context.Context, b *backend, o sdk.Opened, opts session.Options) (s *session.Session, covered sdk.Offset, err error) {
	return st.restoreLog(ctx, b, o, opts, session.RestoreOptions{Source: session.FromStorage}, -1)
}

// restoreLog restores the first n events of the opened log (all of them
// when n < 0) with ro, through the backend's checkpoint when it has one
// that matches. A checkpoint never fails a read: without one, or when the
// restore through it fails, the log is folded from the start.
func (st *Store) restoreLog(ctx context.Context, b *backend, o sdk.Opened, opts session.Options, ro session.RestoreOptions, n int64) (s *session.Session, covered sdk.Offset, err error) {
	if n < 0 {
		n = int64(o.NextSeq)
	}
	if ck := st.checkpointOf(ctx, b, o, opts); ck != nil {
		s, err := st.restoreOnce(ctx, b, o, opts, ro, n, ck)
		if err == nil {
			st.log.Debug("restored through the checkpoint", "session", o.Header.ID, "backend", b.name, "events", int64(ck.Events()))
			return s, min(ck.Events(), sdk.Offset(n)), nil
		}
		if ctx.Err() != nil {
			return nil, 0, err
		}
		st.log.Warn("restore through the checkpoint failed; folding the log from the start", "session", o.Header.ID, "backend", b.name, "err", err)
	}
	s, err = st.restoreOnce(ctx, b, o, opts, ro, n, nil)
	return s, 0, err
}

// restoreOnce is one read of the log's first n events through the
// restore pipeline, with ck (nil for none).
func (st *Store) restoreOnce(ctx context.Context, b *backend, o sdk.Opened, opts session.Options, ro session.RestoreOptions, n int64, ck *session.DecodedCheckpoint) (*session.Session, error) {
	ro.Events = int(n)
	r, err := session.NewRestorer(ctx, opts, ro)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return r.Finish()
	}
	trusted := 0
	if ck != nil {
		r.UseCheckpoint(ck)
		trusted = int(min(int64(ck.Events()), n))
	}
	return restoreRead(ctx, r, opts.MaxEventBytes, trusted, func(fn func([][]byte) error) error {
		return readLog(ctx, b.p, o, n, fn)
	})
}

// readLog reads the opened log's first n events, as Read would send them:
// through the backend's stored frames, decoded here, when it hands them
// over (sdk.FrameReader), else through Read.
func readLog(ctx context.Context, p sdk.Persistence, o sdk.Opened, n int64, fn func([][]byte) error) error {
	if fr, ok := capability(p, frameReaderAccessor.FrameReader); ok {
		framed, err := frames.Read(ctx, fr, o.Header.ID, o.Handle, 0, sdk.Offset(n), fn)
		if framed || err != nil {
			return err
		}
	}
	return p.Read(ctx, o.Handle, 0, n, fn)
}

// checkpointOf returns the backend's checkpoint of the opened session when
// it has one this host can use, else nil.
func (st *Store) checkpointOf(ctx context.Context, b *backend, o sdk.Opened, opts session.Options) *session.DecodedCheckpoint {
	c, ok := capability(b.p, checkpointerAccessor.Checkpointer)
	if !ok {
		return nil
	}
	events, data, found, err := c.ReadCheckpoint(ctx, o.Handle)
	if err != nil || !found || events > o.NextSeq {
		if err != nil {
			st.log.Debug("no checkpoint", "session", o.Header.ID, "backend", b.name, "err", err)
		}
		return nil
	}
	ck, err := session.DecodeCheckpoint(data, opts)
	if err != nil || ck.Events() != events {
		st.log.Debug("checkpoint not usable", "session", o.Header.ID, "backend", b.name, "err", err)
		return nil
	}
	return ck
}

// writeCheckpoints stores s's checkpoint in every backend of bs that keeps
// them, once its log is durable there and long enough to be worth it; a
// failure is logged, never returned (the log is what counts).
//
// It reports whether the primary (bs[0]) stored it.
func (st *Store) writeCheckpoints(ctx context.Context, s *session.Session, bs []*backend) bool {
	if s.Len() < checkpointMinEvents {
		return false
	}
	data, events, ok := s.Checkpoint()
	if !ok {
		return false
	}
	stored := false
	for i, b := range bs {
		c, isCk := capability(b.p, checkpointerAccessor.Checkpointer)
		if !isCk {
			continue
		}
		if err := c.WriteCheckpoint(ctx, b.handle, events, data); err != nil {
			st.log.Debug("checkpoint not written", "session", s.ID(), "backend", b.name, "err", err)
			continue
		}
		stored = stored || i == 0
	}
	return stored
}

// checkpointMinEvents is the log length from which a released session
// gets a checkpoint: below it, folding the log is as fast as reading one.
const checkpointMinEvents = 1024

// appendAll appends events to a backend in batches of at most
// rpcsize.MaxCopyBatchBytes.
func appendAll(ctx context.Context, b *backend, events []session.Event, rpcMax int) error {
	return eachBatch(events, rpcMax, func(first sdk.Seq, part [][]byte) error {
		_, err := b.p.Append(ctx, b.handle, first, part)
		return err
	})
}

// eachBatch calls fn with consecutive batches of events, each of at most
// rpcsize.MaxCopyBatchBytes, and their first seq.
func eachBatch(events []session.Event, rpcMax int, fn func(first sdk.Seq, part [][]byte) error) error {
	limit := rpcsize.MaxCopyBatchBytes(rpcMax)
	for i := 0; i < len(events); {
		rest := events[i:]
		n := rpcsize.AppendBatchLen(len(rest), limit, func(j int) int { return rest[j].EnvelopeLen() })
		part := make([][]byte, n)
		for j := range part {
			part[j] = rest[j].Envelope()
		}
		if err := fn(events[i].Seq(), part); err != nil {
			return err
		}
		i += n
	}
	return nil
}

// catchUp brings a mirror up to the primary's log at Open (docs/architecture.md): a
// missing session is created, a mirror behind gets the rest by CAS appends,
// a mirror ahead or with a different last event is reported diverged.
func (st *Store) catchUp(ctx context.Context, m Backend, h sdk.Header, events session.EventList) (*backend, error) {
	b := &backend{name: m.Name, p: m.Persistence}
	o, err := m.Persistence.Open(ctx, h.ID, sdk.AccessWrite)
	created := false
	if errors.Is(err, sdk.CodeSessionNotFound) {
		o, err = m.Persistence.Create(ctx, h)
		created = true
	}
	if err != nil {
		return b, err
	}
	b.handle = o.Handle
	n, total := int(o.NextSeq), events.Len()
	if n > total {
		return b, sdk.Errorf(sdk.CodeMirrorDiverged, "open", "mirror %s holds %d events, the primary %d", m.Name, n, total)
	}
	if n > 0 {
		var last []byte
		if err := m.Persistence.Read(ctx, o.Handle, sdk.Offset(n-1), 1, func(c [][]byte) error {
			if len(c) > 0 {
				last = c[0]
			}
			return nil
		}); err != nil {
			return b, err
		}
		if string(last) != string(events.At(n-1).Envelope()) {
			return b, sdk.Errorf(sdk.CodeMirrorDiverged, "open", "mirror %s differs from the primary at seq %d", m.Name, n-1)
		}
	}
	if err := appendAll(ctx, b, events.Range(sdk.Offset(n), sdk.Offset(total)).Slice(), st.opts.RPCMaxBytes); err != nil {
		return b, err
	}
	if created && total == 0 {
		// Nothing appended materializes the new copy: Flush does.
		if _, err := m.Persistence.Flush(ctx, o.Handle); err != nil {
			return b, err
		}
	}
	return b, nil
}

// InspectReport says what a resume would do to an inspected session.
type InspectReport struct {
	Torn sdk.Torn // the torn tail a write open would cut (no Artifact); zero when none
	Live bool     // the view is a snapshot of a live session
}

// Inspect returns a read-only view (docs/architecture.md): of the live session when it
// is live here (it may end in an open turn), else of the stored log plus the
// closers a resume would append, in memory only (PendingRepair counts them).
// Storage and its revision are unchanged.
func (st *Store) Inspect(ctx context.Context, id string) (*session.Session, InspectReport, error) {
	if s, ok := st.Get(id); ok {
		v, err := session.RestoreEvents(ctx, st.sessionOptions(s.Header(), nil), session.RestoreOptions{ReadOnly: true}, s.Events().Slice())
		return v, InspectReport{Live: true}, err
	}
	if err := sdk.ValidateSessionID(id); err != nil {
		return nil, InspectReport{}, err
	}
	p, ok := st.primary()
	if !ok {
		return nil, InspectReport{}, &sdk.Error{Code: sdk.CodeSessionNotFound, Op: "inspect", SessionID: id, Detail: "no persistence backend is configured"}
	}
	var ctl session.Control
	v, o, err := st.readStored(ctx, p, id, &ctl)
	if err != nil {
		return nil, InspectReport{}, err
	}
	closers := session.InterruptedTurnClosers(v.Events().Slice())
	if err := ctl.Extend(ctx, closers, session.FromStorage); err != nil {
		return nil, InspectReport{}, err
	}
	ctl.SetReadOnly(len(closers))
	return v, InspectReport{Torn: o.Torn}, nil
}

// readStored opens a stored session read-only and restores it, binding ctl
// (when set) to the result; the handle is closed before returning.
func (st *Store) readStored(ctx context.Context, p Backend, id string, ctl *session.Control) (*session.Session, sdk.Opened, error) {
	b, o, err := openRead(ctx, p, id)
	if err != nil {
		return nil, o, err
	}
	defer st.closeBackends([]*backend{b})
	opts := st.sessionOptions(o.Header, nil)
	opts.Control = ctl
	v, _, err := st.restoreFrom(ctx, b, o, opts)
	return v, o, err
}

// openRead opens session id read-only on p; closing the backend it
// returns releases the handle.
func openRead(ctx context.Context, p Backend, id string) (*backend, sdk.Opened, error) {
	o, err := p.Persistence.Open(ctx, id, sdk.AccessRead)
	if err != nil {
		return nil, o, err
	}
	return &backend{name: p.Name, p: p.Persistence, handle: o.Handle}, o, nil
}

// openBatch returns what a write open appends to the stored log before the
// caller's first event: nothing when the caller continues the open turn
// (cont) and no torn tail was cut, else the resume batch
// (session.ResumeBatch, which is nothing for an empty log with no torn
// tail).
func (st *Store) openBatch(stored []session.Event, torn sdk.Torn, cont bool) []session.Event {
	if cont && torn.Bytes == 0 {
		return nil
	}
	return session.ResumeBatch(stored, torn, st.now())
}

// checkBeforeCut is OpenAt's check of a stored log that ends in a torn
// tail, made before the write open that would cut it: it reads the log
// read-only and compares want with its valid length plus the open's batch
// (session/recovered, the closers, the marker; see checkFirstSeq). A log
// with no torn tail is only opened for read here: the write open cuts
// nothing, so the check under its claim is the one that counts. Nothing
// is written either way; an absent session is SESSION_NOT_FOUND.
func (st *Store) checkBeforeCut(ctx context.Context, p Backend, id string, want sdk.Offset, cont bool) error {
	b, o, err := openRead(ctx, p, id)
	if err != nil {
		return err
	}
	defer st.closeBackends([]*backend{b})
	if o.Torn.Bytes == 0 {
		return nil
	}
	v, _, err := st.restoreFrom(ctx, b, o, st.sessionOptions(o.Header, nil))
	if err != nil {
		return err
	}
	return checkFirstSeq(id, &want, v.Len(), len(st.openBatch(v.Events().Slice(), o.Torn, cont)))
}

// checkFirstSeq returns the FirstSeqConflict of an open that expects want
// (nil: anything) as its caller's first seq, of a log of stored events
// read once, to which the open appends opening; nil when they add up.
func checkFirstSeq(id string, want *sdk.Offset, stored sdk.Offset, opening int) error {
	if want == nil || stored+sdk.Offset(opening) == *want {
		return nil
	}
	return FirstSeqConflict(id, *want, stored, opening)
}

// FirstSeqConflict is the SEQ_CONFLICT of an open whose caller expected its
// first event to get seq want, where the stored log of session id holds
// stored events and the open would append opening more: nothing was
// written.
func FirstSeqConflict(id string, want, stored sdk.Offset, opening int) *sdk.Error {
	got := stored + sdk.Offset(opening)
	e := session.SeqConflict(id, want, got)
	e.Op = "open"
	e.Detail = fmt.Sprintf("the first appended event would get seq %d, not the %d expected (the stored log holds %s and the open appends %s first); nothing was written",
		got, want, plural(int64(stored), "event"), plural(int64(opening), "repair event"))
	return e
}

// awaitRelease waits until no release of id is closing its backend
// handles: a session just taken out of the live set is still claimed by
// them, and opening it before they are closed would find it owned.
func (st *Store) awaitRelease(ctx context.Context, id string) error {
	st.mu.Lock()
	closed := st.releasing[id]
	st.mu.Unlock()
	if closed == nil {
		return nil
	}
	select {
	case <-closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
