// Package protocolcases is the fixture every door's agent-loop protocol
// test runs (docs/format.md, "The agent-loop protocol"): the Go packages,
// /v1, Connect, the CLI and the clients all load testdata/cases.json, so
// each door proves the same rules with the same events. The TypeScript and
// Python clients read the file itself.
//
// The fixture holds four lists:
//
//   - refused: one case per rule. Appending Prefix to a fresh strict
//     session succeeds, then Event is refused with Code and Meta and
//     changes nothing: the log keeps its length and its last event, and
//     Next (legal after Prefix, and a sign that the loop state is as the
//     prefix left it) gets seq len(Prefix).
//   - legal: whole sequences a fresh strict session accepts.
//   - groups: Prefix appended, then Group as one atomic group whose member
//     Index breaks a rule (Code, Meta): nothing of the group is appended,
//     and Next gets seq len(Prefix).
//   - operations: appends under operation ids (docs/format.md, "Operation
//     ids"). Prefix appended to a fresh strict session, then each Step in
//     order: its Events under its OperationID (none: a plain append),
//     appended with Seqs, replayed (Replayed: the original's Seqs, nothing
//     appended) or refused with Code, Meta and Index (nothing appended).
//
// A session created lenient accepts every refused Event after its Prefix.
// Every input is one append input line as `logbook append` and /v1 take it
// (type, data, and optionally surfaceOp and sourceEventSeqs).
package protocolcases

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

//go:embed testdata/cases.json
var fixture []byte

// Codes are the codes of the agent-loop rules; every one has a refused case.
var Codes = []sdk.Code{
	sdk.CodeTurnAlreadyOpen, sdk.CodeTurnNotIncreasing, sdk.CodeTurnNotOpen,
	sdk.CodeStepAlreadyOpen, sdk.CodeStepNotOpen, sdk.CodeStepNotIncreasing,
	sdk.CodeTurnStepMismatch, sdk.CodeToolCallNotAnnounced, sdk.CodeToolCallRepeated,
	sdk.CodeToolResultUnmatched, sdk.CodeToolResultRepeated, sdk.CodeToolCallsUnanswered,
}

// AppendReport are the Meta keys an append's error may carry besides the
// rule's own (how much of the request was appended, and where).
var AppendReport = []string{"appended", "firstSeq"}

// Cases is the fixture.
type Cases struct {
	Refused []Refused `json:"refused"`
	Legal   []Legal   `json:"legal"`
	Groups  []Group   `json:"groups"`
	// Operations are run by the doors that append under an operation id.
	Operations []Operation `json:"operations"`
}

// Refused is one rule's case: Event after Prefix is refused.
type Refused struct {
	Name   string            `json:"name"`
	Prefix []Input           `json:"prefix"`
	Event  Input             `json:"event"`
	Code   sdk.Code          `json:"code"`
	Meta   map[string]string `json:"meta"`
	Next   Input             `json:"next"`
}

// Legal is a sequence a strict session accepts.
type Legal struct {
	Name   string  `json:"name"`
	Events []Input `json:"events"`
}

// Group is an atomic group refused for its member Index.
type Group struct {
	Name   string            `json:"name"`
	Prefix []Input           `json:"prefix"`
	Group  []Input           `json:"group"`
	Index  int               `json:"index"`
	Code   sdk.Code          `json:"code"`
	Meta   map[string]string `json:"meta"`
	Next   Input             `json:"next"`
}

// Operation is a sequence of appends under operation ids, in a fresh
// strict session after Prefix.
type Operation struct {
	Name   string  `json:"name"`
	Prefix []Input `json:"prefix"`
	Steps  []Step  `json:"steps"`
}

// Step is one append of an Operation: Events under OperationID (absent: a
// plain append, not atomic), in one request. Without Code it succeeds and
// answers the events at Seqs: appended now, or the original operation's
// when Replayed (nothing appended). With Code it is refused with Meta, its
// member Index at fault (0 when the refusal is not a member's), and
// nothing is appended.
type Step struct {
	OperationID *string           `json:"operationId"`
	Events      []Input           `json:"events"`
	Seqs        []sdk.Seq         `json:"seqs"`
	Replayed    bool              `json:"replayed"`
	Code        sdk.Code          `json:"code"`
	Meta        map[string]string `json:"meta"`
	Index       int               `json:"index"`
}

// Input is one append input line.
type Input struct {
	line []byte
	in   events.Input
}

// Line returns the input's line as the fixture writes it (no newline).
func (i Input) Line() []byte { return i.line }

// Input returns the input for the Go API.
func (i Input) Input() events.Input { return i.in }

// UnmarshalJSON reads an input line: an object with type and data and
// optionally surfaceOp ("append" or {"op":"replace","startSeq","endSeq"})
// and sourceEventSeqs.
func (i *Input) UnmarshalJSON(b []byte) error {
	var w struct {
		Type            string          `json:"type"`
		Data            json.RawMessage `json:"data"`
		SurfaceOp       json.RawMessage `json:"surfaceOp"`
		SourceEventSeqs []sdk.Seq       `json:"sourceEventSeqs"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	i.line = append([]byte(nil), b...)
	i.in = events.Input{Type: w.Type, Data: w.Data, SourceEventSeqs: w.SourceEventSeqs}
	switch op := string(w.SurfaceOp); op {
	case "":
	case `"append"`:
		i.in.SurfaceOp = events.Append()
	default:
		var r struct {
			Op               string
			StartSeq, EndSeq sdk.Seq
		}
		if err := json.Unmarshal(w.SurfaceOp, &r); err != nil || r.Op != "replace" {
			return fmt.Errorf("protocolcases: surfaceOp %s is neither \"append\" nor a replacement", op)
		}
		i.in.SurfaceOp = events.Replace(r.StartSeq, r.EndSeq)
	}
	return nil
}

// Load returns the fixture, checked: every code of Codes has a refused
// case, and no case names another code.
func Load() (Cases, error) {
	var c Cases
	if err := json.Unmarshal(fixture, &c); err != nil {
		return c, fmt.Errorf("protocolcases: testdata/cases.json: %w", err)
	}
	seen := map[sdk.Code]bool{}
	for _, r := range c.Refused {
		if !slices.Contains(Codes, r.Code) {
			return c, fmt.Errorf("protocolcases: case %q names %s, not a loop code", r.Name, r.Code)
		}
		seen[r.Code] = true
	}
	for _, code := range Codes {
		if !seen[code] {
			return c, fmt.Errorf("protocolcases: no refused case for %s", code)
		}
	}
	if len(c.Legal) == 0 || len(c.Groups) == 0 || len(c.Operations) == 0 {
		return c, fmt.Errorf("protocolcases: the fixture has %d legal sequences, %d groups and %d operations; it needs each", len(c.Legal), len(c.Groups), len(c.Operations))
	}
	return c, nil
}

// MetaError compares an error's Meta with a case's: every key of want with
// its value, and no other key but those of AppendReport. It returns nil
// when they agree.
func MetaError(got, want map[string]string) error {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return fmt.Errorf("Meta %v, want %v", got, want)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && !slices.Contains(AppendReport, k) {
			return fmt.Errorf("Meta %v has %q beyond the rule's %v", got, k, slices.Sorted(maps.Keys(want)))
		}
	}
	return nil
}
