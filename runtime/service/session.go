package service

import (
	"context"
	"encoding/json"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/session"
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

// Release flushes the session, closes it on every backend and ends it
// here: later appends fail with SESSION_CLOSED, reads keep working, and
// OpenWrite makes it live again. When the primary backend cannot take the
// queued events the session stays live and the error is returned.
func (s *Session) Release(ctx context.Context) error { return s.svc.e.Store.Release(ctx, s.s) }
