package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

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
