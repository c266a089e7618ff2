package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// SalvageReport says what Salvage kept and what it left out. Its JSON
// form is what `logbook salvage --json` prints. Offsets and sizes are
// bytes of a file backend, seqs and rows of a row backend.
type SalvageReport struct {
	// ID is the new session.
	ID string `json:"id"`
	// From is the damaged session it was salvaged from.
	From string `json:"from"`
	// ValidEvents is the length of the source's valid prefix, which the
	// new session holds.
	ValidEvents int64 `json:"validEvents"`
	// Reason names the check the damaged part of the source failed.
	Reason string `json:"reason"`
	// DamagedAtOffset is where the damage starts in the stored log.
	DamagedAtOffset int64 `json:"damagedAtOffset"`
	// DamagedBytes is the size of the damaged part.
	DamagedBytes int64 `json:"damagedBytes"`
	// IntactEventsExcluded counts the intact events after the damage that
	// the new session leaves out.
	IntactEventsExcluded int64 `json:"intactEventsExcluded"`
	// Artifact is the file that keeps the left-out bytes.
	Artifact string `json:"artifact"`
}

// SalvageRequest is a salvage of a damaged session.
type SalvageRequest struct {
	// Source is the damaged session; it is never modified.
	Source string
	// Child is the new session's id; "" generates one.
	Child string
}

// Salvage reads session r.Source, whose stored log is damaged inside its
// committed part (CORRUPT_LOG), and creates session r.Child holding what a
// fork of its longest valid prefix would hold, then a session/salvaged
// event; the damaged bytes and everything after them are kept in an
// artifact file. An intact source is refused. The new session is stored
// before Salvage returns, and stays live in the service until it is
// released (Service.Release) or the service closes.
func (s *Service) Salvage(ctx context.Context, r SalvageRequest) (SalvageReport, error) {
	ss, rep, err := s.e.Store.Salvage(ctx, store.SalvageRequest{SourceID: r.Source, ChildID: r.Child})
	if err != nil {
		return SalvageReport{}, err
	}
	return SalvageReport{ID: ss.ID(), From: rep.From, ValidEvents: rep.ValidEvents, Reason: rep.Reason,
		DamagedAtOffset: rep.DamagedAtOffset, DamagedBytes: rep.DamagedBytes, IntactEventsExcluded: rep.IntactEventsExcluded, Artifact: rep.Artifact}, nil
}
