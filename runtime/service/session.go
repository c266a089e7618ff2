package service

import (
	"context"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Session is one session of a Service: a live one (Create, Resume, Fork,
// OpenWrite), which takes appends and writes them behind to every
// backend, or a read-only view (ReadStored, InspectView). Safe for concurrent
// use: appends are serialized, and reads are snapshots that never wait for
// storage. Read results share the log's bytes: they must not be modified.
type Session struct {
	svc *Service
	s   *session.Session
}

// wrap returns the handle of sess, or err.
func (s *Service) wrap(sess *session.Session, err error) (*Session, error) {
	if err != nil {
		return nil, err
	}
	return &Session{svc: s, s: sess}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.s.ID() }

// Header returns the session header: its identity and lineage.
func (s *Session) Header() sdk.Header { return s.s.Header() }

// Len returns the number of events in the log: the seq the next append
// gets.
func (s *Session) Len() sdk.Offset { return s.s.Len() }

// ReadOnly reports whether s is a read-only view.
func (s *Session) ReadOnly() bool { return s.s.ReadOnly() }

// Fenced reports whether a final persistence failure fenced the session: a
// failed flush of it cannot pass on a retry, and what it holds beyond the
// stored log is lost once it is released.
func (s *Session) Fenced() bool { return s.s.Fenced() != nil }

// Events returns the log, in seq order: a new slice on each call whose
// Data and Envelope are the stored bytes, not copies.
func (s *Session) Events() []events.Event { return host.Shared(s.s.Events().Slice()) }

// Range returns the events [from, end) of the log, clipped to it.
func (s *Session) Range(from, end sdk.Offset) []events.Event {
	return host.Shared(s.s.Events().Range(min(from, s.s.Len()), min(end, s.s.Len())).Slice())
}

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

// Transcript returns every event that appended a message to the surface,
// with that message as recorded, in log order.
func (s *Session) Transcript() []events.TranscriptEntry {
	t := s.s.Transcript()
	out := make([]events.TranscriptEntry, t.Len())
	for i, e := range t.All() {
		out[i] = events.TranscriptEntry{Seq: e.Seq, Type: e.Type, Message: e.Message.SharedJSON()}
	}
	return out
}

// Surface returns the seqs of the surface nodes, in surface order: the
// events Messages derives from. Its only error is Messages'.
func (s *Session) Surface() ([]sdk.Seq, error) {
	v, err := s.s.Surface()
	if err != nil {
		return nil, err
	}
	return v.Nodes(), nil
}

// RequestHeaderJSON returns the folded request header as JSON, or null
// when the log has none.
func (s *Session) RequestHeaderJSON() []byte { return s.s.AppendRequestHeaderJSON(nil) }

// checkLive refuses op on a read-only view.
func (s *Session) checkLive(op string) error {
	if s.s.ReadOnly() {
		e := sdk.Errorf(sdk.CodeSessionReadOnly, op, "an inspect view is read-only; resume the session to write")
		e.SessionID = s.s.ID()
		return e
	}
	return nil
}

// Flush waits until every event appended so far is durable on every
// backend, or returns FLUSH_FAILED naming each backend that failed (the
// events stay queued and are retried). A read-only view is
// SESSION_READ_ONLY.
func (s *Session) Flush(ctx context.Context) (FlushResult, error) {
	if err := s.checkLive("flush"); err != nil {
		return FlushResult{}, err
	}
	res, err := s.svc.e.Store.Flush(ctx, s.s)
	out := flushResult(res)
	out.Fenced = s.Fenced()
	return out, err
}

// Release flushes the session, closes it on every backend and ends it
// here: later appends fail with SESSION_CLOSED, reads keep working, and a
// resume makes it live again. When the primary backend cannot take the
// queued events the session stays live and the error is returned. A
// read-only view holds nothing, and its Release does nothing.
func (s *Session) Release(ctx context.Context) error {
	if s.s.ReadOnly() {
		return nil
	}
	return s.svc.h.ReleaseSession(ctx, s.s)
}

// FlushResult is what a flush found on every backend.
type FlushResult struct {
	// Participated is true when at least one backend was attached and
	// asked to flush; false is no proof of durability.
	Participated bool
	// Backends lists every attached backend, in configuration order.
	Backends []BackendFlush
	// Fenced reports whether the session is fenced after the flush
	// (Session.Fenced): a failed flush of a fenced session cannot pass on
	// a retry.
	Fenced bool
}

// BackendFlush is one backend's part of a flush.
type BackendFlush struct {
	// Name is the backend's persistence block name.
	Name string
	// DurableSeq is the backend's acknowledged watermark after the flush.
	DurableSeq sdk.Cursor
}

// flushResult converts the store's flush result to the service's; the
// caller sets Fenced.
func flushResult(r store.FlushResult) FlushResult {
	out := FlushResult{Participated: r.Participated, Backends: make([]BackendFlush, len(r.Backends))}
	for i, b := range r.Backends {
		out.Backends[i] = BackendFlush{Name: b.Name, DurableSeq: b.DurableSeq}
	}
	return out
}
