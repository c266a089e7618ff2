package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// refLoop is the test's own model of the agent-loop protocol, written
// from the table of docs/format.md ("The agent-loop protocol") with
// encoding/json and plain maps, sharing no code with loopState: the open
// turn and step (-1 for none), the highest turn and the open turn's
// highest step, and the open step's announced, called and answered ids.
type refLoop struct {
	turn, lastTurn, step, lastStep int64
	announced                      []string
	called, answered               map[string]bool
}

func newRefLoop() *refLoop {
	return &refLoop{turn: -1, lastTurn: -1, step: -1, called: map[string]bool{}, answered: map[string]bool{}}
}

// refData is what the rules read of an event's data.
type refData struct {
	Turn    int64  `json:"turn"`
	Step    int64  `json:"step"`
	CallID  string `json:"callId"`
	Message struct {
		ToolCallID string `json:"toolCallId"`
		Content    []struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		} `json:"content"`
	} `json:"message"`
	Source struct {
		Kind string `json:"kind"`
	} `json:"source"` // a user/message's data is the message itself
}

func (m *refLoop) pending() []string {
	var ids []string
	for _, id := range m.announced {
		if !m.answered[id] {
			ids = append(ids, id)
		}
	}
	return ids
}

func (m *refLoop) newStep() {
	m.announced = nil
	m.called, m.answered = map[string]bool{}, map[string]bool{}
}

// apply checks e against the rules, top to bottom per event as the table
// lists them, and moves the model on; it returns the code of the first
// rule e breaks ("" for none), leaving the model as it was then.
func (m *refLoop) apply(e Event) sdk.Code {
	var d refData
	if err := json.Unmarshal(e.Data(), &d); err != nil {
		return "DATA"
	}
	op, _ := e.SurfaceOp()
	inOpen := d.Turn == m.turn && d.Step == m.step
	switch typ := e.Type(); typ {
	case TypeTurnStart:
		switch {
		case m.turn >= 0:
			return sdk.CodeTurnAlreadyOpen
		case d.Turn <= m.lastTurn:
			return sdk.CodeTurnNotIncreasing
		}
		m.turn, m.lastTurn, m.step, m.lastStep = d.Turn, d.Turn, -1, 0
		m.newStep()
	case TypeTurnEnd:
		switch {
		case m.turn < 0 || d.Turn != m.turn:
			return sdk.CodeTurnNotOpen
		case m.step >= 0:
			return sdk.CodeStepAlreadyOpen
		}
		m.turn, m.step = -1, -1
		m.newStep()
	case TypeStepStart:
		switch {
		case m.turn < 0:
			return sdk.CodeTurnNotOpen
		case d.Turn != m.turn:
			return sdk.CodeTurnStepMismatch
		case m.step >= 0:
			return sdk.CodeStepAlreadyOpen
		case d.Step <= m.lastStep: // step 0 means outside any step
			return sdk.CodeStepNotIncreasing
		}
		m.step, m.lastStep = d.Step, d.Step
		m.newStep()
	case TypeStepEnd:
		switch {
		case m.step < 0:
			return sdk.CodeStepNotOpen
		case d.Turn != m.turn:
			return sdk.CodeTurnStepMismatch
		case d.Step != m.step:
			return sdk.CodeStepNotOpen
		case len(m.pending()) > 0:
			return sdk.CodeToolCallsUnanswered
		}
		m.step = -1
		m.newStep()
	case TypeAssistantMessage, TypeAssistantAttempt, TypeToolCall, TypeToolResult:
		if typ == TypeToolResult && op.Replace {
			return "" // the pruner's rewrite: exempt
		}
		switch {
		case m.step < 0:
			return sdk.CodeStepNotOpen
		case !inOpen:
			return sdk.CodeTurnStepMismatch
		}
		switch typ {
		case TypeAssistantMessage:
			if len(m.pending()) > 0 {
				return sdk.CodeToolCallsUnanswered
			}
			var ids []string
			for _, b := range d.Message.Content {
				if b.Type == "tool-call" {
					if slices.Contains(m.announced, b.ID) {
						return sdk.CodeToolCallRepeated
					}
					ids = append(ids, b.ID)
				}
			}
			m.announced = append(m.announced, ids...)
		case TypeToolCall:
			switch {
			case !slices.Contains(m.announced, d.CallID):
				return sdk.CodeToolCallNotAnnounced
			case m.called[d.CallID]:
				return sdk.CodeToolCallRepeated
			}
			m.called[d.CallID] = true
		case TypeToolResult:
			id := d.Message.ToolCallID
			switch {
			case !slices.Contains(m.announced, id):
				return sdk.CodeToolResultUnmatched
			case m.answered[id]:
				return sdk.CodeToolResultRepeated
			}
			m.answered[id] = true
		}
	case TypeSystemMessage, TypeDeveloperMessage:
		outside := d.Step == 0 && (m.turn >= 0 && d.Turn == m.turn || m.turn < 0 && d.Turn == 0)
		switch {
		case !outside && !(m.step >= 0 && inOpen):
			return sdk.CodeTurnStepMismatch
		case len(m.pending()) > 0:
			return sdk.CodeToolCallsUnanswered
		}
	case TypeUserMessage:
		switch {
		case d.Source.Kind == "compact-checkpoint":
			return "" // a compaction's checkpoint: exempt
		case m.turn < 0:
			return sdk.CodeTurnNotOpen
		case len(m.pending()) > 0:
			return sdk.CodeToolCallsUnanswered
		}
	}
	return ""
}

// refCheck runs log through the model: the seq and code of the first
// event that breaks a rule (-1 and "" for none), and the model after it.
func refCheck(log []Event) (sdk.Seq, sdk.Code, *refLoop) {
	m := newRefLoop()
	for _, e := range log {
		if code := m.apply(e); code != "" {
			return e.Seq(), code, m
		}
	}
	return -1, "", m
}

// requireOraclesAgree fails unless the model and the implementation agree
// on log: the same first refused event and code (checkLoopLog), or none,
// and for a log both accept the same open turn and step and the same
// unanswered calls (foldLoop, which reads from the last boundaries only).
// It returns the implementation's verdict.
func requireOraclesAgree(t *testing.T, what string, log []Event) error {
	t.Helper()
	seq, code, m := refCheck(log)
	err := checkLoopLog(log)
	switch {
	case err == nil && code != "":
		t.Fatalf("%s: the model refuses seq %d with %s, the implementation accepts the log", what, seq, code)
	case err != nil && code == "":
		t.Fatalf("%s: the implementation refuses the log (%v), the model accepts it", what, err)
	case err != nil:
		if want := fmt.Sprintf("seq %d (%s): ", seq, log[seq-log[0].Seq()].Type()); sdk.ErrorOf(err).Code != code || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Fatalf("%s: the implementation says %v, the model %s at seq %d", what, err, code, seq)
		}
		return err
	}
	l := foldLoop(len(log), func(i int) *record { return log[i].r })
	var pending []string
	for _, c := range l.calls {
		if !c.answered {
			pending = append(pending, c.idString())
		}
	}
	if l.turn != m.turn || l.step != m.step || !slices.Equal(pending, m.pending()) {
		t.Fatalf("%s: the fold gives turn %d step %d unanswered %v, the model turn %d step %d unanswered %v",
			what, l.turn, l.step, pending, m.turn, m.step, m.pending())
	}
	return nil
}

// The model refuses each loop case where the implementation does, with
// the same code: a lenient session takes the refused event, and both read
// the log it wrote. So the model the property test trusts is the table's.
func TestLoopModelRefusesTheLoopCases(t *testing.T) {
	for _, c := range loopCases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newTestSession(t, bareMessages)
			mustAppendAll(t, s, append(c.setup[:len(c.setup):len(c.setup)], c.in)...)
			log := s.Events().Slice()
			seq, code, _ := refCheck(log)
			if code != c.code || seq != log[len(log)-1].Seq() {
				t.Fatalf("the model says %q at seq %d, want %s at the last event", code, seq, c.code)
			}
			requireOraclesAgree(t, c.name, log)
		})
	}
}
