package foreign

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Session ids of imported sessions (docs/import.md, "What every import
// does"): a file's main session is "<tool>-<the tool's session id>"
// (claude-code-…, codex-…, pi-…), a subagent's "<parent's id>-agent-<agent
// id>", a branch "<id>-branch-<n>" and a revision "<id>-rev-<n>". An id
// longer than MaxIDBytes keeps its first ShortIDPrefixBytes bytes, then "-"
// and the first 16 hex digits of the SHA-256 of the whole id.
const (
	// MaxIDBytes is the longest session id (sdk.ValidateSessionID).
	MaxIDBytes = 80
	// ShortIDPrefixBytes is how much of a longer id a shortened one keeps.
	ShortIDPrefixBytes = 40
)

// ShortID returns id unchanged when it is at most MaxIDBytes long, else
// its first ShortIDPrefixBytes bytes (fewer when that would cut a UTF-8
// character), "-" and the first 16 hex digits of the SHA-256 of id.
func ShortID(id string) string {
	if len(id) <= MaxIDBytes {
		return id
	}
	n := ShortIDPrefixBytes
	for n > 0 && !utf8.RuneStart(id[n]) {
		n--
	}
	sum := sha256.Sum256([]byte(id))
	return id[:n] + "-" + hex.EncodeToString(sum[:8])
}

// BaseID returns the logbook id of the session the tool calls sessionID:
// "<tool>-<sessionID>", shortened by ShortID.
func BaseID(tool, sessionID string) string { return ShortID(tool + "-" + sessionID) }

// SessionID returns the logbook id of the session a file holds: BaseID for
// a main session; for a subagent (ParentSessionID set), "<BaseID of the
// parent>-agent-<AgentID>", shortened. An id that is no valid session id
// even so (an empty tool id, control characters) is INVALID_SESSION_ID.
func SessionID(id Identity) (string, error) {
	var out string
	switch {
	case id.SessionID == "" && id.ParentSessionID == "":
		return "", sdk.Errorf(sdk.CodeInvalidSessionID, "import", "the %s file names no session id", id.Tool)
	case id.ParentSessionID != "":
		out = ShortID(BaseID(id.Tool, id.ParentSessionID) + "-agent-" + id.AgentID)
	default:
		out = BaseID(id.Tool, id.SessionID)
	}
	return out, sdk.ValidateSessionID(out)
}

// ParentID returns the logbook id of a subagent's parent session, "" for a
// main session.
func ParentID(id Identity) string {
	if id.ParentSessionID == "" {
		return ""
	}
	return BaseID(id.Tool, id.ParentSessionID)
}

// ChildID returns the id of a child of session id named suffix (a Step's
// Branch "branch-<n>", or "rev-<n>"): "<id>-<suffix>", shortened.
func ChildID(id, suffix string) string { return ShortID(id + "-" + suffix) }
