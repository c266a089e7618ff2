// Package session is the pure heart of logbook: one session's append-only
// event log and everything derived from it (docs/format.md, docs/architecture.md).
//
// A Session validates each appended event in one pipeline (steps A1–A12 and
// the surface steps S1–S7 of docs/format.md, The order of checks), commits it under a per-session lock,
// and keeps these folds current:
//
//   - the surface: the ordered seqs of the events the model sees, where a
//     replacement turns a contiguous span of nodes into one node. It lives in
//     a linked list threaded through an array indexed by seq, with order
//     labels, so a replace of k nodes costs O(k) however long the surface is;
//   - the derived messages, the surface view, the event list and the human
//     transcript, all handed out as immutable snapshots: O(1) when nothing
//     changed, O(k) after k appends, one rebuild after a replacement;
//   - the request header, request context and tool history (docs/format.md).
//
// Restore rebuilds a session from stored envelopes through the same rules
// (docs/format.md), and the pure functions OpenTurnClosers, ForkSeed,
// SeedWithMarker and ResumeBatch compute what the store appends on resume,
// fork and create (docs/architecture.md).
//
// The package does no I/O and starts no goroutines. The only outside code it
// calls are message-projection definitions (Projections) and the store's
// hooks in Options, all through Go interfaces.
//
// Concurrency: appends are serialized; readers load the published state with
// an atomic pointer and wait at most for the short commit section of an
// append (linking the new node in and publishing), never for validation.
package session
