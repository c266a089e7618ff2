// Package compaction is logbook's optional host policy for keeping a
// session's model context within its window (docs/compaction.md). A profile
// without a compaction block never uses it, never writes compaction/*
// events, and nothing else in logbook depends on it.
//
// The analysis half, which only reads a session:
//
//   - the fixed token estimate of docs/compaction.md (EstimateMessage,
//     EstimateMessageJSON, EstimateTools);
//   - the token meter (Meter, Measure; docs/compaction.md): per-node estimates cached
//     by seq and prefix sums kept incrementally, so a measurement after k new
//     nodes costs O(k), with the provider-reported usage of the latest
//     eligible assistant message as the baseline when it is trustworthy;
//   - tool-pairing balance (docs/compaction.md) and range selection with the region
//     checks (docs/compaction.md), on the same per-session Meter;
//   - the summary instruction and the checkpoint preamble
//     (docs/compaction.md).
//
// The transaction half (CompactRegion, the pressure and overflow policies,
// manual compaction, the compaction lock and invariants) appends the
// compaction/* events and the checkpoint.
//
// Spill (docs/compaction.md) is separate host policy kept here as well: a finished tool
// result larger than a byte budget is saved whole to a local artifact store
// (LocalStore) and replaced by its head, a notice naming the saved file, and
// its tail.
//
// Token estimates are a fixed heuristic, not a tokenizer: cp(s) is the number
// of Unicode code points of s and q(x) = ceil(x/4).
//
//	text, reasoning block   q(cp(text)) + 4
//	tool-call block         q(cp(name)) + q(cp(arguments)) + 4
//	any other block         4 + q(cp(canonical JSON of the block))
//	message                 sum of its blocks + 4
//	header tools            q(cp(canonical JSON of the tools array)) + 4; 0 without tools
//
// Errors are *sdk.Error values with Op "compaction" and the codes
// COMPACTION_SURFACE_MISMATCH, COMPACTION_UNBALANCED_BOUNDARY,
// SYSTEM_NODE0_PROTECTED, TOOL_PAIRING_CORRUPT, TOOL_PAIRING_SEQ_NOT_FOUND and
// CONFIG_INVALID (Op "spill" for the spill policy and its store, which also
// reports IO_ERROR); a session error (PROJECTION_REMOVED) is returned as the
// session reported it.
package compaction
