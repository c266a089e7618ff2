package logbook

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Session is one session of a Runtime: a live one (Create, Resume, Fork),
// which takes appends and writes them behind to every backend, or a
// read-only view (Inspect). Safe for concurrent use: appends are
// serialized, and reads are snapshots that never wait for storage.
//
// An accepted append is in memory at once and reaches the backends within
// the write window; Flush is the durability checkpoint. Read results share
// the log's bytes (see Events): they must not be modified.
type Session struct {
	s *service.Session
}

// ID returns the session id.
func (s *Session) ID() string { return s.s.ID() }

// Header returns the session header: its identity and lineage.
func (s *Session) Header() sdk.Header { return s.s.Header() }

// Len returns the number of events in the log: the seq the next append
// gets.
func (s *Session) Len() sdk.Offset { return s.s.Len() }

// Append appends ins in order, each as its own event (docs/format.md), with
// consecutive seqs: no other append lands between them. It is not atomic:
// the first rejected input stops it, the ones before it stay appended and
// are returned with its error, an *sdk.Error whose Index is the rejected
// input's position and whose Meta "appended" counts the events appended
// (and "firstSeq" is the seq of the first, or the log length when none
// was). Use AppendGroup for all or nothing. The returned events share the
// log's bytes.
func (s *Session) Append(ctx context.Context, ins ...events.Input) ([]events.Event, error) {
	return s.appendBatch(ctx, nil, ins)
}

// AppendAt is Append for a caller that expects the log to hold expected
// events: another length refuses the whole call with SEQ_CONFLICT (Meta
// "expected" and "actual") and appends nothing, so a caller that retries
// with the length it first expected never appends twice.
func (s *Session) AppendAt(ctx context.Context, expected sdk.Offset, ins ...events.Input) ([]events.Event, error) {
	return s.appendBatch(ctx, &expected, ins)
}

func (s *Session) appendBatch(ctx context.Context, expected *sdk.Offset, ins []events.Input) ([]events.Event, error) {
	return appended(s.s.Append(ctx, service.AppendRequest{Inputs: ins, Expected: expected}))
}

// appended returns the events of an append and its error, an *sdk.Error
// with the Meta "appended" and "firstSeq" of the result.
func appended(res service.AppendResult, err error) ([]events.Event, error) {
	if se, ok := err.(*sdk.Error); ok {
		se = se.WithMeta("appended", strconv.Itoa(len(res.Events)))
		if res.FirstSeq != nil {
			se = se.WithMeta("firstSeq", strconv.FormatInt(int64(*res.FirstSeq), 10))
		}
		err = se
	}
	return res.Events, err
}

// Appended is what AppendOnce did.
type Appended struct {
	// Events are the operation's events: the ones just appended, or, for
	// a replay, the original ones. They share the log's bytes.
	Events []events.Event
	// Replayed reports that the session already held the operation id
	// with the same events, so nothing was appended.
	Replayed bool
}

// AppendOnce appends ins once under operationID (docs/format.md,
// "Operation ids"), whatever the retries, processes and restarts: as one
// atomic group whose first event stores the id. When the session already
// holds the id with byte-equal canonical events, nothing is appended and
// the original events come back with Replayed set; other events under it
// are OPERATION_CONFLICT (Meta "operationId", "firstSeq" of the original
// and its "count"). An id that is not 1–128 bytes of printable ASCII is
// OPERATION_ID_INVALID. Nothing is appended on any error.
func (s *Session) AppendOnce(ctx context.Context, operationID string, ins ...events.Input) (Appended, error) {
	res, err := s.s.Append(ctx, service.AppendRequest{Inputs: ins, OperationID: operationID})
	evs, err := appended(res, err)
	return Appended{Events: evs, Replayed: res.Replayed}, err
}

// AppendGroup appends ins as one atomic group (docs/compaction.md): every
// member is validated against the log with the members before it, and
// either all are appended, with consecutive seqs, and stored as one unit,
// or none is and the error is the rejected member's, with Index its
// position.
func (s *Session) AppendGroup(ctx context.Context, ins ...events.Input) ([]events.Event, error) {
	return appended(s.s.Append(ctx, service.AppendRequest{Inputs: ins, Group: true}))
}

// AppendGroupAt is AppendGroup for a group planned for a log of expected
// events, whose members may cite each other's seqs: another length is
// SEQ_CONFLICT and nothing is appended.
func (s *Session) AppendGroupAt(ctx context.Context, expected sdk.Offset, ins ...events.Input) ([]events.Event, error) {
	return appended(s.s.Append(ctx, service.AppendRequest{Inputs: ins, Expected: &expected, Group: true}))
}

// Flush waits until every event appended so far is durable on every
// backend, or returns FLUSH_FAILED naming each backend that failed (the
// events stay queued and are retried). A read-only view is
// SESSION_READ_ONLY.
func (s *Session) Flush(ctx context.Context) error {
	_, err := s.s.Flush(ctx)
	return err
}

// Release flushes the session, closes it on every backend and ends it
// here: later appends fail with SESSION_CLOSED, reads keep working, and
// Resume makes it live again. When the primary backend cannot take the
// queued events the session stays live and the error is returned. A
// read-only view holds nothing, and its Release does nothing.
func (s *Session) Release(ctx context.Context) error { return s.s.Release(ctx) }

// Compact runs a manual compaction (docs/compaction.md) with the
// configured summarizer: the compacted nodes are replaced on the surface
// by one checkpoint message that summarizes them, inside a compaction/*
// bracket; the log keeps every event. It flushes, and returns the events
// it appended. Without a compaction block in the configuration it is
// CONFIG_INVALID; a read-only view is SESSION_READ_ONLY.
func (s *Session) Compact(ctx context.Context, o service.CompactOptions) ([]events.Event, error) {
	return s.s.Compact(ctx, o)
}

// Events returns the log, in seq order: a new slice of every event on each
// call, whose Data and Envelope are the stored bytes, not copies, which
// must not be modified.
func (s *Session) Events() []events.Event { return s.s.Events() }

// Messages returns the model messages the surface derives to (what a
// provider adapter sends), as their canonical JSON; the bytes are shared
// and must not be modified. The only error is PROJECTION_REMOVED: the log
// uses a message projection whose plugin is no longer loaded.
func (s *Session) Messages() ([]json.RawMessage, error) { return s.s.Messages() }

// Transcript returns every event that appended a message to the surface,
// with that message as recorded, in log order: what a human reads, before
// any rewrite, pruning or projection.
func (s *Session) Transcript() []events.TranscriptEntry { return s.s.Transcript() }

// Surface returns the seqs of the surface nodes, in surface order: the
// events Messages derives from. Its only error is Messages'.
func (s *Session) Surface() ([]sdk.Seq, error) { return s.s.Surface() }

// RequestHeader returns the folded request header (its canonical
// EpochHeader JSON: the model, its settings and the tools), or null when
// the log has none. With Messages it is what package provider builds a
// provider's request from (provider.Request).
func (s *Session) RequestHeader() json.RawMessage { return s.s.RequestHeaderJSON() }

// Request returns the request a model would be sent now, right after the
// last event, in format (provider.RequestFormats): {header, context,
// messages} for "logbook", else the provider's body ("openai",
// "anthropic", "openai-responses"), byte for byte what `logbook request
// --format F` prints. omitted lists, one line each, what a provider format
// left out because no provider accepts it where it stands (possible only
// in a lenient or old log, or after a replace that shadowed one side of a
// call and its result; docs/providers.md, Omissions). Another format is
// USAGE; a provider format without a request/header in the log is
// REQUEST_HEADER_MISSING; calls still waiting for their results (a step
// open) are TOOL_CALLS_PENDING, its Meta "callIds" naming them and its Seq
// the assistant message that announced them.
func (s *Session) Request(format string) (body []byte, omitted []string, err error) {
	return s.s.Request(format)
}
