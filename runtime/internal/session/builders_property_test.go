package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// propertySeed seeds the random sessions; a failure names it and the event.
const propertySeed = 20261202

// Random sessions assembled from builder calls (valid turns with random
// ids, texts, numbers, reasons and usage) are accepted by a real session
// event by event, the session stores each Data byte for byte (the builders
// write canonical JSON), and the model's messages derive from the result.
func TestRandomBuilderSessionsAreAccepted(t *testing.T) {
	t.Logf("seed %d", propertySeed)
	r := rand.New(rand.NewPCG(propertySeed, 0))
	sessions, appended := 200, 0
	if testing.Short() {
		sessions = 5
	}
	for i := range sessions {
		g := &gen{t: t, r: r, s: newSession(t), name: fmt.Sprintf("session %d", i)}
		g.run()
		if _, err := g.s.Messages(); err != nil {
			t.Fatalf("%s: the messages of the session do not derive: %v", g.name, err)
		}
		appended += int(g.s.Len())
	}
	t.Logf("%d sessions, %d events", sessions, appended)
}

// gen appends one random session's events.
type gen struct {
	t    *testing.T
	r    *rand.Rand
	s    *session.Session
	name string

	ids       int
	model     events.Model
	headerSeq sdk.Seq
	tools     []events.ToolSchema // of the header in force
}

// pieces are the fragments random strings are made of.
var pieces = []string{
	"a", "Z", "0", " ", "list the files", `"`, `\`, "/", "\n", "\t", "\r", "\b", "\f", "\x00", "\x01", "\x1f", "\x7f",
	"é", "ß", "日本", "\u0301", "\u2028", "\u2029", "\ufeff", "🌍", "👩\u200d💻", "</script>", "&amp;", "<", "'", "{}", "\xff", "\xc3",
}

// text is a random string of up to n pieces.
func (g *gen) text(n int) string {
	var b strings.Builder
	for range g.r.IntN(n + 1) {
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return b.String()
}

// id is a random non-empty message or call id, unique in the session.
func (g *gen) id(prefix string) string {
	g.ids++
	return prefix + strconv.Itoa(g.ids) + g.text(6)
}

// num is a random non-negative integer, mostly small, sometimes as large
// as the format allows.
func (g *gen) num() int64 {
	switch g.r.IntN(4) {
	case 0:
		return g.r.Int64N(int64(sdk.MaxSeq) + 1)
	case 1:
		return g.r.Int64N(1 << 32)
	}
	return g.r.Int64N(100)
}

// add appends in and checks that the session stored in.Data as written.
func (g *gen) add(in events.Input) sdk.Seq {
	g.t.Helper()
	e, err := g.s.Append(context.Background(), in)
	if err != nil {
		g.t.Fatalf("%s, seed %d: %s rejected: %v\ndata %s", g.name, propertySeed, in.Type, err, in.Data)
	}
	if !bytes.Equal(e.Data(), in.Data) {
		g.t.Fatalf("%s, seed %d: %s stored as\n%s\nnot as built\n%s", g.name, propertySeed, in.Type, e.Data(), in.Data)
	}
	return e.Seq()
}

// checkText checks that the text of the first content block of the
// message at path (nil: data is the message) decodes to want, as Go reads
// a string with invalid UTF-8 (each bad byte is U+FFFD).
func (g *gen) checkText(in events.Input, want string, path ...string) {
	g.t.Helper()
	var v any
	if err := json.Unmarshal(in.Data, &v); err != nil {
		g.t.Fatal(err)
	}
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	got := v.(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if got != string([]rune(want)) {
		g.t.Fatalf("%s: %s text %q, want %q", g.name, in.Type, got, want)
	}
}

func (g *gen) schema() events.ToolSchema {
	params := `{"type":"object","properties":{` + string(jsonString(g.text(3))) + `:{"type":"string"}}}`
	return events.ToolSchema{Name: g.id("tool"), Description: g.text(8) + ".", Parameters: json.RawMessage(params)}
}

func jsonString(s string) []byte { b, _ := json.Marshal(s); return b }

func (g *gen) header(reason events.HeaderReason) {
	g.tools = nil
	for range 1 + g.r.IntN(3) {
		g.tools = append(g.tools, g.schema())
	}
	h := events.Header{
		Config: events.Config{Provider: g.model.Provider, Model: g.model.Name},
		Tools:  g.tools, StartsSeries: reason != events.HeaderSeries && reason != events.HeaderInitial && g.r.IntN(2) == 0,
	}
	if g.r.IntN(2) == 0 {
		h.Config.MaxTokens = 1 + g.num()
		h.AdapterDefaults.MaxTokens = g.r.IntN(2) == 0
	}
	if g.r.IntN(3) == 0 {
		temp := g.r.Float64() * 2
		h.Config.Temperature, h.Config.Stop, h.Config.ReasoningEffort = &temp, []string{g.text(2)}, "low"
	}
	g.headerSeq = g.add(events.RequestHeader(h, reason))
	g.add(events.RequestContext(events.ContextInfo{Model: g.model, ContextWindow: g.num(), SystemPromptUpdate: g.text(2)}))
}

func (g *gen) run() {
	g.model = events.Model{Provider: "p" + g.text(3), Name: "m" + g.text(3)}
	g.header(events.HeaderInitial)
	prompt := g.text(20)
	in := events.System(0, 0, events.TextMessage{ID: g.id("sys"), Text: prompt})
	g.checkText(in, prompt, "message")
	g.add(in)
	turn := int(g.num())
	for range 1 + g.r.IntN(4) {
		turn++
		g.turn(turn)
	}
}

func (g *gen) turn(turn int) {
	g.add(events.TurnStart(turn))
	if g.r.IntN(2) == 0 {
		text := g.text(30)
		in := events.UserText(events.TextMessage{ID: g.id("u"), Text: text})
		g.checkText(in, text)
		g.add(in)
	} else {
		g.add(events.User(events.UserMessage{ID: g.id("u"), Kind: g.text(3) + "k", Content: []events.Block{events.Text(g.text(10)), events.Image("image/png", []byte(g.text(10))), events.PluginBlock(g.text(3)+"x", json.RawMessage(`{"n":`+strconv.FormatInt(g.num(), 10)+`}`))}}))
	}
	if g.r.IntN(3) == 0 {
		statuses := []events.TodoStatus{events.TodoPending, events.TodoInProgress, events.TodoCompleted}
		var todos []events.Todo
		for range g.r.IntN(4) {
			todos = append(todos, events.Todo{Content: g.text(5), Status: statuses[g.r.IntN(3)]})
		}
		g.add(events.TodoWrite(todos...))
	}
	steps := 1 + g.r.IntN(3)
	for step := 1; step <= steps; step++ {
		g.step(turn, step)
	}
	reasons := []events.Reason{events.Completed(), events.AbortedByUser(), events.AbortedByParent(), events.AbortedDisposed(),
		events.AbortedByHook(g.text(4)), events.Blocked(), events.Failed(events.TurnError{Code: g.text(3), Message: g.text(6)}), events.MaxTokens(),
		events.PluginReason(g.text(3)+"r", nil)}
	g.add(events.TurnEnd(turn, reasons[g.r.IntN(len(reasons))]))
}

func (g *gen) step(turn, step int) {
	g.add(events.StepStart(turn, step))
	if g.r.IntN(4) == 0 {
		g.add(events.AssistantAttempt(turn, step, json.RawMessage(`{"dt":0,"error":`+string(jsonString(g.text(4)))+`}`)))
	}
	switch g.r.IntN(6) {
	case 0:
		g.header([]events.HeaderReason{events.HeaderChange, events.HeaderSeries, events.HeaderResume}[g.r.IntN(3)])
		var blocks []events.Block
		for _, tool := range g.tools[:1+g.r.IntN(len(g.tools))] {
			blocks = append(blocks, events.ToolAddition(tool.Name))
		}
		g.add(events.Developer(turn, step, g.id("d"), g.headerSeq, append(blocks, events.Text(g.text(5)))...))
	case 1:
		g.add(events.Developer(turn, step, g.id("d"), 0, events.ToolRemoval(g.tools[0].Name)))
	}
	if g.r.IntN(3) == 0 {
		text := g.text(30)
		in := events.AssistantText(turn, step, g.model, events.TextMessage{ID: g.id("a"), Text: text})
		g.checkText(in, text, "message")
		g.add(in)
		g.add(events.StepEnd(turn, step))
		return
	}
	reply := events.Reply{ID: g.id("a"), Model: g.model}
	if g.r.IntN(2) == 0 {
		reply.Content = append(reply.Content, events.Reasoning(events.Thought{Text: g.text(10), Signature: g.text(2)}))
	}
	var calls []string
	for range 1 + g.r.IntN(3) {
		id := g.id("c")
		calls = append(calls, id)
		reply.Content = append(reply.Content, events.ToolCallBlock(events.Call{ID: id, Name: g.tools[g.r.IntN(len(g.tools))].Name, Arguments: `{"path":` + string(jsonString(g.text(4))) + `}`}))
	}
	for range g.r.IntN(3) {
		reply.Stream = append(reply.Stream, json.RawMessage(`{"dt":`+strconv.Itoa(g.r.IntN(50))+`,"delta":`+string(jsonString(g.text(3)))+`}`))
	}
	if g.r.IntN(2) == 0 {
		reply.Usage = &events.Usage{Input: g.num(), Output: g.num(), CacheRead: g.num(), CacheWrite: g.num()}
	}
	reply.Interrupted = g.r.IntN(8) == 0
	g.add(events.Assistant(turn, step, reply))
	for _, call := range calls {
		if g.r.IntN(5) > 0 {
			g.add(events.ToolCall(turn, step, events.Call{ID: call, Name: g.text(3), Arguments: g.text(6)}))
		}
		g.result(turn, step, call)
	}
	g.add(events.StepEnd(turn, step))
}

// result appends the result of call: ok, an error, or a rich tool
// message, sometimes rewritten with shorter content.
func (g *gen) result(turn, step int, call string) {
	m := events.ToolMessage{ID: g.id("r"), CallID: call, Content: []events.Block{events.Text(g.text(40))}}
	var in events.Input
	switch g.r.IntN(3) {
	case 0:
		text := g.text(40)
		in = events.ToolResult(turn, step, events.ToolText{ID: m.ID, CallID: call, Text: text})
		g.checkText(in, text, "message")
		m.Content = []events.Block{events.Text(text)}
	case 1:
		codes := []string{sdk.ToolErrorNotStarted, sdk.ToolErrorOutcomeUnknown, sdk.ToolErrorAbortedBeforeDispatch, g.text(3)}
		f := events.ToolFailure{Name: g.text(3) + "Error", Code: codes[g.r.IntN(len(codes))], Reason: g.text(3)}
		in = events.ToolError(turn, step, events.ToolText{ID: m.ID, CallID: call, Text: g.text(20)}, f)
		m.Content, m.Failure = []events.Block{events.Text(g.text(20))}, &f
	default:
		m.Content = append(m.Content, events.Image("image/jpeg", []byte(g.text(6))))
		m.IsError = g.r.IntN(2) == 0
		if g.r.IntN(2) == 0 {
			m.Meta = json.RawMessage(`{"exit":` + strconv.Itoa(g.r.IntN(3)) + `, "note": ` + string(jsonString(g.text(4))) + `}`)
		}
		in = events.Tool(turn, step, m)
	}
	seq := g.add(in)
	if g.r.IntN(4) == 0 {
		m.Content = []events.Block{events.Text("[pruned " + g.text(3) + "]")}
		g.add(events.Tool(turn, step, m).Replacing(seq, seq, seq))
	}
}
