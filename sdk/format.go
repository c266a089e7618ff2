package sdk

import (
	"fmt"
	"strconv"
)

// MinSupportedFormat is the oldest format version this build reads (docs/format.md).
const MinSupportedFormat = 1

// Edge migrates a session from format From to From+1 (docs/format.md).
// sdk/headerjson sets the header's "version" member to To on every edge;
// Header and Events are further streaming stages, nil when the edge needs
// none. Header rewrites the header JSON after its version is set. Events
// carries unknown ignorable events forward byte-exact or refuses with
// FORMAT_MIGRATION_REFUSED, never drops them; Events nil means the edge
// leaves every envelope byte-exact, so a backend stores the new version by
// replacing the header alone.
type Edge struct {
	From, To int
	Header   func(header []byte) ([]byte, error)
	Events   func(envelope []byte) ([][]byte, error)
}

// migrations returns the static, build-time list of adjacent edges;
// plugins cannot add edges.
//
// 1→2: the header's "version" becomes 2 and nothing else changes: a v1
// header has no "protocol" member, so the migrated session is strict, and
// every envelope is kept byte-exact.
//
// 2→3: the header's "version" becomes 3 and nothing else changes: a v2
// header has no "labels" member and a v2 envelope no "operation" member
// (docs/format.md, "Operation ids"), so every envelope is kept byte-exact.
//
// 3→4: the header's "version" becomes 4 and nothing else changes: a v3 log
// holds no source/line event (docs/format.md, "source/line"), so every
// envelope is kept byte-exact.
//
// 4→5: the header's "version" becomes 5 and nothing else changes: a v4
// header has no "tenant" member, so the migrated session belongs to the
// implicit tenant (docs/operations.md, "Tenants"), and every envelope is
// kept byte-exact.
func migrations() []Edge {
	return []Edge{{From: 1, To: 2}, {From: 2, To: 3}, {From: 3, To: 4}, {From: 4, To: 5}}
}

// Migrations returns the migration edges in order, after checking that they
// form a gap-free chain from MinSupportedFormat to FormatVersion. A broken
// chain is a bug in this build, so it panics.
func Migrations() []Edge {
	edges := migrations()
	next := MinSupportedFormat
	for _, e := range edges {
		if e.From != next || e.To != e.From+1 {
			panic(fmt.Sprintf("sdk: migration edge %d→%d breaks the chain at %d", e.From, e.To, next))
		}
		next = e.To
	}
	if next != FormatVersion {
		panic(fmt.Sprintf("sdk: migrations reach v%d, not the current v%d", next, FormatVersion))
	}
	return edges
}

// CheckFormatVersion is the format gate of docs/format.md, run on the raw version
// literal of a stored session before any other decoding. literal is the JSON
// number as written (for SQLite, the decimal column value); artifact names
// the file or database for the message. A literal that is not an
// integer-form number is CORRUPT_LOG; a newer version is FORMAT_TOO_NEW; an
// older unsupported one FORMAT_UNSUPPORTED.
func CheckFormatVersion(id, literal, artifact string) (int, error) {
	v, err := strconv.ParseInt(literal, 10, 64)
	if err != nil || literal == "" || literal[0] == '+' || (len(literal) > 1 && literal[0] == '0') || (len(literal) > 1 && literal[0] == '-' && literal[1] == '0') {
		return 0, Errorf(CodeCorruptLog, "format", "session %s: format version %q is not an integer%s", strconv.Quote(id), literal, where(artifact))
	}
	switch {
	case v > FormatVersion:
		e := Errorf(CodeFormatTooNew, "format", "session %s uses logbook format v%d; this build reads v%d; upgrade logbook to open it%s", strconv.Quote(id), v, FormatVersion, where(artifact))
		e.SessionID = id
		return 0, e
	case v < MinSupportedFormat:
		e := Errorf(CodeFormatUnsupported, "format", "session %s uses logbook format v%d; this build reads v%d to v%d%s", strconv.Quote(id), v, MinSupportedFormat, FormatVersion, where(artifact))
		e.SessionID = id
		return 0, e
	}
	return int(v), nil
}

func where(artifact string) string {
	if artifact == "" {
		return ""
	}
	return " (" + artifact + ")"
}
