package foreigntest_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/sdk"
)

// echo is a dialect whose every line is a user prompt of its text.
type echo struct{}

func (echo) Name() string                              { return "echo" }
func (echo) Claims(b []byte) bool                      { return len(b) > 0 }
func (echo) NewMapper(foreign.Identity) foreign.Mapper { return &echoMapper{} }
func (echo) Identify([]foreign.Line) (foreign.Identity, error) {
	return foreign.Identity{Tool: "echo", SessionID: "e1"}, nil
}

type echoMapper struct{ n int }

func (m *echoMapper) Line(l foreign.Line, _ sdk.Seq) foreign.Step {
	if len(l.Text) == 0 {
		return foreign.Step{Damage: "empty line"}
	}
	m.n++
	return foreign.Step{Inputs: []events.Input{events.UserText(events.TextMessage{ID: string(rune('a' + m.n)), Text: string(l.Text)})}}
}
func (m *echoMapper) Accepted(bool)            {}
func (m *echoMapper) End(sdk.Seq) foreign.Step { return foreign.Step{} }

func TestRunAppendsRawRecordsAndInputs(t *testing.T) {
	lines := foreigntest.SplitLines([]byte("hello\n\nworld"))
	if len(lines) != 3 || lines[2].Newline || !lines[1].Newline {
		t.Fatalf("SplitLines: %+v", lines)
	}
	r := foreigntest.Run(t, echo{}, lines)
	if got := r.Session.Len(); got != 5 {
		t.Errorf("log length %d, want 5 (3 raw records, 2 prompts)", got)
	}
	if r.Damaged[2] != "empty line" || len(r.Refused) != 0 {
		t.Errorf("damaged %v refused %v", r.Damaged, r.Refused)
	}
	b, err := r.Messages("openai")
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"role":"user","content":"hello"},{"role":"user","content":"world"}]`; string(b) != want {
		t.Errorf("openai messages\n got %s\nwant %s", b, want)
	}
}
