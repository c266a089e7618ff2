package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// MinSupportedFormat is the oldest format version this build reads (docs/format.md).
const MinSupportedFormat = 1

// Edge migrates a session from format From to From+1 (docs/format.md). Header and
// Events are streaming stages: an edge carries unknown ignorable events
// forward byte-exact or refuses with FORMAT_MIGRATION_REFUSED, never drops
// them. Events nil means the edge leaves every envelope byte-exact, so a
// backend stores the new version by replacing the header alone.
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
func migrations() []Edge {
	return []Edge{{From: 1, To: 2, Header: func(h []byte) ([]byte, error) { return setHeaderVersion(h, 2) }}}
}

// MigrateHeader runs the header stages of the chain from version from up
// to FormatVersion over header, the stored header JSON of session id, and
// returns the migrated header (header itself when from is current). Every
// edge on the way must keep the envelopes byte-exact (Events nil), as the
// backends of this build store a migration by replacing the header alone;
// an edge that does not is FORMAT_MIGRATION_REFUSED.
func MigrateHeader(id string, from int, header []byte) ([]byte, error) {
	for _, e := range Migrations() {
		if e.From < from {
			continue
		}
		if e.Events != nil {
			return nil, Errorf(CodeFormatMigrationRefused, "format", "session %s: migration v%d→v%d rewrites events, and this build stores header migrations only", strconv.Quote(id), e.From, e.To).WithSession(id)
		}
		var err error
		if header, err = e.Header(header); err != nil {
			return nil, Wrapf(CodeFormatMigrationRefused, "format", err, "session %s: migration v%d→v%d", strconv.Quote(id), e.From, e.To).WithSession(id)
		}
	}
	return header, nil
}

// setHeaderVersion returns the header JSON h with its top-level "version"
// member's value replaced by v, every other byte kept.
func setHeaderVersion(h []byte, v int) ([]byte, error) {
	if !json.Valid(h) {
		return nil, fmt.Errorf("the header is not JSON")
	}
	d := json.NewDecoder(bytes.NewReader(h))
	d.UseNumber()
	depth, key := 0, true
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil, fmt.Errorf(`the header has no "version" member`)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the header: %w", err)
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				depth++
			} else {
				depth--
			}
			key = depth == 1
			continue
		case string:
			if depth == 1 && key && t == "version" {
				num, err := d.Token()
				n, ok := num.(json.Number)
				if err != nil || !ok {
					return nil, fmt.Errorf(`the header's "version" is not a number`)
				}
				end := int(d.InputOffset())
				start := end - len(n)
				out := append(append(append([]byte{}, h[:start]...), strconv.Itoa(v)...), h[end:]...)
				return out, nil
			}
		}
		if depth == 1 {
			key = !key
		}
	}
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
