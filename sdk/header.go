package sdk

import (
	"strconv"
	"unicode/utf8"
)

// FormatVersion is the logbook on-disk format version this build writes and
// reads (docs/format.md).
const FormatVersion = 2

// Header is a session's identity and lineage (docs/architecture.md), fixed at creation.
type Header struct {
	FormatVersion       int
	ID                  string
	CreatedAt           int64  // epoch ms
	CWD                 string // "" or absolute
	ParentSession       string
	Origin              string // "" or "subagent"
	DelegationDepth     int64  // ≥ 0
	AgentPreset         string
	IsSeeded            bool
	InheritedEventCount int64 // meaningful only when IsSeeded
	// Protocol is how appends are checked against the agent-loop protocol
	// (docs/format.md): "" (strict, the default; stored without the member)
	// or ProtocolLenient. Fork and salvage children inherit it.
	Protocol string
}

// The agent-loop protocols a session header may name (docs/format.md).
const (
	// ProtocolStrict checks every appended event against the loop rules; it
	// is the default, and a header stores it by leaving the member out.
	ProtocolStrict = "strict"
	// ProtocolLenient skips the loop rules (never the payload rules), for
	// loops written by other tools and harnesses that cannot follow them.
	ProtocolLenient = "lenient"
)

// ParseProtocol checks the protocol a create asks for and returns it as a
// header holds it: "" and ProtocolStrict give "" (strict, the default,
// stored as no header member), ProtocolLenient gives itself, and anything
// else is USAGE naming the allowed values.
func ParseProtocol(p string) (string, error) {
	switch p {
	case "", ProtocolStrict:
		return "", nil
	case ProtocolLenient:
		return p, nil
	}
	return "", Errorf(CodeUsage, "create", "protocol %q must be %q or %q", p, ProtocolStrict, ProtocolLenient)
}

// ValidateSessionID checks docs/architecture.md: 1–80 bytes of valid UTF-8 without
// U+0000–U+001F or U+007F. It returns an INVALID_SESSION_ID *Error.
func ValidateSessionID(id string) error {
	if len(id) == 0 || len(id) > 80 {
		return Errorf(CodeInvalidSessionID, "session", "session id must be 1–80 bytes; got %d bytes", len(id))
	}
	if !utf8.ValidString(id) {
		return Errorf(CodeInvalidSessionID, "session", "session id %s is not valid UTF-8", strconv.Quote(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c == 0x7f {
			return Errorf(CodeInvalidSessionID, "session", "session id %s has control byte 0x%02x at %d", strconv.Quote(id), c, i)
		}
	}
	return nil
}

// ForkPoint returns the seq, in ParentSession's log, of the last event the
// session inherited from its parent (the boundary it was forked at), and
// false when it inherited none: it is not seeded, or was forked from an
// empty log.
func (h Header) ForkPoint() (Seq, bool) {
	if !h.IsSeeded || h.ParentSession == "" || h.InheritedEventCount <= 0 {
		return 0, false
	}
	return Seq(h.InheritedEventCount - 1), true
}
