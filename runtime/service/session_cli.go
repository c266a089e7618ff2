package service

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/compaction"
	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/runtime/store"
	"github.com/seed-e5e476df/logbook/runtime/transfer"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Session is one session this service holds live for write. It belongs to
// the service that returned it and stays live there until Close. Its
// methods are safe for concurrent use; read results share the log's bytes
// and must not be modified.
type Session struct {
	svc *Service
	s   *session.Session
}

// ID returns the session id.
func (s *Session) ID() string { return s.s.ID() }

// Header returns the session header: its identity and lineage.
func (s *Session) Header() sdk.Header { return s.s.Header() }

// Len returns the number of events in the log: the seq the next append
// gets.
func (s *Session) Len() sdk.Offset { return s.s.Len() }

// Range returns the events [from, end) of the log, clipped to it.
func (s *Session) Range(from, end sdk.Offset) []events.Event {
	return shared(s.s.Events().Range(min(from, s.s.Len()), min(end, s.s.Len())).Slice())
}

// shared converts session events to the events package's, sharing bytes.
func shared(evs []session.Event) []events.Event {
	if evs == nil {
		return nil
	}
	out := make([]events.Event, len(evs))
	for i, e := range evs {
		out[i] = e.Shared()
	}
	return out
}

// NewSession makes the new session id (header cwd) live in the service
// and holds it until Close; its backends get it within the write window,
// with its first events (Sync stores it at once). An id that is live or
// stored already is SESSION_ALREADY_EXISTS.
func (s *Service) NewSession(ctx context.Context, id, cwd string) (*Session, error) {
	sess, err := s.e.Store.Create(ctx, store.CreateOptions{ID: id, CWD: cwd})
	if err != nil {
		return nil, err
	}
	return &Session{svc: s, s: sess}, nil
}

// RepairReport says what a resume repaired (docs/architecture.md): the
// torn tail it cut and the closers it appended for an interrupted turn.
type RepairReport struct {
	// Torn is the torn tail the primary's write open cut and where its
	// bytes were kept; zero when none.
	Torn sdk.Torn
	// Closers counts the closer events appended for an interrupted turn.
	Closers int
}

// Resume makes a stored session live again and holds it until Close: it
// takes the primary backend's write claim, reads the log back, cuts a
// torn tail and closes an interrupted turn, and stores that repair before
// it returns. A session live already is ALREADY_OWNED, one stored nowhere
// SESSION_NOT_FOUND.
func (s *Service) Resume(ctx context.Context, id string) (*Session, RepairReport, error) {
	sess, rep, err := s.e.Store.Open(ctx, id)
	if err != nil {
		return nil, RepairReport{}, err
	}
	return &Session{svc: s, s: sess}, RepairReport{Torn: rep.Torn, Closers: rep.Closers}, nil
}

// WriteOptions say how OpenWrite opens a session.
type WriteOptions struct {
	// Create makes and stores an absent session (its cwd the process's
	// working directory) instead of refusing it with SESSION_NOT_FOUND.
	Create bool
	// Expected, when set, is the number of events the stored log must
	// hold (an absent session counts as empty), else SEQ_CONFLICT before
	// anything is written: not even a torn tail is cut.
	Expected *sdk.Offset
	// Continue goes on with the turn the stored log ends in: no closers
	// and no lifecycle marker, unless a torn tail was cut (the previous
	// writer crashed), when the normal repair runs.
	Continue bool
}

// WriteReport says what OpenWrite did to the stored session.
type WriteReport struct {
	// Torn is the torn tail the write open cut and where its bytes were
	// kept; zero when none.
	Torn sdk.Torn
	// Closers counts the closer events appended for an interrupted turn.
	Closers int
	// Continued is set when WriteOptions.Continue was honoured: nothing
	// was appended and the open turn goes on.
	Continued bool
	// Written are the events the open itself appended and stored (the
	// repair batch: session/recovered after a cut, the closers and the
	// lifecycle marker); none for a new or a continued session.
	Written []events.Event
}

// OpenWrite opens session id for write, as `logbook append` and `logbook
// resume` do: a stored session is resumed (torn tail cut, interrupted
// turn closed, lifecycle marker, all stored before it returns), an absent
// one created with o.Create, else SESSION_NOT_FOUND. The session stays
// live until Close, which flushes and releases it.
func (s *Service) OpenWrite(ctx context.Context, id string, o WriteOptions) (*Session, WriteReport, error) {
	// The stored length tells the open's own events from the stored ones:
	// a resume may write nothing at all (a log that already ends with a
	// lifecycle marker), which the resumed session alone cannot tell from
	// a marker it wrote. A read open counts exactly the valid prefix a
	// write open keeps (Stat may count torn rows too).
	var n int64
	l, err := transfer.OpenStored(ctx, s.Primary(), id)
	if err == nil {
		n = l.Len()
		l.Close()
	}
	absent := errors.Is(err, sdk.ErrSessionNotFound)
	if o.Expected != nil && (err == nil || absent) && *o.Expected != sdk.Offset(n) {
		return nil, WriteReport{}, store.StoredLenConflict(id, *o.Expected, sdk.Offset(n))
	}
	switch {
	case absent && o.Create:
		dir, err := os.Getwd()
		if err != nil {
			return nil, WriteReport{}, err
		}
		sess, err := s.NewSession(ctx, id, dir)
		if err != nil {
			return nil, WriteReport{}, err
		}
		return sess, WriteReport{}, sess.Sync(ctx)
	case err != nil:
		return nil, WriteReport{}, err
	}
	sess, rep, err := s.e.Store.OpenWith(ctx, id, store.OpenOptions{Expect: o.Expected, Continue: o.Continue})
	if err != nil {
		return nil, WriteReport{}, err
	}
	live := int64(sess.FirstLiveSeq())
	return &Session{svc: s, s: sess}, WriteReport{Torn: rep.Torn, Closers: rep.Closers, Continued: rep.Continued,
		Written: shared(sess.Events().Range(sdk.Offset(min(n, live)), sdk.Offset(live)).Slice())}, nil
}

// AppendOne validates in against the rules of docs/format.md and appends
// it, returning the event it became; a rejected input changes nothing.
// The backends get it within the write window; Close stores it.
func (s *Session) AppendOne(ctx context.Context, in events.Input) (events.Event, error) {
	ev, err := s.s.Append(ctx, in)
	if err != nil {
		return events.Event{}, err
	}
	return ev.Shared(), nil
}

// CompactOptions tune a compaction.
type CompactOptions struct {
	// Start and End, both or neither, compact exactly the current surface
	// nodes Start … End; neither = the largest balanced head of the
	// surface.
	Start, End *sdk.Seq
	// SourceCommandID is recorded in the bracket (without Start and End);
	// "" = none.
	SourceCommandID string
}

// Compact runs a manual compaction of s with the configured summarizer
// (docs/compaction.md) and returns the events it appended. Without a
// compaction block in the configuration it is CONFIG_INVALID.
func (s *Session) Compact(ctx context.Context, o CompactOptions) ([]events.Event, error) {
	out, err := s.svc.e.Compact(ctx, s.s, o.Start, o.End, o.SourceCommandID)
	if err != nil {
		return nil, err
	}
	return s.Range(sdk.Offset(out.StartSeq), sdk.Offset(out.EndSeq)+1), nil
}

// Pruned says what Prune did.
type Pruned struct {
	// ToolResults counts the tool results it rewrote.
	ToolResults int
	// CharsRemoved is how many characters the rewrites removed.
	CharsRemoved int64
}

// Prune rewrites the oversized tool results on the surface of s with the
// configured pruner (docs/compaction.md). Without a compaction block in
// the configuration it is CONFIG_INVALID.
func (s *Session) Prune(ctx context.Context) (Pruned, error) {
	c := s.svc.e.Compactor
	if c == nil {
		return Pruned{}, sdk.Errorf(sdk.CodeConfigInvalid, "prune", "the configuration has no compaction block (a headless profile)")
	}
	res, err := c.Prune(ctx, s.s)
	if err != nil {
		return Pruned{}, err
	}
	return Pruned{ToolResults: len(res.Pruned), CharsRemoved: res.CharsRemoved}, nil
}

// ForkRequest is a fork of a session.
type ForkRequest struct {
	// Source is the session forked; it may be live or stored, and is not
	// changed.
	Source string
	// At is the last event the child keeps; nil: all of them.
	At *sdk.Seq
	// As is the child's id; "" generates one.
	As string
}

// Fork creates the live session r.As from the events of r.Source up to
// and including r.At: the same bytes, an {inherited: true} marker, and
// closers when the cut leaves a turn open (docs/architecture.md). The
// child is live until Close.
func (s *Service) Fork(ctx context.Context, r ForkRequest) (*Session, error) {
	sess, err := s.e.Store.Fork(ctx, store.ForkRequest{SourceID: r.Source, Boundary: r.At, ChildID: r.As})
	if err != nil {
		return nil, err
	}
	return &Session{svc: s, s: sess}, nil
}

// Delete deletes the stored session id from every backend, each first
// recording it in its audit log with r. A session open for write anywhere
// is ALREADY_OWNED, one under a legal hold SESSION_HELD. When the primary
// deleted it and a mirror failed, the record is returned with the error.
func (s *Service) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	return s.e.Store.Delete(ctx, id, r)
}

// Hold puts a legal hold on the stored session id in every backend,
// audited with r, and reports whether it changed anything (a held session
// is not held twice).
func (s *Service) Hold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return s.e.Store.Hold(ctx, id, r)
}

// ReleaseHold lifts the legal hold of the stored session id in every
// backend, audited with r, and reports whether it changed anything.
func (s *Service) ReleaseHold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return s.e.Store.ReleaseHold(ctx, id, r)
}

// CanFollowStored reports whether the primary backend can be followed
// (its plugin declares the watch capability).
func (s *Service) CanFollowStored() bool { return s.e.Store.CanFollowStored() }

// FollowStored calls fn with the stored events of session id from seq
// from on, then with each batch the primary reports stored by any
// process, in order and each once, until ctx ends or fn fails (its error
// is returned). A primary that cannot be followed is CONFIG_INVALID.
func (s *Service) FollowStored(ctx context.Context, id string, from sdk.Offset, fn func([]events.Event) error) error {
	return s.e.Store.FollowStored(ctx, id, from, func(evs []session.Event) error { return fn(shared(evs)) })
}

// AppendInputs validates each input against the rules of docs/format.md and
// appends it, in order, stopping at the first rejected one (the ones
// before it stay appended); it returns the events appended.
func (s *Session) AppendInputs(ctx context.Context, ins ...events.Input) ([]events.Event, error) {
	var out []events.Event
	for _, in := range ins {
		ev, err := s.AppendOne(ctx, in)
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// Events returns the log, in seq order: a new slice on each call whose
// Data and Envelope are the stored bytes, not copies.
func (s *Session) Events() []events.Event { return shared(s.s.Events().Slice()) }

// Messages returns the model messages the surface derives to (what a
// provider adapter sends), as their canonical JSON, shared. The only error
// is PROJECTION_REMOVED: the log uses a message projection whose plugin is
// no longer loaded.
func (s *Session) Messages() ([]json.RawMessage, error) {
	l, err := s.s.Messages()
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, l.Len())
	for i, m := range l.All() {
		out[i] = m.SharedJSON()
	}
	return out, nil
}

// Surface returns the seqs of the surface nodes, in surface order. Its
// only error is PROJECTION_REMOVED: the log uses a message projection
// whose plugin is no longer loaded.
func (s *Session) Surface() ([]sdk.Seq, error) {
	v, err := s.s.Surface()
	if err != nil {
		return nil, err
	}
	return v.Nodes(), nil
}

// SurfaceTokens returns the token estimate of the surface: what the
// compaction policy measures (docs/compaction.md).
func (s *Session) SurfaceTokens() (int64, error) {
	m, err := compaction.Measure(s.s)
	return m.TotalTokens, err
}

// InheritedEvents returns how many events a fork inherited from its
// parent; 0 for a session that is no fork.
func (s *Session) InheritedEvents() int64 { return int64(s.s.InheritedEventCount()) }

// Sync waits until every event appended so far is durable on every
// backend, or returns FLUSH_FAILED naming each backend that failed (the
// events stay queued and are retried).
func (s *Session) Sync(ctx context.Context) error {
	_, err := s.svc.e.Store.Flush(ctx, s.s)
	return err
}

// Release flushes the session, closes it on every backend and ends it
// here: later appends fail with SESSION_CLOSED, reads keep working, and
// OpenWrite makes it live again. When the primary backend cannot take the
// queued events the session stays live and the error is returned.
func (s *Session) Release(ctx context.Context) error { return s.svc.e.Store.Release(ctx, s.s) }

// Compaction describes a committed compaction.
type Compaction struct {
	// ID is the bracket's id (a lowercase UUIDv4).
	ID string
	// StartSeq, SummarySeq, CheckpointSeq and EndSeq are the seqs of
	// compaction/start, compaction/summary, the checkpoint user/message
	// and compaction/end.
	StartSeq, SummarySeq, CheckpointSeq, EndSeq sdk.Seq
	// Shadowed are the nodes the checkpoint replaced, in surface order.
	Shadowed []sdk.Seq
	// ShadowedTokens is their token estimate; CheckpointTokens the
	// checkpoint's (always smaller).
	ShadowedTokens, CheckpointTokens int64
}

// CompactNow compacts the largest balanced head of the surface of s with
// the configured summarizer, as the pressure policy would, recording
// sourceCommandID in the bracket, and describes what it did. Without a
// compaction block in the configuration it is CONFIG_INVALID.
func (s *Session) CompactNow(ctx context.Context, sourceCommandID string) (Compaction, error) {
	out, err := s.svc.e.Compact(ctx, s.s, nil, nil, sourceCommandID)
	if err != nil {
		return Compaction{}, err
	}
	return Compaction{ID: out.CompactionID, StartSeq: out.StartSeq, SummarySeq: out.SummarySeq, CheckpointSeq: out.CheckpointSeq, EndSeq: out.EndSeq,
		Shadowed: out.Shadowed, ShadowedTokens: out.ShadowedTokens, CheckpointTokens: out.CheckpointTokens}, nil
}

// PluginProcess is one running plugin process.
type PluginProcess struct {
	// Name is the plugin's configured name.
	Name string
	// Pid is its process id.
	Pid int
}

// PluginProcesses returns the plugin processes the service runs, by name.
func (s *Service) PluginProcesses() []PluginProcess {
	out := make([]PluginProcess, 0, len(s.e.Plugins))
	for name, p := range s.e.Plugins {
		out = append(out, PluginProcess{Name: name, Pid: p.Pid()})
	}
	slices.SortFunc(out, func(x, y PluginProcess) int { return strings.Compare(x.Name, y.Name) })
	return out
}
