package otlp

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// testdata/demo.jsonl is the stored log of the session `logbook demo`
// writes (`logbook --config DIR/demo.hcl events demo`): a completed turn
// of three steps, a turn interrupted by a crash mid tool call and closed
// by the resume's repair, a third turn, then a compaction.
func demoEvents(t testing.TB) []Event {
	t.Helper()
	f, err := os.Open("testdata/demo.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Seq  int64           `json:"seq"`
			Time int64           `json:"time"`
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, Event{Seq: e.Seq, Time: e.Time, Type: e.Type, Data: e.Data})
	}
	return out
}

// build folds events and returns every span, in hand-out order.
func build(id string, evs []Event, o Options) []*tracepb.Span {
	b := NewBuilder(id, o)
	var spans []*tracepb.Span
	for _, e := range evs {
		spans = append(spans, b.Add(e)...)
	}
	return append(spans, b.Finish()...)
}

func attr(s *tracepb.Span, key string) (string, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			v := a.Value
			switch {
			case v.GetArrayValue() != nil:
				var vs []string
				for _, x := range v.GetArrayValue().Values {
					vs = append(vs, x.GetStringValue())
				}
				return strings.Join(vs, ","), true
			case v.GetStringValue() != "":
				return v.GetStringValue(), true
			default:
				b, _ := json.Marshal(v.Value)
				return string(b), true
			}
		}
	}
	return "", false
}

func mustAttr(t *testing.T, s *tracepb.Span, key, want string) {
	t.Helper()
	if got, _ := attr(s, key); got != want {
		t.Errorf("span %q: %s = %q, want %q", s.Name, key, got, want)
	}
}

// The demo's log gives one root, a span per turn under it, a chat span per
// step under its turn and an execute_tool span per call under its chat,
// each with the ids the package doc derives and the times of its events.
func TestDemoSpanTree(t *testing.T) {
	evs := demoEvents(t)
	spans := build("demo", evs, Options{})
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		if !bytes.Equal(s.TraceId, TraceID("demo")) {
			t.Fatalf("span %q has trace id %x", s.Name, s.TraceId)
		}
		byID[string(s.SpanId)] = s
	}
	if len(byID) != len(spans) {
		t.Fatalf("%d spans but %d distinct ids", len(spans), len(byID))
	}
	root := spans[len(spans)-1]
	if root.Name != "session demo" || root.ParentSpanId != nil || !bytes.Equal(root.SpanId, SpanID("demo", kindSession, 0, "")) {
		t.Fatalf("root: %v", root)
	}
	if root.StartTimeUnixNano != nanos(evs[0].Time) || root.EndTimeUnixNano != nanos(evs[len(evs)-1].Time) {
		t.Errorf("root spans %d..%d, want the first and last event's times", root.StartTimeUnixNano, root.EndTimeUnixNano)
	}
	// The tree as "name(children)", turn by turn.
	children := map[string][]*tracepb.Span{}
	for _, s := range spans {
		children[string(s.ParentSpanId)] = append(children[string(s.ParentSpanId)], s)
	}
	var render func(s *tracepb.Span) string
	render = func(s *tracepb.Span) string {
		var cs []string
		for _, c := range children[string(s.SpanId)] {
			cs = append(cs, render(c))
		}
		if len(cs) == 0 {
			return s.Name
		}
		return s.Name + "(" + strings.Join(cs, " ") + ")"
	}
	want := "session demo(" +
		"invoke_agent(chat mock-coder-1(execute_tool list_dir) chat mock-coder-1(execute_tool read_file) chat mock-coder-1) " +
		"invoke_agent(chat mock-coder-1(execute_tool read_file)) " +
		"invoke_agent(chat mock-coder-1(execute_tool read_file) chat mock-coder-1))"
	if got := render(root); got != want {
		t.Errorf("tree:\n got %s\nwant %s", got, want)
	}
	turns := children[string(root.SpanId)]
	// Turn 1: keyed on its turn/start (seq 0), ended by its turn/end (seq 18).
	t1 := turns[0]
	if !bytes.Equal(t1.SpanId, SpanID("demo", kindTurn, 0, "")) || t1.StartTimeUnixNano != nanos(evs[0].Time) || t1.EndTimeUnixNano != nanos(evs[18].Time) {
		t.Errorf("turn 1: id %x, %d..%d", t1.SpanId, t1.StartTimeUnixNano, t1.EndTimeUnixNano)
	}
	mustAttr(t, t1, "gen_ai.operation.name", "invoke_agent")
	mustAttr(t, t1, "gen_ai.provider.name", "mock")
	mustAttr(t, t1, "gen_ai.request.model", "mock-coder-1")
	mustAttr(t, t1, "logbook.turn.end_reason", "completed")
	if t1.Status != nil {
		t.Errorf("a completed turn has status %v", t1.Status)
	}
	chat := children[string(t1.SpanId)][0]
	if !bytes.Equal(chat.SpanId, SpanID("demo", kindChat, 3, "")) || chat.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("turn 1 step 1: id %x (want the step/start at seq 3), kind %v", chat.SpanId, chat.Kind)
	}
	for k, v := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "mock", "gen_ai.system": "mock",
		"gen_ai.request.model": "mock-coder-1", "gen_ai.response.model": "mock-coder-1", "gen_ai.response.id": "a1-1",
		"gen_ai.response.finish_reasons": "tool_call", "gen_ai.usage.input_tokens": `{"IntValue":0}`,
		"gen_ai.usage.output_tokens": `{"IntValue":0}`, "logbook.turn": `{"IntValue":1}`, "logbook.step": `{"IntValue":1}`,
	} {
		mustAttr(t, chat, k, v)
	}
	last := children[string(t1.SpanId)][2]
	mustAttr(t, last, "gen_ai.response.finish_reasons", "stop")
	tool := children[string(chat.SpanId)][0]
	mustAttr(t, tool, "gen_ai.operation.name", "execute_tool")
	mustAttr(t, tool, "gen_ai.tool.name", "list_dir")
	mustAttr(t, tool, "gen_ai.tool.call.id", "call-1")
	if _, ok := attr(tool, "gen_ai.tool.call.arguments"); ok {
		t.Error("arguments without Options.Content")
	}
	// Turn 2 was interrupted: its tool call's outcome is unknown.
	t2 := turns[1]
	mustAttr(t, t2, "logbook.turn.end_reason", "interrupted")
	if t2.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("interrupted turn: status %v", t2.Status)
	}
	crash := children[string(children[string(t2.SpanId)][0].SpanId)][0]
	mustAttr(t, crash, "error.type", "TOOL_OUTCOME_UNKNOWN")
	if crash.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("tool with an error result: status %v", crash.Status)
	}
	if !bytes.Equal(crash.SpanId, SpanID("demo", kindTool, 25, "call-51")) {
		t.Errorf("the crashed call's span id %x, want the one of its assistant/message (seq 25) and call id", crash.SpanId)
	}
	for _, s := range spans {
		if _, open := attr(s, "logbook.open"); open {
			t.Errorf("span %q is marked open in a log whose turns all ended", s.Name)
		}
		if len(s.Events) > 0 {
			t.Errorf("span %q has events without Options.Content", s.Name)
		}
	}
}

// Building the same log twice gives the same spans, byte for byte in
// OTLP/JSON; another session id gives other ids.
func TestIDsStable(t *testing.T) {
	evs := demoEvents(t)
	j1, err := JSON(Request(ResourceSpans(build("demo", evs, Options{}))))
	if err != nil {
		t.Fatal(err)
	}
	j2, _ := JSON(Request(ResourceSpans(build("demo", evs, Options{}))))
	if !bytes.Equal(j1, j2) {
		t.Error("two builds of one log differ")
	}
	other := build("demo2", evs, Options{})
	for _, s := range build("demo", evs, Options{}) {
		for _, o := range other {
			if bytes.Equal(s.SpanId, o.SpanId) || bytes.Equal(s.TraceId, o.TraceId) {
				t.Fatalf("session demo2 shares an id with demo: %q", s.Name)
			}
		}
	}
}

// What a live push hands out, turn by turn and then the root, is what an
// export builds.
func TestLiveHandOutEqualsExport(t *testing.T) {
	evs := demoEvents(t)
	b := NewBuilder("demo", Options{})
	var live []*tracepb.Span
	turnEnds := 0
	for _, e := range evs {
		out := b.Add(e)
		if (len(out) > 0) != (e.Type == "turn/end") {
			t.Fatalf("seq %d (%s) handed out %d spans", e.Seq, e.Type, len(out))
		}
		if len(out) > 0 {
			turnEnds++
			if out[0].Name != "invoke_agent" {
				t.Errorf("turn/end at seq %d handed out %q first", e.Seq, out[0].Name)
			}
		}
		live = append(live, out...)
	}
	live = append(live, b.Root())
	export := build("demo", evs, Options{})
	if turnEnds != 3 || len(live) != len(export) {
		t.Fatalf("%d turn ends, %d live spans, %d exported", turnEnds, len(live), len(export))
	}
	for i := range live {
		if !proto.Equal(live[i], export[i]) {
			t.Errorf("span %d: live %v\nexport %v", i, live[i], export[i])
		}
	}
}

// With Options.Content every chat span carries the semconv details event
// (the prompt as input, the reply as output) and every tool span its
// arguments and result; without it, no message text.
func TestContent(t *testing.T) {
	evs := demoEvents(t)
	spans := build("demo", evs, Options{Content: true})
	var chats, tools int
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "chat"):
			chats++
			if len(s.Events) != 1 || s.Events[0].Name != "gen_ai.client.inference.operation.details" {
				t.Fatalf("chat span %x: events %v", s.SpanId, s.Events)
			}
		case strings.HasPrefix(s.Name, "execute_tool"):
			tools++
			if _, ok := attr(s, "gen_ai.tool.call.arguments"); !ok {
				t.Errorf("tool span %q lacks its arguments", s.Name)
			}
			if _, ok := attr(s, "gen_ai.tool.call.result"); !ok {
				t.Errorf("tool span %q lacks its result", s.Name)
			}
		}
	}
	if chats != 6 || tools != 4 {
		t.Fatalf("%d chats, %d tools", chats, tools)
	}
	first := spans[1] // turn 1's first chat
	ev := first.Events[0]
	var in, out string
	for _, a := range ev.Attributes {
		switch a.Key {
		case "gen_ai.input.messages":
			in = a.Value.GetStringValue()
		case "gen_ai.output.messages":
			out = a.Value.GetStringValue()
		}
	}
	if !strings.Contains(in, `"role":"user"`) || !strings.Contains(in, "What does this project do?") {
		t.Errorf("first chat's input messages %s lack the prompt", in)
	}
	if !strings.Contains(out, `"type":"tool_call"`) || !strings.Contains(out, `"finish_reason":"tool_call"`) {
		t.Errorf("first chat's output messages %s", out)
	}
	second := spans[3] // turn 1's second chat: its input is the first tool result
	if !strings.Contains(second.Events[0].Attributes[1].Value.GetStringValue(), `"role":"tool"`) {
		t.Errorf("second chat's input %v lacks the tool result", second.Events[0].Attributes)
	}
	// The same log without content: the same spans, less the content.
	plain := build("demo", evs, Options{})
	for i, s := range plain {
		if !bytes.Equal(s.SpanId, spans[i].SpanId) {
			t.Fatalf("content changed span %d's id", i)
		}
	}
}

// A log that ends inside a turn (a live session, a crash not yet resumed)
// ends the open turn, step and call at the last event, status unset,
// marked logbook.open.
func TestOpenAtEnd(t *testing.T) {
	evs := demoEvents(t)[:27] // up to turn 2's tool/call: the crash
	spans := build("demo", evs, Options{})
	end := nanos(evs[len(evs)-1].Time)
	open := map[string]bool{}
	for _, s := range spans {
		if _, ok := attr(s, "logbook.open"); ok {
			open[s.Name] = true
			if s.EndTimeUnixNano != end || s.Status != nil {
				t.Errorf("open span %q ends %d (want %d), status %v", s.Name, s.EndTimeUnixNano, end, s.Status)
			}
		}
	}
	if len(open) != 3 || !open["invoke_agent"] || !open["chat mock-coder-1"] || !open["execute_tool read_file"] {
		t.Errorf("open spans %v, want turn 2, its step and its call", open)
	}
}

// OTLP/JSON has ids in hex and enums as numbers, and ParseJSON reads it
// back to the same request.
func TestJSON(t *testing.T) {
	req := Request(ResourceSpans(build("demo", demoEvents(t), Options{Content: true})))
	b, err := JSON(req)
	if err != nil {
		t.Fatal(err)
	}
	trace := hex.EncodeToString(TraceID("demo"))
	if !bytes.Contains(b, []byte(`"traceId":"`+trace+`"`)) {
		t.Errorf("no hex trace id %s in %.300s", trace, b)
	}
	if !regexp.MustCompile(`"kind":3[,}]`).Match(b) || bytes.Contains(b, []byte("SPAN_KIND_")) {
		t.Error("span kinds are not numbers")
	}
	back, err := ParseJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(back, req) {
		t.Error("ParseJSON(JSON(r)) != r")
	}
	if _, err := ParseJSON([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`)); err == nil {
		t.Error("ParseJSON took a trace id that is not hex")
	}
}

// No sequence of events, however malformed, makes the builder panic, and
// every span it hands out has a trace id, a span id and an end no earlier
// than its start.
func FuzzBuilder(f *testing.F) {
	for _, e := range demoEvents(f) {
		f.Add(e.Type, []byte(e.Data), e.Time)
	}
	f.Add("tool/result", []byte(`{"message":{"toolCallId":"x"},"error":{}}`), int64(5))
	f.Add("turn/end", []byte(`null`), int64(-1))
	types := []string{"turn/start", "step/start", "assistant/message", "tool/call", "tool/result", "step/end", "turn/end", "request/header", "user/message"}
	f.Fuzz(func(t *testing.T, typ string, data []byte, ms int64) {
		b := NewBuilder("f", Options{Content: true})
		var spans []*tracepb.Span
		for i, ty := range append(types, typ, "turn/start", typ, "step/start", typ) {
			spans = append(spans, b.Add(Event{Seq: int64(i), Time: ms + int64(i), Type: ty, Data: data})...)
		}
		spans = append(spans, b.Finish()...)
		for _, s := range spans {
			if len(s.TraceId) != 16 || len(s.SpanId) != 8 {
				t.Fatalf("span %q: ids %x %x", s.Name, s.TraceId, s.SpanId)
			}
		}
		if _, err := JSON(Request(ResourceSpans(spans))); err != nil {
			t.Fatal(err)
		}
	})
}
