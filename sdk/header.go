package sdk

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// FormatVersion is the logbook on-disk format version this build writes and
// reads (docs/format.md).
const FormatVersion = 5

// Header is a session's identity and lineage (docs/architecture.md), fixed at creation.
type Header struct {
	FormatVersion int
	ID            string
	// Tenant is the tenant the session belongs to (ValidateTenant); "" is
	// the implicit tenant (DefaultTenant), stored as no header member. Ids
	// are unique within a tenant; fork, salvage and import children stay
	// in their source's tenant.
	Tenant              string
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
	// Labels are the caller's string → string labels, set at create only
	// (ValidateLabels gives the rules; docs/storage.md); nil or empty means
	// none, stored as no header member. Fork and salvage children inherit
	// them. A header's map is never changed once the header is built.
	Labels map[string]string
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

// Label limits (docs/storage.md, "The session header").
const (
	// MaxLabels is the most labels a session header holds.
	MaxLabels = 32
	// MaxLabelKeyBytes is the longest label key.
	MaxLabelKeyBytes = 64
	// MaxLabelValueBytes is the longest label value.
	MaxLabelValueBytes = 1024
)

// ValidateLabels checks the labels of a create (docs/storage.md): at most
// MaxLabels entries; each key 1–MaxLabelKeyBytes bytes of [a-z0-9._/-]
// starting with a letter or digit; each value at most MaxLabelValueBytes
// bytes of valid UTF-8 without control characters (U+0000–U+001F,
// U+007F–U+009F). The first broken rule, in key order, is a USAGE *Error
// with Op op naming it.
func ValidateLabels(op string, labels map[string]string) error {
	if len(labels) > MaxLabels {
		return Errorf(CodeUsage, op, "labels: %d entries; a session holds at most %d", len(labels), MaxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if err := labelKeyRule(k); err != "" {
			return Errorf(CodeUsage, op, "label key %s %s", strconv.Quote(k), err)
		}
		if err := labelValueRule(labels[k]); err != "" {
			return Errorf(CodeUsage, op, "label %s: the value %s", strconv.Quote(k), err)
		}
	}
	return nil
}

// labelKeyRule returns the rule key breaks, "" when none.
func labelKeyRule(k string) string {
	if len(k) == 0 || len(k) > MaxLabelKeyBytes {
		return "must be 1–64 bytes of [a-z0-9._/-] starting with a letter or digit; got " + strconv.Itoa(len(k)) + " bytes"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if i == 0 && !alnum || !alnum && c != '.' && c != '_' && c != '/' && c != '-' {
			return "must be 1–64 bytes of [a-z0-9._/-] starting with a letter or digit"
		}
	}
	return ""
}

// labelValueRule returns the rule v breaks, "" when none.
func labelValueRule(v string) string {
	if len(v) > MaxLabelValueBytes {
		return "is " + strconv.Itoa(len(v)) + " bytes; at most 1024 bytes of UTF-8 without control characters"
	}
	if !utf8.ValidString(v) {
		return "is not valid UTF-8"
	}
	for _, r := range v {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return "has control character " + strconv.QuoteRune(r) + "; at most 1024 bytes of UTF-8 without control characters"
		}
	}
	return ""
}

// MaxOperationIDBytes is the longest operation id (docs/format.md,
// "Operation ids").
const MaxOperationIDBytes = 128

// ValidateOperationID checks an append's operation id (docs/format.md,
// "Operation ids"): 1–128 bytes of printable ASCII (0x20–0x7E), else
// OPERATION_ID_INVALID naming the rule.
func ValidateOperationID(id string) error {
	if len(id) == 0 || len(id) > MaxOperationIDBytes {
		return Errorf(CodeOperationIDInvalid, "append", "operation id must be 1–128 bytes of printable ASCII (0x20–0x7E); got %d bytes", len(id))
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e {
			return Errorf(CodeOperationIDInvalid, "append", "operation id must be 1–128 bytes of printable ASCII (0x20–0x7E); byte %d is 0x%02x", i, c)
		}
	}
	return nil
}

// Equal reports whether h and o are the same header: every field equal,
// and the same labels (nil and empty alike mean none).
func (h Header) Equal(o Header) bool {
	return h.FormatVersion == o.FormatVersion && h.ID == o.ID && h.Tenant == o.Tenant && h.CreatedAt == o.CreatedAt && h.CWD == o.CWD &&
		h.ParentSession == o.ParentSession && h.Origin == o.Origin && h.DelegationDepth == o.DelegationDepth &&
		h.AgentPreset == o.AgentPreset && h.IsSeeded == o.IsSeeded && h.InheritedEventCount == o.InheritedEventCount &&
		h.Protocol == o.Protocol && maps.Equal(h.Labels, o.Labels)
}
