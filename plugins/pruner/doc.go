// Package pruner is logbook's model-free tool-result pruner (docs/compaction.md): a
// plugin of kind "pruner" that shortens oversized tool results by cutting
// the middle of their text. The logbook binary serves it as
// `logbook plugin pruner` (ServeConfig); the host decides which nodes to
// offer and appends the rewrites.
//
// # Algorithm (docs/compaction.md)
//
// Lengths are Unicode code points, and only `text` blocks count. For a
// budget (thresholdChars, headChars, tailChars) and the marker
//
//	M = "\n\n[... middle of tool output removed ...]\n\n"   (43 code points)
//
// a tool result whose text blocks hold total ≤ thresholdChars code points
// is left alone. Otherwise the code points [headChars, total − tailChars)
// of the concatenated text blocks are cut: each text block overlapping the
// cut keeps only its parts outside it, M is inserted once at the cut
// position inside the first overlapping block, text blocks left empty (and
// empty text blocks strictly inside the cut) are dropped, and every other
// block (images, plugin blocks, text blocks the cut does not reach) stays
// byte for byte where it was. (M never lands in an empty block: the block
// holding code point headChars comes first.) The result holds
// headChars + cp(M) + tailChars ≤ thresholdChars text code points, so a
// second run leaves it alone: the pruner is idempotent.
//
// The budget must have all three values ≥ 0 and headChars + cp(M) +
// tailChars ≤ thresholdChars; anything else is CONFIG_INVALID. The host
// sends the budget with every request (defaults 8192 / 4096 / 1024, see
// DefaultBudget); the plugin takes no config block.
//
// # Content encoding
//
// The offered message is the node's derived message in canonical JSON
// (docs/format.md), read with sdk/jsonv. The replacement content is a canonical
// JSON array: untouched blocks are copied byte for byte, and a shortened
// text block keeps all its members in order with only `text` changed.
// Texts are cut in their canonical encoding, which encodes every code
// point on its own, so they are never decoded and re-encoded.
package pruner
