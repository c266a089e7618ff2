package claudecode_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/claudecode"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The example of docs/import.md: a prompt, an assistant message written as
// two lines, the tool result that completes it, and the answer that ends
// the turn (at the end of the input: a turn whose tool results still await
// the model would stay open).
func ExampleNew() {
	file := `{"parentUuid":null,"type":"user","message":{"role":"user","content":"Why does make test fail?"},"uuid":"u1","sessionId":"7f3c"}
{"parentUuid":"u1","type":"assistant","message":{"id":"msg_A","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me run them."}],"usage":{"input_tokens":12,"output_tokens":30}},"requestId":"req_A","uuid":"a1"}
{"parentUuid":"a1","type":"assistant","message":{"id":"msg_A","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":12,"output_tokens":30}},"requestId":"req_A","uuid":"a2"}
{"parentUuid":"a2","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"FAIL","is_error":true}]},"uuid":"u2"}
{"parentUuid":"u2","type":"assistant","message":{"id":"msg_B","model":"claude-sonnet-4-5","content":[{"type":"text","text":"TestReplay fails: its fixture is missing."}],"usage":{"input_tokens":40,"output_tokens":11}},"requestId":"req_B","uuid":"a3"}
`
	lines := foreigntest.SplitLines([]byte(file))
	d := claudecode.New()
	id, _ := d.Identify(lines)
	m := d.NewMapper(id)
	seq := sdk.Seq(0)
	show := func(what string, st foreign.Step) {
		fmt.Println(what)
		for _, in := range st.Inputs {
			fmt.Printf("  %s %s\n", in.Type, in.Data)
		}
		seq += sdk.Seq(len(st.Inputs))
		m.Accepted(true)
	}
	for _, l := range lines {
		show(fmt.Sprintf("line %d (raw record %d)", l.N, seq), m.Line(l, seq))
		seq++
	}
	show("end", m.End(seq))
	// Output:
	// line 1 (raw record 0)
	//   turn/start {"turn":1}
	//   user/message {"id":"u1","role":"user","content":[{"type":"text","text":"Why does make test fail?"}],"source":{"kind":"prompt"}}
	// line 2 (raw record 3)
	// line 3 (raw record 4)
	// line 4 (raw record 5)
	//   request/header {"header":{"config":{"provider":"anthropic","model":"claude-sonnet-4-5"}},"reason":"initial"}
	//   request/context {"provider":"anthropic","model":"claude-sonnet-4-5"}
	//   step/start {"turn":1,"step":1}
	//   assistant/message {"turn":1,"step":1,"message":{"id":"msg_A","role":"assistant","content":[{"type":"text","text":"Let me run them."},{"type":"tool-call","id":"toolu_1","name":"Bash","arguments":"{\"command\":\"go test ./...\"}"}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4-5"}},"stream":[],"usage":{"input":12,"output":30}}
	//   tool/call {"turn":1,"step":1,"callId":"toolu_1","name":"Bash","arguments":"{\"command\":\"go test ./...\"}"}
	//   tool/result {"turn":1,"step":1,"message":{"id":"u2","role":"tool","toolCallId":"toolu_1","isError":true,"content":[{"type":"text","text":"FAIL"}],"source":{"kind":"tool","callId":"toolu_1"}}}
	// line 5 (raw record 12)
	// end
	//   step/end {"turn":1,"step":1}
	//   step/start {"turn":1,"step":2}
	//   assistant/message {"turn":1,"step":2,"message":{"id":"msg_B","role":"assistant","content":[{"type":"text","text":"TestReplay fails: its fixture is missing."}],"source":{"kind":"model","provider":"anthropic","model":"claude-sonnet-4-5"}},"stream":[],"usage":{"input":40,"output":11}}
	//   step/end {"turn":1,"step":2}
	//   turn/end {"turn":1,"reason":{"kind":"completed"}}
}
