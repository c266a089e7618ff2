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

// Salvage reads session source, whose stored log is damaged inside its
// committed part (CORRUPT_LOG), and creates session child ("" generates an
// id) holding what a fork of its longest valid prefix would hold, then a
// session/salvaged event; the damaged bytes and everything after them are
// kept in an artifact file. The source is never modified; an intact one
// is refused. The new session is live in the service until Close, which
// makes it durable.
func (s *Service) Salvage(ctx context.Context, source, child string) (SalvageReport, error) {
	ss, rep, err := s.e.Store.Salvage(ctx, store.SalvageRequest{SourceID: source, ChildID: child})
	if err != nil {
		return SalvageReport{}, err
	}
	return SalvageReport{ID: ss.ID(), From: rep.From, ValidEvents: rep.ValidEvents, Reason: rep.Reason,
		DamagedAtOffset: rep.DamagedAtOffset, DamagedBytes: rep.DamagedBytes, IntactEventsExcluded: rep.IntactEventsExcluded, Artifact: rep.Artifact}, nil
}
