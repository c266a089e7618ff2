package events_test

import (
	"encoding/json"
	"fmt"

	"github.com/seed-e5e476df/logbook/events"
)

// show prints an input as an input line of `logbook append` would carry it.
func show(in events.Input) {
	fmt.Printf("%s %s", in.Type, in.Data)
	if in.SurfaceOp != nil {
		fmt.Printf(" surfaceOp=%s", in.SurfaceOp)
	}
	if in.SourceEventSeqs != nil {
		fmt.Printf(" sourceEventSeqs=%v", in.SourceEventSeqs)
	}
	fmt.Println()
}

// One turn with one step in which the model calls a tool, then answers.
func Example() {
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	for _, in := range []events.Input{
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}),
		events.StepStart(1, 1),
		events.Assistant(1, 1, events.Reply{ID: "a1", Model: model,
			Content: []events.Block{events.ToolCallBlock(events.Call{ID: "c1", Name: "ls", Arguments: `{"path":"."}`})}}),
		events.ToolCall(1, 1, events.Call{ID: "c1", Name: "ls", Arguments: `{"path":"."}`}),
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "README.md\ngo.mod"}),
		events.StepEnd(1, 1),
		events.StepStart(1, 2),
		events.AssistantText(1, 2, model, events.TextMessage{ID: "a2", Text: "There are two files."}),
		events.StepEnd(1, 2),
		events.TurnEnd(1, events.Completed()),
	} {
		show(in)
	}
	// Output:
	// turn/start {"turn":1}
	// user/message {"id":"u1","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"prompt"}} surfaceOp="append"
	// step/start {"turn":1,"step":1}
	// assistant/message {"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"ls","arguments":"{\"path\":\".\"}"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[]} surfaceOp="append"
	// tool/call {"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{\"path\":\".\"}"}
	// tool/result {"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"README.md\ngo.mod"}],"source":{"kind":"tool","callId":"c1"}}} surfaceOp="append"
	// step/end {"turn":1,"step":1}
	// step/start {"turn":1,"step":2}
	// assistant/message {"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"There are two files."}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[]} surfaceOp="append"
	// step/end {"turn":1,"step":2}
	// turn/end {"turn":1,"reason":{"kind":"completed"}}
}

func ExampleAssistant() {
	show(events.Assistant(1, 1, events.Reply{
		ID:      "a1",
		Model:   events.Model{Provider: "anthropic", Name: "claude-sonnet-4"},
		Content: []events.Block{events.Reasoning(events.Thought{Text: "use ls"}), events.ToolCallBlock(events.Call{ID: "c1", Name: "ls", Arguments: `{"path":"."}`})},
		Stream:  []json.RawMessage{json.RawMessage(`{"dt":0,"delta":"use ls"}`)},
		Usage:   &events.Usage{Input: 812, Output: 34},
	}))
	// Output:
	// assistant/message {"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"reasoning","text":"use ls"},{"type":"tool-call","id":"c1","name":"ls","arguments":"{\"path\":\".\"}"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4"}},"stream":[{"dt":0,"delta":"use ls"}],"usage":{"input":812,"output":34}} surfaceOp="append"
}

func ExampleToolError() {
	show(events.ToolError(2, 1, events.ToolText{ID: "r2", CallID: "c2", Text: "permission denied"}, events.ToolFailure{Name: "PermissionError", Code: "EACCES", Reason: "read-only"}))
	// Output:
	// tool/result {"turn":2,"step":1,"message":{"id":"r2","role":"tool","toolCallId":"c2","isError":true,"content":[{"type":"text","text":"permission denied"}],"source":{"kind":"tool","callId":"c2"}},"error":{"name":"PermissionError","code":"EACCES","reason":"read-only"}} surfaceOp="append"
}

// A pruner shortens the tool result at seq 8: the rewrite replaces that
// node alone and changes nothing but the content.
func ExampleInput_Replacing() {
	show(events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "[2 files]"}).Replacing(8, 8, 8))
	// Output:
	// tool/result {"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"[2 files]"}],"source":{"kind":"tool","callId":"c1"}}} surfaceOp={"op":"replace","startSeq":8,"endSeq":8} sourceEventSeqs=[8]
}

func ExampleTurnEnd() {
	show(events.TurnEnd(2, events.AbortedByUser()))
	show(events.TurnEnd(3, events.Failed(events.TurnError{Code: "UNKNOWN", Message: "the provider is unreachable"})))
	// Output:
	// turn/end {"turn":2,"reason":{"kind":"aborted","cause":{"kind":"user"}}}
	// turn/end {"turn":3,"reason":{"kind":"error","error":{"message":"the provider is unreachable","code":"UNKNOWN"}}}
}

// The first request of a log writes its header and the model's context
// facts, then the system prompt.
func ExampleRequestHeader() {
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	show(events.RequestHeader(events.Header{
		Config: events.Config{Provider: model.Provider, Model: model.Name, MaxTokens: 4096},
		Tools:  []events.ToolSchema{{Name: "ls", Description: "list files", Parameters: json.RawMessage(`{"type": "object"}`)}},
	}, events.HeaderInitial))
	show(events.RequestContext(events.ContextInfo{Model: model, ContextWindow: 200000}))
	show(events.System(0, 0, events.TextMessage{ID: "sys", Text: "You are a careful coding agent."}))
	// Output:
	// request/header {"header":{"config":{"provider":"anthropic","model":"claude-sonnet-4","maxTokens":4096},"tools":[{"name":"ls","description":"list files","parameters":{"type":"object"}}]},"reason":"initial"}
	// request/context {"provider":"anthropic","model":"claude-sonnet-4","contextWindow":200000}
	// system/message {"turn":0,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":"You are a careful coding agent."}],"source":{"kind":"system-prompt"}}} surfaceOp="append"
}

// A developer message announces a tool that the request/header at seq 19
// declares.
func ExampleDeveloper() {
	show(events.Developer(2, 1, "d1", 19, events.ToolAddition("cat")))
	// Output:
	// developer/message {"turn":2,"step":1,"message":{"id":"d1","role":"developer","content":[{"type":"tool-addition","toolName":"cat"}],"source":{"kind":"tool-change"}},"headerSeq":19} surfaceOp="append"
}

func ExampleUser() {
	show(events.User(events.UserMessage{ID: "u2", Kind: "prompt", Content: []events.Block{events.Text("what is in this picture?"), events.Image("image/png", []byte("\x89PNG\r\n\x1a\n"))}}))
	// Output:
	// user/message {"id":"u2","role":"user","content":[{"type":"text","text":"what is in this picture?"},{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="}],"source":{"kind":"prompt"}} surfaceOp="append"
}
