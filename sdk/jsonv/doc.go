// Package jsonv is logbook's lossless JSON validator and reader (docs/format.md).
//
// Parse checks a document against rules J2–J9 of docs/format.md in one pass and,
// in the same pass, writes its canonical encoding (docs/format.md) and a flat index
// of its values. Nothing is decoded into Go values: a Doc is the canonical
// bytes plus the index, and a Value is a read-only view of one indexed value.
//
// # Rules
//
// The first violation in document order wins; errors are *sdk.Error with
// Op "json", Seq and Index -1, and these codes:
//
//	J2  JSON_INVALID_UTF8       input is not valid UTF-8 (detail: byte offset)
//	J3  JSON_SYNTAX             not exactly one RFC 8259 value (offset, token)
//	J4  JSON_INVALID_UTF8       \uD800–\uDFFF escape not part of a high+low pair (offset)
//	J5  JSON_DUPLICATE_KEY      two members of one object with equal names
//	                            after unescaping (name, pointer of the object)
//	J6  JSON_TOO_DEEP           nesting deeper than Options.MaxDepth (pointer of
//	                            the first level too deep; the outermost container
//	                            of the limited value is depth 1, the
//	                            Options.Enclosing levels around it not counted)
//	J7  JSON_NEGATIVE_ZERO      a literal starting with '-' whose value is 0 (pointer, literal)
//	J8  JSON_NUMBER_NOT_FINITE  a literal that overflows float64 (pointer, literal)
//	J9  JSON_UNSAFE_INTEGER     an integer-form literal beyond ±(2^53−1) (pointer, literal)
//
// Where the grammar fails on a byte that starts an invalid UTF-8 sequence,
// JSON_INVALID_UTF8 is reported rather than JSON_SYNTAX (J2 outranks J3 at the
// same offset). For one number literal the checks run in the order J7, J8,
// J9: a 400-digit integer is JSON_NUMBER_NOT_FINITE. Offsets in details are
// byte offsets into the input; pointers are RFC 6901 JSON pointers relative
// to the parsed value ("" is the value itself). Names, literals and tokens in
// details are cut to 128 bytes and pointers to 2048 bytes, with "…" marking
// the cut.
//
// # Canonical encoding
//
// No insignificant whitespace; member and element order as written; number
// literals byte for byte; strings re-encoded with exactly these escapes:
// \" \\ \b \t \n \f \r and \u00xx (lowercase hex) for the other code points
// below U+0020, everything else as literal UTF-8 (no HTML escaping; '/',
// U+2028 and U+2029 are not escaped). The encoding is idempotent and never
// longer than the input. Because it is injective on strings, two member names
// are equal after unescaping exactly when their canonical bytes are equal;
// duplicate detection and Equal compare canonical bytes.
//
// # Layout
//
// A Doc holds the canonical buffer and a tape: one 16-byte node per value
// (object member names count as String values), in document order. A node
// stores its kind and flags, the [start, end) offsets of its canonical
// encoding in the buffer, the tape index just past its subtree (so siblings
// are reached by a jump, never by a walk through descendants) and, for arrays
// and objects, the number of elements or members (saturating at 2^24−1,
// past which Len counts by walking). An object's members are stored as name
// node, value node, name node, value node, … .
//
// Parse makes two allocations: the canonical buffer (len(src) bytes, the
// upper bound; copied to its exact size when whitespace made it much
// shorter) and the Doc, which holds the tape inline up to 256 nodes. With
// spare capacity of at least len(src) in dst, AppendParse makes only the
// second. The tape starts at one node per 16 input bytes and doubles when
// full; a much-too-long tape is trimmed.
//
// Duplicate member names (J5) are found without a quadratic scan: objects
// of up to 32 members keep a 64-bit filter of their names and scan their
// earlier names only on a filter hit (below depth 32 they always scan, at
// most 31 names); larger objects get a temporary hash set (hash/maphash,
// randomly seeded) that is dropped when they close.
//
// Nesting is tracked on the tape itself (an open container's node links to
// its parent), never on the Go stack, so deep input costs nothing beyond
// the tape and is rejected at the first level past MaxDepth. Equal and
// FirstDifference walk with an explicit stack as well. Offsets are 32-bit:
// the destination buffer plus the input must stay under 4 GiB, far above
// the 2 × MaxEventBytes that rule J1 admits.
//
// # Why hand-written
//
// No maintained Go JSON library rejects duplicate member names, negative
// zero, unsafe integers and lone surrogate escapes in one pass while keeping
// number literals and member order byte for byte. encoding/json decodes
// through Go values, accepts duplicates and lone surrogates (turning them
// into U+FFFD) and keeps no literal positions; encoding/json/jsontext (still
// behind GOEXPERIMENT=jsonv2 in Go 1.26) checks names and UTF-8 but knows
// nothing of negative zero or unsafe integers; the fast third-party parsers
// skip UTF-8 or duplicate checks or reformat numbers. Any of them would need
// a second pass over every event, which docs/format.md forbids. The scanner
// here is a small, explicit state machine over bytes, fuzzed against
// encoding/json (FuzzParse): whatever it accepts, encoding/json accepts and
// decodes to the same values.
package jsonv
