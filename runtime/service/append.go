package service

import (
	"context"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/sdk"
)

// AppendRequest is one append to a session.
type AppendRequest struct {
	// Inputs are appended in order, each as its own event
	// (docs/format.md), with consecutive seqs: no other append lands
	// between them.
	Inputs []events.Input
	// Expected, when set, is the seq the first appended event must get:
	// the log's length when the append starts. Another length refuses the
	// whole request with SEQ_CONFLICT (Meta "expected" and "actual") and
	// appends nothing, so a caller that retries with the length it first
	// expected never appends twice.
	Expected *sdk.Offset
	// Group appends Inputs as one atomic group (docs/compaction.md): every
	// member is validated against the log with the members before it, and
	// either all are appended and stored as one unit, or none is. Without
	// it the append is not atomic: the first rejected input stops it and
	// the ones before it stay appended.
	Group bool
	// Flush makes the append wait until its events are durable on every
	// backend (a failed append flushes the events it did append).
	Flush bool
	// OperationID, when set, makes the append happen once (docs/format.md,
	// "Operation ids"): Inputs are appended as one atomic group and the id
	// is stored with them. When the session already holds the id with the
	// same canonical inputs, nothing is appended and the result holds the
	// original events with Replayed set; with other inputs the append is
	// OPERATION_CONFLICT. An id that is not 1–128 bytes of printable ASCII
	// is OPERATION_ID_INVALID.
	OperationID string
}

// AppendResult is what an append did, on success and on failure alike.
type AppendResult struct {
	// Events are the appended events, in order; on a failure, the ones
	// appended before it.
	Events []events.Event
	// FirstSeq is the seq of the first appended event or, when none was,
	// the log's length the append found; nil when the append did not
	// reach the session, or a group was refused.
	FirstSeq *sdk.Offset
	// Fenced reports whether the session is fenced after the append
	// (Session.Fenced).
	Fenced bool
	// Flush is the flush's result when the request asked for one and it
	// passed.
	Flush *FlushResult
	// Replayed reports that the request's OperationID was already held
	// with the same inputs: Events are the original append's, and nothing
	// was appended.
	Replayed bool
}

// Append appends r to session id, resuming the session first when it is
// not live (and releasing it again when the request fails, so a failed
// request leaves a session that was not live as it was). On a failure the
// result still says what was appended; the error of a rejected input is
// an *sdk.Error whose Index is its position in r.Inputs.
func (s *Service) Append(ctx context.Context, id string, r AppendRequest) (AppendResult, error) {
	res, err := s.h.Append(ctx, id, host.AppendRequest(r))
	return appendResult(res), err
}

// Append appends r to s (Service.Append), a session the caller holds.
func (s *Session) Append(ctx context.Context, r AppendRequest) (AppendResult, error) {
	res, err := s.svc.h.AppendTo(ctx, s.s, host.AppendRequest(r))
	return appendResult(res), err
}

func appendResult(r host.AppendResult) AppendResult {
	out := AppendResult{Events: r.Events, FirstSeq: r.FirstSeq, Fenced: r.Fenced, Replayed: r.Replayed}
	if r.Flush != nil {
		f := flushResult(*r.Flush)
		f.Fenced = r.Fenced
		out.Flush = &f
	}
	return out
}
