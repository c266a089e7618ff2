package claudecode

import (
	"errors"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
)

// Name is the dialect's name, as --from takes it.
const Name = "claude-code"

// New returns the Claude Code dialect.
func New() foreign.Dialect { return dialect{} }

type dialect struct{}

func (dialect) Name() string { return Name }

// Claims reports whether text is a JSON object with a string type and a
// member only Claude Code writes (sessionId or parentUuid; leafUuid on a
// summary line, messageId on a file-history-snapshot line).
func (dialect) Claims(text []byte) bool {
	_, damage := parse(foreign.Line{Text: text, Newline: true})
	return damage == ""
}

// Identify reads the session a file holds: the sessionId, version and cwd
// of its first lines that have them. A file whose every line with a uuid is
// a sidechain line (isSidechain: true) is a subagent file: its sessionId is
// the parent session's (ParentSessionID) and its agentId, when the lines
// carry one (Claude Code 2.1 and later), is AgentID; SessionID is then the
// agent id, or the parent's id when the lines carry none (the importer
// takes the agent id from the file name agent-<id>.jsonl).
func (dialect) Identify(lines []foreign.Line) (foreign.Identity, error) {
	id := foreign.Identity{Tool: Name}
	var mainSession, anySession, agent string
	sidechain, main := false, false
	for _, l := range lines {
		r, damage := parse(l)
		if damage != "" {
			continue
		}
		if id.Version == "" {
			id.Version = r.Version
		}
		if id.CWD == "" && absolute(r.CWD) {
			id.CWD = r.CWD
		}
		if anySession == "" {
			anySession = r.SessionID
		}
		if r.UUID == "" {
			continue
		}
		if r.IsSidechain {
			sidechain = true
			if agent == "" {
				agent = r.AgentID
			}
			continue
		}
		main = true
		if mainSession == "" {
			mainSession = r.SessionID
		}
	}
	switch {
	case main && mainSession != "":
		id.SessionID = mainSession
	case sidechain && !main && anySession != "":
		id.ParentSessionID, id.AgentID = anySession, agent
		id.SessionID = anySession
		if agent != "" {
			id.SessionID = agent
		}
	case anySession != "":
		id.SessionID = anySession
	default:
		return foreign.Identity{}, errors.New("claude-code: no line names a sessionId")
	}
	return id, nil
}

// absolute reports whether a recorded cwd is an absolute path (POSIX, or a
// Windows drive path).
func absolute(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0] >= 'A' && p[0] <= 'Z' || p[0] >= 'a' && p[0] <= 'z')
}

// NewMapper maps a file of the session id identifies; a subagent file
// (ParentSessionID set) has its sidechain lines typed, a main file keeps
// them raw.
func (dialect) NewMapper(id foreign.Identity) foreign.Mapper {
	return newMapper(id.ParentSessionID != "")
}
