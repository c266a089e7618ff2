package corpus

import (
	"fmt"
	"math/rand/v2"
)

// LongSession returns the canonical envelopes of a long coding-agent session
// of the given number of messages: turns of a user prompt of about 200
// bytes, one assistant message of about 250 bytes of text plus one tool call
// with about 350 bytes of JSON arguments, and a code-like tool result of
// about 1.5 KB. Each turn logs 8 events for its 3 messages (turn/start,
// user/message, step/start, assistant/message, tool/call, tool/result,
// step/end, turn/end); the first step also carries the request header. The
// log always ends on a turn boundary, so a session of m messages has
// 8·⌈m/3⌉ + 1 events. The same seed always yields the same bytes.
func LongSession(seed uint64, messages int) [][]byte {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d)), time: 1_764_000_000_000}
	for made := 0; made < messages; made += 3 {
		g.longTurn()
	}
	return g.out
}

// longTurn appends one turn of LongSession.
func (g *gen) longTurn() {
	g.turns++
	t := g.turns
	g.emit("turn/start", fmt.Sprintf(`{"turn":%d}`, t), "")
	g.emit("user/message", `{"id":`+str(g.id("user"))+`,"role":"user","content":[{"type":"text","text":`+str(g.prose(200))+`}],"source":{"kind":"user"}}`, `"append"`)
	g.emit("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, t), "")
	if t == 1 {
		g.emit("request/header", `{"header":{"config":{"provider":"deepseek","model":"deepseek-chat","maxTokens":8192},"tools":`+toolSchemas+`},"reason":"initial"}`, "")
	}
	call := g.id("call")
	tool := g.pick(tools)
	args := `{"path":"internal/` + g.pick(idents) + `.go","new":` + str(g.code(300)) + `}`
	g.emit("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":%s,"role":"assistant","content":[{"type":"text","text":%s},{"type":"tool-call","id":%s,"name":%s,"arguments":%s}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[],"usage":{"input":%d,"output":%d}}`,
		t, str(g.id("asst")), str(g.prose(250)), str(call), str(tool), str(args), 2000+g.rng.IntN(60000), 20+g.rng.IntN(800)), `"append"`)
	g.emit("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":%s,"name":%s,"arguments":%s}`, t, str(call), str(tool), str(args)), "")
	g.emit("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":%s,"role":"tool","toolCallId":%s,"content":[{"type":"text","text":%s}],"source":{"kind":"tool","callId":%s}}}`,
		t, str(g.id("result")), str(call), str(g.code(1250)), str(call)), `"append"`)
	g.emit("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, t), "")
	g.emit("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, t), "")
}

// prose returns about size bytes of sentences about the workspace.
func (g *gen) prose(size int) string {
	b := make([]byte, 0, size+96)
	for len(b) < size {
		b = fmt.Appendf(b, "Please %s %s in %s.go, then check %s. ", g.pick(verbs), g.pick(objects), g.pick(idents), g.pick(funcs))
	}
	return string(b[:len(b)-1])
}
