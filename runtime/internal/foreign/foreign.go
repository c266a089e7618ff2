// Package foreign maps the session files of other agent tools (Claude Code,
// Codex, pi) to logbook events. It holds what every dialect shares: the
// source line, the identity a file reveals, and the Mapper a dialect gives
// the importer (runtime/service drives it: one raw source/line record per
// line, followed by the typed events the Mapper derives). docs/import.md
// describes each mapping.
package foreign

import (
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Line is one line of a source file as it was read.
type Line struct {
	// N is the 1-based line number in its file.
	N int
	// Text is the line's bytes without the line feed that ends it (a
	// carriage return before it stays in Text).
	Text []byte
	// Newline is false only for a last line that no line feed ends.
	Newline bool
}

// Identity is what a file says about the session it holds.
type Identity struct {
	// Tool is the dialect's name: "claude-code", "codex" or "pi".
	Tool string
	// SessionID is the tool's own id of the session (Claude Code's
	// sessionId, Codex's session_meta id, pi's header id).
	SessionID string
	// Version is the tool's version as the file records it, or "".
	Version string
	// CWD is the working directory the file records (absolute), or "".
	CWD string
	// ParentSessionID, for a subagent or sidechain file, is the tool's id
	// of the session that started it; AgentID is the subagent's id. Both
	// "" for a main session.
	ParentSessionID, AgentID string
}

// Step is what one source line (or the end of the available input) adds to
// the session after the line's raw record.
type Step struct {
	// Branch, when not "", asks the importer to fork the session as it
	// stands (raw record included) into the child "<id>-<Branch>" (for
	// example "branch-1") before it appends Inputs.
	Branch string
	// BranchAfter is how many of Inputs are appended before the fork (to
	// the session as it stands, so the child holds them too); 0 forks right
	// after the raw record. A line that moves to another branch may first
	// complete what belongs to the branch it leaves (an assistant message
	// merged from several lines). Ignored without Branch.
	BranchAfter int
	// Inputs are the typed events the line completes, appended in order
	// right after the raw record (the fork comes after the first
	// BranchAfter of them). They may complete earlier lines too (an
	// assistant message merged from several lines). They are appended as
	// consecutive atomic groups (Groups), so a Step may hold several
	// surface events; a replace is never grouped with another.
	Inputs []events.Input
	// Damage, when not "", says why the line could not be read (not JSON,
	// torn, not this tool's): the raw record carries it and the import
	// summary reports it.
	Damage string
}

// Mapper maps one file's lines, in order. The importer gives it the seq
// each raw record gets, so a Step may name earlier seqs (a checkpoint
// replacing a range, a rewritten tool result). On an incremental import
// the importer replays the lines already stored, with the seqs and the
// Accepted answers the log proves, before it feeds new lines; a Mapper must
// therefore be a pure function of what it is fed.
type Mapper interface {
	// Line maps the next line, whose raw record gets seq; the Step's inputs
	// will follow it from seq+1.
	Line(l Line, seq sdk.Seq) Step
	// Accepted reports whether the inputs of the last Step (of Line or End)
	// were stored: false when the store refused them and the line was kept
	// raw only.
	Accepted(ok bool)
	// End maps what the end of the available input completes (an assistant
	// message whose last block was the last line read). next is the seq its
	// first input gets. Feeding continues after End when the file grows.
	End(next sdk.Seq) Step
}

// Dialect is one tool's session format.
type Dialect interface {
	// Name is the tool's name as --from takes it.
	Name() string
	// Claims reports whether a line has this tool's shape (for --from
	// auto, which picks the dialect that claims most of a file's lines).
	Claims(text []byte) bool
	// Identify reads the identity of the session a file holds from its
	// lines; an error names why the file holds no session of this tool.
	Identify(lines []Line) (Identity, error)
	// NewMapper starts mapping a file of the session id identifies.
	NewMapper(id Identity) Mapper
}

// Groups splits inputs into the consecutive atomic groups the importer
// appends: a new group starts at each surface event after the group's
// first, so a group holds at most one surface event (as session groups
// require) and the log-only events after a surface event stay with it (a
// compaction's summary, checkpoint and end go in together).
func Groups(inputs []events.Input) [][]events.Input {
	var out [][]events.Input
	start, surface := 0, false
	for i, in := range inputs {
		if in.SurfaceOp == nil {
			continue
		}
		if surface {
			out = append(out, inputs[start:i:i])
			start = i
		}
		surface = true
	}
	if start < len(inputs) {
		out = append(out, inputs[start:])
	}
	return out
}
