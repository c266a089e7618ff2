package codex

import (
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
)

// Name is the dialect's name, as --from takes it.
const Name = "codex"

// dialect is Codex's rollout format.
type dialect struct{}

// New returns the Codex dialect.
func New() foreign.Dialect { return dialect{} }

// Name implements foreign.Dialect.
func (dialect) Name() string { return Name }

// Claims reports whether text is a Codex rollout line: an envelope
// {"timestamp","type","payload"} or a line of an old rollout (a bare meta
// line, a bare response item, a {"record_type"} line).
func (dialect) Claims(text []byte) bool {
	_, damage := parseLine(text, true)
	return damage == ""
}

// Identify reads the session from the file's first session_meta (or an old
// rollout's bare meta line): its id, cli_version and cwd (when absolute).
// A session_meta that names the thread that spawned it (parent_thread_id,
// or source.subagent.thread_spawn.parent_thread_id) is a subagent's: its
// parent and its own id become ParentSessionID and AgentID. Later session_meta
// lines (the parent's, copied into a fork) are not read.
func (dialect) Identify(lines []foreign.Line) (foreign.Identity, error) {
	for _, l := range lines {
		ln, damage := parseLine(l.Text, l.Newline)
		if damage != "" || ln.kind != kindSessionMeta {
			continue
		}
		var m sessionMeta
		if json.Unmarshal(ln.payload, &m) != nil || m.ID == "" {
			continue
		}
		id := foreign.Identity{Tool: Name, SessionID: m.ID, Version: m.CLIVersion}
		if filepath.IsAbs(m.CWD) {
			id.CWD = m.CWD
		}
		if parent := m.parentThread(); parent != "" {
			id.ParentSessionID, id.AgentID = parent, m.ID
		}
		return id, nil
	}
	return foreign.Identity{}, errors.New("codex: no session_meta line with an id: not a Codex rollout")
}

// NewMapper implements foreign.Dialect.
func (dialect) NewMapper(foreign.Identity) foreign.Mapper {
	return &mapper{provider: "openai", model: "unknown"}
}
