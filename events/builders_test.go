package events_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// formatExamples reads the example envelopes of docs/format.md, keyed by
// "<seq> <type>".
func formatExamples(t *testing.T) map[string]events.Event {
	t.Helper()
	f, err := os.Open("../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := make(map[string]events.Event)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```json":
			in = true
		case line == "```":
			in = false
		case in && strings.HasPrefix(line, `{"seq":`):
			ev, err := events.ParseEvent([]byte(line))
			if err != nil {
				t.Fatalf("docs/format.md example %s: %v", line, err)
			}
			out[strconv.FormatInt(int64(ev.Seq), 10)+" "+ev.Type] = ev
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The builders write exactly the payloads and envelope members of the
// examples in docs/format.md.
func TestBuildersWriteTheFormatExamples(t *testing.T) {
	sonnet := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	png := []byte("\x89PNG\r\n\x1a\n")
	cases := []struct {
		seq sdk.Seq
		in  events.Input
	}{
		{0, events.RequestHeader(events.Header{
			Config: events.Config{Provider: "anthropic", Model: "claude-sonnet-4", MaxTokens: 4096},
			Tools:  []events.ToolSchema{{Name: "ls", Description: "list files", Parameters: json.RawMessage(`{ "type": "object" }`)}},
		}, events.HeaderInitial)},
		{1, events.RequestContext(events.ContextInfo{Model: sonnet, ContextWindow: 200000})},
		{2, events.System(0, 0, events.TextMessage{ID: "sys", Text: "You are a careful coding agent."})},
		{3, events.TurnStart(1)},
		{5, events.StepStart(1, 1)},
		{6, events.Assistant(1, 1, events.Reply{
			ID: "a1", Model: sonnet,
			Content: []events.Block{events.Reasoning(events.Thought{Text: "use ls"}), events.ToolCallBlock(events.Call{ID: "c1", Name: "ls", Arguments: `{"path":"."}`})},
			Stream:  []json.RawMessage{json.RawMessage(`{"dt": 0, "delta": "use ls"}`)},
			Usage:   &events.Usage{Input: 812, Output: 34},
		})},
		{7, events.ToolCall(1, 1, events.Call{ID: "c1", Name: "ls", Arguments: `{"path":"."}`})},
		{8, events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "README.md\ngo.mod"})},
		{9, events.StepEnd(1, 1)},
		{11, events.AssistantAttempt(1, 2, json.RawMessage(`{"dt":0,"error":"overloaded"}`))},
		{14, events.TodoWrite(events.Todo{Content: "read README", Status: events.TodoPending})},
		{15, events.TurnEnd(1, events.Completed())},
		{16, events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "[2 files]"}).Replacing(8, 8, 8)},
		{20, events.Developer(2, 1, "d1", 19, events.ToolAddition("cat"))},
		{21, events.User(events.UserMessage{ID: "u2", Kind: "prompt", Content: []events.Block{events.Text("what is in go.mod?"), events.Image("image/png", png)}})},
		{22, events.ToolError(2, 1, events.ToolText{ID: "r2", CallID: "c2", Text: "permission denied"}, events.ToolFailure{Name: "PermissionError", Code: "EACCES", Reason: "read-only"})},
		{24, events.TurnEnd(2, events.AbortedByUser())},
		{7, events.TurnEnd(1, events.Interrupted())},
	}
	examples := formatExamples(t)
	for _, c := range cases {
		key := strconv.FormatInt(int64(c.seq), 10) + " " + c.in.Type
		want, ok := examples[key]
		if !ok {
			t.Errorf("docs/format.md has no example %s", key)
			continue
		}
		if !bytes.Equal(c.in.Data, want.Data) {
			t.Errorf("%s: data\n got %s\nwant %s", key, c.in.Data, want.Data)
		}
		if op := opString(c.in.SurfaceOp); op != opString(want.SurfaceOp) {
			t.Errorf("%s: surfaceOp %s, want %s", key, op, opString(want.SurfaceOp))
		}
		if !slices.Equal(c.in.SourceEventSeqs, want.SourceEventSeqs) || c.in.Ignorable {
			t.Errorf("%s: sourceEventSeqs %v ignorable %v, want %v and false", key, c.in.SourceEventSeqs, c.in.Ignorable, want.SourceEventSeqs)
		}
	}
}

func opString(op *events.SurfaceOp) string {
	if op == nil {
		return "absent"
	}
	return op.String()
}

// Payloads the examples of docs/format.md do not show, against the shapes
// it states.
func TestBuildersWriteTheDocumentedShapes(t *testing.T) {
	temp := 0.2
	for _, c := range []struct {
		name string
		in   events.Input
		want string
	}{
		{"aborted by parent", events.TurnEnd(3, events.AbortedByParent()), `{"turn":3,"reason":{"kind":"aborted","cause":{"kind":"parent"}}}`},
		{"aborted disposed", events.TurnEnd(3, events.AbortedDisposed()), `{"turn":3,"reason":{"kind":"aborted","cause":{"kind":"disposed"}}}`},
		{"aborted by hook", events.TurnEnd(3, events.AbortedByHook("budget")), `{"turn":3,"reason":{"kind":"aborted","cause":{"kind":"hook","reason":"budget"}}}`},
		{"blocked", events.TurnEnd(3, events.Blocked()), `{"turn":3,"reason":{"kind":"blocked"}}`},
		{"error", events.TurnEnd(3, events.Failed(events.TurnError{Code: "UNKNOWN", Message: "disk full"})), `{"turn":3,"reason":{"kind":"error","error":{"message":"disk full","code":"UNKNOWN"}}}`},
		{"max-tokens", events.TurnEnd(3, events.MaxTokens()), `{"turn":3,"reason":{"kind":"max-tokens"}}`},
		{"forked", events.TurnEnd(3, events.Forked()), `{"turn":3,"reason":{"kind":"forked"}}`},
		{"plugin reason", events.TurnEnd(3, events.PluginReason("budget", json.RawMessage(`{ "spent": 1.50 }`))), `{"turn":3,"reason":{"kind":"plugin:budget","spent":1.50}}`},
		{"plugin reason without members", events.TurnEnd(3, events.PluginReason("budget", json.RawMessage(`{}`))), `{"turn":3,"reason":{"kind":"plugin:budget"}}`},
		{"user text", events.UserText(events.TextMessage{ID: "u1", Text: "list </files> & \u2028 \"q\" \x01"}), `{"id":"u1","role":"user","content":[{"type":"text","text":"list </files> & ` + "\u2028" + ` \"q\" \u0001"}],"source":{"kind":"prompt"}}`},
		{"assistant text", events.AssistantText(1, 2, events.Model{Provider: "p", Name: "m"}, events.TextMessage{ID: "a2", Text: "done"}),
			`{"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"done"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`},
		{"assistant, all members", events.Assistant(1, 2, events.Reply{ID: "a3", Model: events.Model{Provider: "p", Name: "m"},
			Content: []events.Block{events.Reasoning(events.Thought{Text: "r", Signature: "sig"}), events.PluginBlock("cite", json.RawMessage(`{"url":"x"}`))},
			Usage:   &events.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}, Interrupted: true}),
			`{"turn":1,"step":2,"message":{"id":"a3","role":"assistant","content":[{"type":"reasoning","text":"r","signature":"sig"},{"type":"plugin:cite","url":"x"}],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[],"usage":{"input":1,"output":2,"cacheRead":3,"cacheWrite":4},"interrupted":true}`},
		{"tool error without error member", events.ToolError(1, 1, events.ToolText{ID: "r", CallID: "c", Text: "boom"}, events.ToolFailure{}),
			`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c","isError":true,"content":[{"type":"text","text":"boom"}],"source":{"kind":"tool","callId":"c"}}}`},
		{"tool message with meta", events.Tool(1, 1, events.ToolMessage{ID: "r", CallID: "c", Content: []events.Block{events.Image("image/gif", []byte("GIF8"))},
			Failure: &events.ToolFailure{Name: "N", Code: sdk.ToolErrorAbortedBeforeDispatch}, Meta: json.RawMessage(`[1, 2]`)}),
			`{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"c","isError":true,"content":[{"type":"image","mediaType":"image/gif","data":"R0lGOA=="}],"source":{"kind":"tool","callId":"c"}},"error":{"name":"N","code":"ABORTED_BEFORE_DISPATCH"},"meta":[1,2]}`},
		{"removal-only developer message", events.Developer(2, 1, "d2", 19, events.ToolRemoval("cat"), events.Text("cat is gone")),
			`{"turn":2,"step":1,"message":{"id":"d2","role":"developer","content":[{"type":"tool-removal","toolName":"cat"},{"type":"text","text":"cat is gone"}],"source":{"kind":"tool-change"}}}`},
		{"injected context", events.User(events.UserMessage{ID: "ctx", Kind: "context"}), `{"id":"ctx","role":"user","content":[],"source":{"kind":"context"}}`},
		{"header, all members", events.RequestHeader(events.Header{
			Config:          events.Config{Provider: "p", Model: "m", ReasoningEffort: "high", MaxTokens: 10, Temperature: &temp, Stop: []string{"\n"}, Extra: json.RawMessage(`{"top_p":0.9}`)},
			AdapterDefaults: events.AdapterDefaults{ReasoningEffort: true, MaxTokens: true},
			Tools:           []events.ToolSchema{{Name: "t", DeferLoading: true}},
			StartsSeries:    true,
		}, events.HeaderChange),
			`{"header":{"config":{"provider":"p","model":"m","reasoningEffort":"high","maxTokens":10,"temperature":0.2,"stop":["\n"],"top_p":0.9},"adapterDefaults":{"reasoningEffort":true,"maxTokens":true},"tools":[{"name":"t","deferLoading":true}]},"reason":"change","startsSeries":true}`},
		{"context with prompt update", events.RequestContext(events.ContextInfo{Model: events.Model{Provider: "p", Name: "m"}, SystemPromptUpdate: "v2"}),
			`{"provider":"p","model":"m","systemPromptUpdate":"v2"}`},
		{"empty todo list", events.TodoWrite(), `{"todos":[]}`},
		{"attempt without records", events.AssistantAttempt(4, 1), `{"turn":4,"step":1,"stream":[]}`},
	} {
		if string(c.in.Data) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.in.Data, c.want)
		}
	}
}
