package events

import "github.com/seed-e5e476df/logbook/sdk"

// CreateOptions are the caller's part of a new session's header
// (docs/storage.md), the same for the in-process runtime and the daemon
// client; the zero value is a plain top-level session.
type CreateOptions struct {
	CWD             string // the agent's working directory: "" or absolute
	Origin          string // "" or "subagent"
	DelegationDepth int64  // how many delegations deep a subagent is: ≥ 0
	AgentPreset     string // the preset the agent runs with, if any
	ParentSession   string // the session that started this one, if any
	// Protocol is "" or sdk.ProtocolStrict (appends follow the agent-loop
	// protocol of docs/format.md), or sdk.ProtocolLenient (they skip it).
	Protocol string
	// Labels are string → string labels stored in the header (at most 32;
	// keys 1–64 bytes of [a-z0-9._/-] starting with a letter or digit;
	// values up to 1024 bytes of UTF-8 without control characters; see
	// docs/storage.md), set at create only; anything else is USAGE naming
	// the rule. Fork and salvage children inherit them.
	Labels map[string]string
}

// ListEntry is one session of a listing: the primary backend's entry for
// it (Err set, and Header possibly zero, when the session cannot be read;
// it is listed anyway) and whether it is live in the runtime that lists.
type ListEntry struct {
	sdk.ListEntry
	Live bool
}
