package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// CreateRequest is a new session.
type CreateRequest struct {
	// ID is the new session's id; "" generates a lowercase UUIDv7.
	ID string
	// Header is the caller's part of the header.
	Header events.CreateOptions
	// Stored makes Create flush the new session before it returns, so a
	// session whose Create succeeded is stored: it survives a crash and
	// every other process sees it. When that flush fails the session stays
	// live (a Flush or Release retries) and Create returns it with the
	// flush's error. Without it the session reaches the backends within
	// the write window, as its appends do.
	Stored bool
}

// Create makes a new live session on every backend and holds it. An id
// that is live or stored already is SESSION_ALREADY_EXISTS, a bad header
// field SEED_INVALID; a read-only service refuses it with
// SESSION_READ_ONLY.
func (s *Service) Create(ctx context.Context, r CreateRequest) (*Session, error) {
	o := r.Header
	co := store.CreateOptions{ID: r.ID, CWD: o.CWD, Origin: o.Origin, DelegationDepth: o.DelegationDepth, AgentPreset: o.AgentPreset, ParentSession: o.ParentSession, Protocol: o.Protocol, Labels: o.Labels}
	create := s.h.Create
	if r.Stored {
		create = s.h.CreateStored
	}
	sess, err := create(ctx, co)
	if sess == nil {
		return nil, err
	}
	return &Session{svc: s, s: sess}, err
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

// Resume makes a stored session live again and holds it: it takes the
// primary backend's write claim, reads the log back, cuts a torn tail and
// closes an interrupted turn, and writes that repair before it returns. A
// session live already is ALREADY_OWNED, one stored nowhere
// SESSION_NOT_FOUND.
func (s *Service) Resume(ctx context.Context, id string) (*Session, RepairReport, error) {
	sess, rep, err := s.h.Resume(ctx, id)
	out, err := s.wrap(sess, err)
	return out, RepairReport{Torn: rep.Torn, Closers: rep.Closers}, err
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
// child is held.
func (s *Service) Fork(ctx context.Context, r ForkRequest) (*Session, error) {
	return s.wrap(s.h.Fork(ctx, store.ForkRequest{SourceID: r.Source, Boundary: r.At, ChildID: r.As}))
}

// InspectReport says what a resume of an inspected session would find.
type InspectReport struct {
	// Torn is the torn tail a write open would cut (no Artifact); zero
	// when none or when the session is live.
	Torn sdk.Torn
	// Live reports whether the session is live in this service.
	Live bool
}

// InspectView returns a read-only view of a session: a snapshot of it when
// it is live, else its stored log plus, in memory only, the closers a
// resume would append. Nothing is written; the view's appends and Flush
// fail with SESSION_READ_ONLY and its Release does nothing.
func (s *Service) InspectView(ctx context.Context, id string) (*Session, InspectReport, error) {
	v, rep, err := s.e.Store.Inspect(ctx, id)
	out, err := s.wrap(v, err)
	return out, InspectReport{Torn: rep.Torn, Live: rep.Live}, err
}

// Inspection is what Inspect reports of a session.
type Inspection struct {
	// ID is the session's id.
	ID string
	// Header is the session header: its identity and lineage.
	Header sdk.Header
	// Events is the length of the log as stored (a live session's whole
	// log), without the closers a resume would add.
	Events sdk.Offset
	// OpenTurn is the turn the closers close; nil when the log ends
	// outside a turn.
	OpenTurn *int64
	// PendingRepair are the closers a resume would append.
	PendingRepair []events.Event
	// Torn is the torn tail a write open would cut; zero for a live
	// session or when there is none.
	Torn sdk.Torn
	// Live reports whether the session is live in this service.
	Live bool
}

// Inspect reports a session's log length, its open turn, the closers a
// resume would append and the torn bytes a write open would cut; it never
// writes.
func (s *Service) Inspect(ctx context.Context, id string) (Inspection, error) {
	in, err := s.h.Inspect(ctx, id)
	if err != nil {
		return Inspection{}, err
	}
	out := Inspection{ID: in.Session.ID(), Header: in.Session.Header(), Events: sdk.Offset(in.Stored.Len()), PendingRepair: host.Shared(in.Closers), Torn: in.Torn, Live: in.Live}
	if turn, ok := in.OpenTurn(); ok {
		out.OpenTurn = &turn
	}
	return out, nil
}

// Status is what Stat reports of a session.
type Status struct {
	// Header is the session header: its identity and lineage.
	Header sdk.Header
	// Length is the log's length: the live session's, else the stored
	// log's.
	Length sdk.Offset
	// Live reports whether the session is live in this service.
	Live bool
	// Torn is the torn tail the stored log ends in, which the next write
	// open cuts; zero when none or when the session is live.
	Torn sdk.Torn
}

// Stat reports a session's header, length, whether it is live here, and
// the torn tail a write open would cut; it never writes.
func (s *Service) Stat(ctx context.Context, id string) (Status, error) {
	st, err := s.h.Stat(ctx, id)
	return Status{Header: st.Header, Length: st.Length, Live: st.Live, Torn: st.Torn}, err
}

// List returns the live and the stored sessions, by id. A session that
// cannot be read is listed with Err set.
func (s *Service) List(ctx context.Context) ([]events.ListEntry, error) {
	entries, err := s.h.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]events.ListEntry, len(entries))
	for i, e := range entries {
		out[i] = events.ListEntry{ListEntry: e.ListEntry, Live: e.Live}
	}
	return out, nil
}

// Flush flushes the live session id on every backend. A session the
// service released for idleness (and still remembers) answers its final
// flush; any other session that is not live is SESSION_NOT_LIVE. On a
// failure the result's Fenced still says whether the session is fenced.
func (s *Service) Flush(ctx context.Context, id string) (FlushResult, error) {
	sess, r, err := s.h.Flush(ctx, id)
	out := flushResult(r)
	out.Fenced = sess != nil && sess.Fenced() != nil
	return out, err
}

// Release flushes and releases the live session id. A session the service
// released for idleness (and still remembers) is released already: nil.
// Any other session that is not live is SESSION_NOT_LIVE.
func (s *Service) Release(ctx context.Context, id string) error { return s.h.Release(ctx, id) }

// Delete deletes the stored session id, audited with r: a live session is
// ALREADY_OWNED (release it first). A read-only service refuses it with
// SESSION_READ_ONLY.
func (s *Service) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	return s.h.Delete(ctx, id, r)
}

// Hold puts a legal hold on the stored session id, audited with r, and
// reports whether it changed anything (a held session is not held twice).
func (s *Service) Hold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return s.h.SetHold(ctx, id, true, r)
}

// ReleaseHold lifts the legal hold of the stored session id, audited with
// r, and reports whether it changed anything.
func (s *Service) ReleaseHold(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	return s.h.SetHold(ctx, id, false, r)
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

// Compact runs a manual compaction (docs/compaction.md) of session id with
// the configured summarizer, resuming the session when it is not live (and
// releasing it again when the compaction fails), and returns the events it
// appended. Without a compaction block in the configuration it is
// CONFIG_INVALID, checked before the session is resumed.
func (s *Service) Compact(ctx context.Context, id string, o CompactOptions) ([]events.Event, error) {
	return s.h.Compact(ctx, id, o.Start, o.End, o.SourceCommandID)
}

// Compact runs a manual compaction of s (Service.Compact). It flushes; a
// read-only view is SESSION_READ_ONLY.
func (s *Session) Compact(ctx context.Context, o CompactOptions) ([]events.Event, error) {
	if err := s.checkLive("compact"); err != nil {
		return nil, err
	}
	return s.svc.h.CompactSession(ctx, s.s, o.Start, o.End, o.SourceCommandID)
}
