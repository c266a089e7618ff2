package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/transfer"
	"github.com/seed-e5e476df/logbook/sdk"
)

// backend returns the persistence block called name as the service's
// tenant sees it (the running plugin's view of the tenant); a name the
// configuration has no persistence block for is CONFIG_INVALID. It stays
// inside the service: the store writes through it, and only read-only
// opens may share it.
func (s *Service) backend(name string) (sdk.Persistence, error) {
	return s.e.Backend(name)
}

// primary returns the primary backend as the service's tenant sees it:
// the one of the first persistence block, which every read and every
// write goes to first.
func (s *Service) primary() sdk.Persistence {
	p, _ := s.e.Backend(s.cfg.Persistence[0].Name) // a configured backend: never an error
	return p
}

// StoredStatus is what StatStored reports of a stored session.
type StoredStatus struct {
	// Header is the stored session header.
	Header sdk.Header
	// Events is the number of stored events when the backend knows it
	// without reading the log; -1 when it does not (OpenStored counts
	// them).
	Events int64
}

// StatStored describes session id as the primary backend stores it,
// straight from the backend and without reading its events: it neither
// restores nor validates the log, so it answers for a damaged one too. A
// session the primary does not hold is SESSION_NOT_FOUND.
func (s *Service) StatStored(ctx context.Context, id string) (StoredStatus, error) {
	st, err := s.primary().Stat(ctx, id)
	if err != nil {
		return StoredStatus{}, err
	}
	return StoredStatus{Header: st.Header, Events: st.EventCount}, nil
}

// StoredLog is a session opened read-only on one backend, read as its
// stored envelopes without restoring it: no ownership is taken, no torn
// tail is cut and nothing is validated beyond framing, so it reads beside
// a writer in another process. It is not safe for concurrent use; Close
// releases it.
type StoredLog struct {
	l *transfer.Stored
}

// OpenStored opens session id read-only on the primary backend. An
// invalid id is SESSION_ID_INVALID; a session the primary does not hold is
// SESSION_NOT_FOUND.
func (s *Service) OpenStored(ctx context.Context, id string) (*StoredLog, error) {
	l, err := transfer.OpenStored(ctx, s.primary(), id)
	if err != nil {
		return nil, err
	}
	return &StoredLog{l: l}, nil
}

// Header returns the stored session header.
func (l *StoredLog) Header() sdk.Header { return l.l.Header() }

// Len returns the number of valid stored events at open.
func (l *StoredLog) Len() int64 { return l.l.Len() }

// Torn returns the torn tail the open found: what a write open would cut.
// It is zero when the log ends cleanly.
func (l *StoredLog) Torn() sdk.Torn { return l.l.Torn() }

// Read calls fn with the envelopes of seqs [from, to) in consecutive
// chunks, which fn may keep; nothing when to ≤ from. An error of fn ends
// the read and is returned.
func (l *StoredLog) Read(ctx context.Context, from, to int64, fn func(envelopes [][]byte) error) error {
	return l.l.Read(ctx, from, to, fn)
}

// Close releases the handle.
func (l *StoredLog) Close() { l.l.Close() }

// ListStored lists the sessions the primary backend stores, in its order,
// straight from the backend (a session live in this service and not yet
// stored is not listed). An entry the backend cannot read has Err set.
func (s *Service) ListStored(ctx context.Context) ([]sdk.ListEntry, error) {
	return transfer.List(ctx, s.primary())
}

// Import stores a session verbatim: header h and its envelopes byte for
// byte, validated like any restore, with no marker and no closers, in one
// step, so a failed import stores nothing. An id that is already stored is
// SESSION_ALREADY_EXISTS unless it holds exactly this import.
func (s *Service) Import(ctx context.Context, h sdk.Header, envelopes [][]byte) error {
	return s.e.Store.Import(ctx, h, envelopes)
}

// Audit calls fn with every record of the primary backend's audit log,
// oldest first: each delete, hold and release-hold. An error of fn stops
// the walk and is returned.
func (s *Service) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	return s.e.Store.Audit(ctx, fn)
}

// CanFollowStored reports whether the primary backend can be followed
// (its plugin declares the watch capability).
func (s *Service) CanFollowStored() bool { return s.e.Store.CanFollowStored() }

// FollowStored calls fn with the stored events of session id from seq
// from on, then with each batch the primary reports stored by any
// process, in order and each once, until ctx ends or fn fails (its error
// is returned). A primary that cannot be followed is CONFIG_INVALID.
func (s *Service) FollowStored(ctx context.Context, id string, from sdk.Offset, fn func([]events.Event) error) error {
	return s.e.Store.FollowStored(ctx, id, from, func(evs []session.Event) error { return fn(host.Shared(evs)) })
}
