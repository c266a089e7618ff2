package foreigntest

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Lines returns "test-lines", a small dialect for the importer's tests. Its
// lines are JSON objects with a "lines" member (the session's id) and
// "text", a user prompt. The first such line may name "version", "cwd",
// and "parent" and "agent" (a subagent). A line with "merge":K joins the
// text of the following lines with the same K into one prompt, appended
// when another line (or End) comes; "branch":true asks for a branch fork;
// "bad":true adds an input the session refuses (PAYLOAD_INVALID). A JSON
// line without "lines" maps to nothing; anything else is damage.
func Lines() foreign.Dialect { return linesDialect{} }

type linesDialect struct{}

// lineJSON is one test-lines line.
type lineJSON struct {
	Lines   *string `json:"lines"`
	Text    string  `json:"text"`
	Version string  `json:"version"`
	CWD     string  `json:"cwd"`
	Parent  string  `json:"parent"`
	Agent   string  `json:"agent"`
	Merge   string  `json:"merge"`
	Branch  bool    `json:"branch"`
	Bad     bool    `json:"bad"`
}

func parseLine(b []byte) (lineJSON, bool) {
	var l lineJSON
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &l) != nil {
		return l, false
	}
	return l, true
}

func (linesDialect) Name() string { return "test-lines" }

func (linesDialect) Claims(b []byte) bool {
	l, ok := parseLine(b)
	return ok && l.Lines != nil
}

func (linesDialect) Identify(lines []foreign.Line) (foreign.Identity, error) {
	for _, ln := range lines {
		if l, ok := parseLine(ln.Text); ok && l.Lines != nil {
			return foreign.Identity{Tool: "test-lines", SessionID: *l.Lines, Version: l.Version, CWD: l.CWD, ParentSessionID: l.Parent, AgentID: l.Agent}, nil
		}
	}
	return foreign.Identity{}, errors.New("no line names its session")
}

func (linesDialect) NewMapper(foreign.Identity) foreign.Mapper { return &linesMapper{} }

// linesMapper holds the prompt being merged and how many branches it asked
// for.
type linesMapper struct {
	merge    string
	mergeSeq sdk.Seq
	text     string
	branches int
}

func (m *linesMapper) flush() []events.Input {
	if m.merge == "" {
		return nil
	}
	in := events.UserText(events.TextMessage{ID: "m" + strconv.FormatInt(int64(m.mergeSeq), 10), Text: m.text})
	m.merge, m.text = "", ""
	return []events.Input{in}
}

func (m *linesMapper) Line(ln foreign.Line, seq sdk.Seq) foreign.Step {
	l, ok := parseLine(ln.Text)
	if !ok {
		return foreign.Step{Damage: "not a JSON object"}
	}
	if l.Lines == nil {
		return foreign.Step{}
	}
	var st foreign.Step
	if l.Merge != "" && l.Merge == m.merge {
		m.text += l.Text
		return st
	}
	st.Inputs = m.flush()
	if l.Branch {
		m.branches++
		st.Branch = "branch-" + strconv.Itoa(m.branches)
	}
	if l.Merge != "" {
		m.merge, m.mergeSeq, m.text = l.Merge, seq, l.Text
	} else {
		st.Inputs = append(st.Inputs, events.UserText(events.TextMessage{ID: "m" + strconv.FormatInt(int64(seq), 10), Text: l.Text}))
	}
	if l.Bad {
		st.Inputs = append(st.Inputs, events.Input{Type: events.TypeUserMessage, Data: json.RawMessage(`{"id":"bad"}`), SurfaceOp: events.Append()})
	}
	return st
}

func (m *linesMapper) Accepted(bool) {}

func (m *linesMapper) End(sdk.Seq) foreign.Step { return foreign.Step{Inputs: m.flush()} }
