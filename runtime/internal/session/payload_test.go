package session

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

func parseValue(t testing.TB, src string) jsonv.Value {
	t.Helper()
	doc, err := jsonv.Parse([]byte(src), jsonv.Options{})
	if err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	return doc.Root()
}

// Building blocks of the fixtures.
const (
	plSysMsg   = `{"id":"s1","role":"system","content":[{"type":"text","text":"be brief"}],"source":{"kind":"system-prompt"}}`
	plDevMsg   = `{"id":"d1","role":"developer","content":[{"type":"tool-addition","toolName":"search"},{"type":"tool-removal","toolName":"grep"},{"type":"text","text":"tools changed"}],"source":{"kind":"tools"}}`
	plAsstMsg  = `{"id":"a1","role":"assistant","content":[{"type":"reasoning","text":"t","signature":"sig"},{"type":"text","text":"ok"},{"type":"tool-call","id":"a","name":"read","arguments":"{}"},{"type":"tool-call","id":"b","name":"read","arguments":""},{"type":"plugin:x/y","z":1}],"source":{"kind":"model","provider":"p","model":"m"}}`
	plToolMsg  = `{"id":"r1","role":"tool","toolCallId":"a","isError":true,"source":{"kind":"tool","callId":"a"},"content":[{"type":"text","text":"fail"},{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="}]}`
	plHeader   = `{"config":{"provider":"p","model":"m"}}`
	plSummary  = `"summary":[{"type":"text","text":"s"}],"shadowedRange":{"start":1,"end":4},"shadowedSeqs":[1,2,4],"shadowedTokenCount":900,"provider":"p","model":"m"`
	plUserData = `{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}}`
)

func TestCheckPayloadAcceptsValidCoreEvents(t *testing.T) {
	cases := []struct {
		name, typ, data string
		headerSeen      bool
	}{
		{"turn start", "turn/start", `{"turn":0}`, false},
		{"turn start plugin member", "turn/start", `{"turn":9007199254740991,"plugin:x":{"any":1}}`, false},
		{"turn end completed", "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, false},
		{"turn end blocked", "turn/end", `{"turn":1,"reason":{"kind":"blocked"}}`, false},
		{"turn end max-tokens", "turn/end", `{"turn":1,"reason":{"kind":"max-tokens"}}`, false},
		{"turn end interrupted", "turn/end", `{"turn":1,"reason":{"kind":"interrupted"}}`, false},
		{"turn end forked", "turn/end", `{"turn":1,"reason":{"kind":"forked","plugin:note":"x"}}`, false},
		{"turn end aborted user", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"user"}}}`, false},
		{"turn end aborted parent", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"parent"}}}`, false},
		{"turn end aborted disposed", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"disposed"}}}`, false},
		{"turn end aborted hook", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"hook","reason":"policy"}}}`, false},
		{"turn end error open cause", "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"UNKNOWN","status":500}}}`, false},
		{"turn end plugin kind opaque", "turn/end", `{"turn":1,"reason":{"kind":"plugin:x","anything":[1,{"a":null}]}}`, false},
		{"step start", "step/start", `{"turn":1,"step":0}`, false},
		{"step end", "step/end", `{"turn":1,"step":2}`, false},
		{"system message", "system/message", `{"turn":0,"step":0,"message":` + plSysMsg + `}`, false},
		{"developer message with additions", "developer/message", `{"turn":1,"step":1,"headerSeq":3,"message":` + plDevMsg + `}`, false},
		{"developer message removal only", "developer/message", `{"turn":1,"step":1,"message":{"id":"d2","role":"developer","content":[{"type":"tool-removal","toolName":"grep"}],"source":{"kind":"tools"}}}`, false},
		{"user message", "user/message", `{"id":"u1","role":"user","content":[{"type":"text","text":"hi"},{"type":"image","mediaType":"image/png","data":"iVBO\r\nRw0KGgo="},{"type":"plugin:x/y","anything":[1]}],"source":{"kind":"prompt","extra":1},"plugin:a":true}`, false},
		{"user message empty content", "user/message", `{"id":"u1","role":"user","content":[],"source":{"kind":"prompt"}}`, false},
		{"user message 256-byte id", "user/message", `{"id":"` + strings.Repeat("é", 128) + `","role":"user","content":[],"source":{"kind":"prompt"}}`, false},
		{"user checkpoint", "user/message", `{"id":"compaction-c1","role":"user","content":[{"type":"text","text":"sum"}],"source":{"kind":"compact-checkpoint","compactionId":"c1","sourceCommandId":"cmd"}}`, false},
		{"assistant message", "assistant/message", `{"turn":1,"step":1,"message":` + plAsstMsg + `,"stream":[{"dt":0},"x",null],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":3,"extra":"open"},"interrupted":true}`, false},
		{"assistant message minimal", "assistant/message", `{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"model","provider":"p","model":"m"}},"stream":[]}`, false},
		{"assistant attempt", "assistant/attempt", `{"turn":1,"step":1,"stream":[{"dt":3,"error":"x"}]}`, false},
		{"tool call", "tool/call", `{"turn":1,"step":1,"callId":"a","name":"read","arguments":"{\"p\":1}"}`, false},
		{"tool result with error", "tool/result", `{"turn":1,"step":1,"message":` + plToolMsg + `,"error":{"name":"ToolNotStartedError","code":"TOOL_NOT_STARTED"},"meta":{"any":[1,2]}}`, false},
		{"tool result plain", "tool/result", `{"turn":1,"step":1,"message":{"id":"r2","role":"tool","toolCallId":"b","source":{"kind":"tool","callId":"b"},"content":[]},"meta":null}`, false},
		{"todo write", "todo/write", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"in_progress"},{"content":"c","status":"completed"}]}`, false},
		{"todo write empty", "todo/write", `{"todos":[]}`, false},
		{"request header initial", "request/header", `{"header":{"config":{"provider":"p","model":"m","reasoningEffort":"high","maxTokens":100,"temperature":0.5,"stop":["x"],"custom":{"open":true}},"adapterDefaults":{"maxTokens":true,"reasoningEffort":true},"tools":[{"name":"search","description":"d","parameters":{"type":"object"},"deferLoading":true,"extra":1},{"name":"read"}]},"reason":"initial","startsSeries":true}`, false},
		{"request header resume", "request/header", `{"header":` + plHeader + `,"reason":"resume"}`, true},
		{"request header change stop string", "request/header", `{"header":{"config":{"provider":"p","model":"m","stop":"END"}},"reason":"change","plugin:x":1}`, true},
		{"request header series", "request/header", `{"header":{"config":{"provider":"p","model":"m"},"plugin:y":2},"reason":"series"}`, true},
		{"request context", "request/context", `{"provider":"p","model":"m","contextWindow":200000,"systemPromptUpdate":"replace"}`, false},
		{"request context minimal", "request/context", `{"provider":"","model":""}`, false},
		{"end seed fresh", "session/end-seed", `{}`, false},
		{"end seed inherited", "session/end-seed", `{"inherited":true}`, false},
		{"recovered", "session/recovered", `{"tornBytes":12,"tornFromSeq":7,"artifact":"/tmp/x"}`, false},
		{"salvaged", "session/salvaged", `{"salvagedFrom":"s1","damagedAtOffset":0,"damagedBytes":0,"intactEventsExcluded":0,"artifact":"/d/x.bin"}`, false},
		{"compaction start standalone", "compaction/start", `{"compactionId":"c1","turn":null}`, false},
		{"compaction start numbered", "compaction/start", `{"compactionId":"c1","sourceCommandId":"cmd","turn":2}`, false},
		{"compaction summary", "compaction/summary", `{"compactionId":"c1",` + plSummary + `,"maxTokens":8192,"usage":{"input":1,"output":2},"rawOutput":{"x":1}}`, false},
		{"compaction summary plugin block, sign of token count left to the relational rule", "compaction/summary", `{"compactionId":"c1","sourceCommandId":"x","summary":[{"type":"plugin:a/b"}],"shadowedRange":{"start":0,"end":0},"shadowedSeqs":[],"shadowedTokenCount":-1,"provider":"p","model":"m"}`, false},
		{"compaction end", "compaction/end", `{"compactionId":"c1","turn":null,"error":"boom"}`, false},
		{"compaction prune", "compaction/prune", `{"shadowedRange":{"start":3,"end":3},"shadowedSeqs":[3],"shadowedTokenCount":10}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkPayload(tc.typ, parseValue(t, tc.data), tc.headerSeen); err != nil {
				t.Fatalf("checkPayload(%s) = %v, want nil", tc.typ, err)
			}
		})
	}
}

func TestCheckPayloadIgnoresNonCoreTypes(t *testing.T) {
	for _, typ := range []string{"plugin:x/rec", "projection:x/redact", "acme/thing", "x:y"} {
		if err := checkPayload(typ, parseValue(t, `[1,{"turn":-1}]`), false); err != nil {
			t.Errorf("checkPayload(%q) = %v, want nil", typ, err)
		}
	}
}

type payloadCase struct {
	name, typ, data string
	headerSeen      bool
	code            sdk.Code
	want            []string // substrings of Detail besides the type
}

func runPayloadCases(t *testing.T, cases []payloadCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPayload(tc.typ, parseValue(t, tc.data), tc.headerSeen)
			assertPayloadError(t, err, tc.code, append([]string{tc.typ + ": "}, tc.want...))
		})
	}
}

func assertPayloadError(t *testing.T, err *sdk.Error, code sdk.Code, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got nil, want %s", code)
	}
	if !errors.Is(err, code) || err.Code != code {
		t.Fatalf("got %v, want code %s", err, code)
	}
	if err.Op != "session" || err.Seq != nil || err.Index != nil || err.SessionID != "" {
		t.Errorf("got %v, want op session and no seq, index or session", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Detail, w) {
			t.Errorf("detail %q lacks %q", err.Detail, w)
		}
	}
}

func TestCheckPayloadShapeRules(t *testing.T) {
	P := sdk.CodePayloadInvalid
	runPayloadCases(t, []payloadCase{
		{"data not an object", "turn/start", `[1]`, false, P, []string{"data = an array of 1 elements", "must be an object"}},
		{"required member missing", "turn/start", `{}`, false, P, []string{"data.turn: missing"}},
		{"unknown member", "turn/start", `{"turn":1,"extra":2}`, false, P, []string{"data.extra: unknown member"}},
		{"turn negative", "turn/start", `{"turn":-1}`, false, P, []string{"data.turn = -1", "non-negative safe integer"}},
		{"turn not integer-form", "turn/start", `{"turn":1.0}`, false, P, []string{"data.turn = 1.0"}},
		{"turn a string", "step/start", `{"turn":1,"step":"2"}`, false, P, []string{`data.step = "2"`}},
		{"reason missing kind", "turn/end", `{"turn":1,"reason":{}}`, false, P, []string{"data.reason.kind: missing"}},
		{"reason unknown kind", "turn/end", `{"turn":1,"reason":{"kind":"done"}}`, false, P, []string{`data.reason.kind = "done"`, "unknown turn end reason kind"}},
		{"reason bare plugin prefix", "turn/end", `{"turn":1,"reason":{"kind":"plugin:"}}`, false, P, []string{`data.reason.kind = "plugin:"`}},
		{"reason closed kind with member", "turn/end", `{"turn":1,"reason":{"kind":"completed","why":"x"}}`, false, P, []string{"data.reason.why: unknown member"}},
		{"aborted without cause", "turn/end", `{"turn":1,"reason":{"kind":"aborted"}}`, false, P, []string{"data.reason.cause: missing"}},
		{"aborted unknown cause", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"timeout"}}}`, false, P, []string{`data.reason.cause.kind = "timeout"`}},
		{"aborted hook without reason", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"hook"}}}`, false, P, []string{"data.reason.cause.reason: missing"}},
		{"error without code", "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"m"}}}`, false, P, []string{"data.reason.error.code: missing"}},
		{"stream not an array", "assistant/attempt", `{"turn":1,"step":1,"stream":{}}`, false, P, []string{"data.stream = an object of 0 members", "must be an array"}},
		{"interrupted false", "assistant/message", `{"turn":1,"step":1,"message":` + plAsstMsg + `,"stream":[],"interrupted":false}`, false, P, []string{"data.interrupted = false", "must be true"}},
		{"usage negative", "assistant/message", `{"turn":1,"step":1,"message":` + plAsstMsg + `,"stream":[],"usage":{"input":-1,"output":0}}`, false, P, []string{"data.usage.input = -1"}},
		{"usage missing output", "assistant/message", `{"turn":1,"step":1,"message":` + plAsstMsg + `,"stream":[],"usage":{"input":1}}`, false, P, []string{"data.usage.output: missing"}},
		{"tool call arguments not a string", "tool/call", `{"turn":1,"step":1,"callId":"a","name":"n","arguments":{}}`, false, P, []string{"data.arguments = an object of 0 members", "must be a string"}},
		{"tool error missing code", "tool/result", `{"turn":1,"step":1,"message":` + plToolMsg + `,"error":{"name":"E"}}`, false, P, []string{"data.error.code: missing"}},
		{"tool error unknown member", "tool/result", `{"turn":1,"step":1,"message":` + plToolMsg + `,"error":{"name":"E","code":"C","trace":1}}`, false, P, []string{"data.error.trace: unknown member"}},
		{"todo status unknown", "todo/write", `{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"done"}]}`, false, P, []string{`data.todos[1].status = "done"`}},
		{"todo unknown member", "todo/write", `{"todos":[{"content":"a","status":"pending","prio":1}]}`, false, P, []string{"data.todos[0].prio: unknown member"}},
		{"context window negative", "request/context", `{"provider":"p","model":"m","contextWindow":-5}`, false, P, []string{"data.contextWindow = -5"}},
		{"end seed inherited false", "session/end-seed", `{"inherited":false}`, false, P, []string{"data.inherited = false"}},
		{"recovered torn seq float", "session/recovered", `{"tornBytes":1,"tornFromSeq":2.5}`, false, P, []string{"data.tornFromSeq = 2.5", "Seq"}},
		{"salvaged source not a string", "session/salvaged", salvagedWith(`"salvagedFrom":7`), false, P, []string{"data.salvagedFrom = 7", "session id"}},
		{"salvaged source not a session id", "session/salvaged", salvagedWith(`"salvagedFrom":"a\u0001b"`), false, P, []string{"data.salvagedFrom", "session id"}},
		{"salvaged source empty", "session/salvaged", salvagedWith(`"salvagedFrom":""`), false, P, []string{`data.salvagedFrom = ""`, "session id"}},
		{"salvaged offset negative", "session/salvaged", salvagedWith(`"damagedAtOffset":-1`), false, P, []string{"data.damagedAtOffset = -1", "non-negative"}},
		{"salvaged bytes not integer", "session/salvaged", salvagedWith(`"damagedBytes":1.5`), false, P, []string{"data.damagedBytes = 1.5", "non-negative"}},
		{"salvaged excluded negative", "session/salvaged", salvagedWith(`"intactEventsExcluded":-3`), false, P, []string{"data.intactEventsExcluded = -3", "non-negative"}},
		{"salvaged artifact empty", "session/salvaged", salvagedWith(`"artifact":""`), false, P, []string{`data.artifact = ""`, "non-empty"}},
		{"salvaged artifact missing", "session/salvaged", `{"salvagedFrom":"s","damagedAtOffset":1,"damagedBytes":2,"intactEventsExcluded":3}`, false, P, []string{"data.artifact: missing"}},
		{"salvaged unknown member", "session/salvaged", salvagedWith(`"reason":"crc"`), false, P, []string{"data.reason: unknown member"}},
		{"compaction id empty", "compaction/start", `{"compactionId":"","turn":null}`, false, P, []string{`data.compactionId = ""`, "non-empty"}},
		{"compaction turn missing", "compaction/end", `{"compactionId":"c"}`, false, P, []string{"data.turn: missing"}},
		{"compaction turn string", "compaction/start", `{"compactionId":"c","turn":"1"}`, false, P, []string{`data.turn = "1"`, "or null"}},
		{"compaction end error not string", "compaction/end", `{"compactionId":"c","turn":1,"error":{}}`, false, P, []string{"data.error = an object of 0 members"}},
		{"shadowed seq negative", "compaction/prune", `{"shadowedRange":{"start":3,"end":3},"shadowedSeqs":[3,-1],"shadowedTokenCount":1}`, false, P, []string{"data.shadowedSeqs[1] = -1"}},
		{"shadowed range unknown member", "compaction/prune", `{"shadowedRange":{"start":3,"end":3,"len":1},"shadowedSeqs":[3],"shadowedTokenCount":1}`, false, P, []string{"data.shadowedRange.len: unknown member"}},
		{"prune token count negative", "compaction/prune", `{"shadowedRange":{"start":3,"end":3},"shadowedSeqs":[3],"shadowedTokenCount":-1}`, false, P, []string{"data.shadowedTokenCount = -1"}},
		{"summary token count not integer", "compaction/summary", `{"compactionId":"c1","summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1.5,"provider":"p","model":"m"}`, false, P, []string{"data.shadowedTokenCount = 1.5"}},
		{"summary tool-call block", "compaction/summary", `{"compactionId":"c1","summary":[{"type":"tool-call","id":"a","name":"n","arguments":""}],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1,"provider":"p","model":"m"}`, false, P, []string{`data.summary[0].type = "tool-call"`, "not allowed"}},
		{"summary missing provider", "compaction/summary", `{"compactionId":"c1","summary":[],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1,"model":"m"}`, false, P, []string{"data.provider: missing"}},
		{"shadowed seqs not an array", "compaction/prune", `{"shadowedRange":{"start":3,"end":3},"shadowedSeqs":3,"shadowedTokenCount":1}`, false, P, []string{"data.shadowedSeqs = 3", "array of Seqs"}},
		{"summary not an array", "compaction/summary", `{"compactionId":"c1","summary":"s","shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1,"provider":"p","model":"m"}`, false, P, []string{`data.summary = "s"`}},
		{"todos not an array", "todo/write", `{"todos":{}}`, false, P, []string{"data.todos = an object of 0 members"}},
		{"reason not an object", "turn/end", `{"turn":1,"reason":"completed"}`, false, P, []string{`data.reason = "completed"`}},
		{"cause not an object", "turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":"user"}}`, false, P, []string{`data.reason.cause = "user"`}},
		{"long string shortened at a rune", "todo/write", `{"todos":[{"content":"a","status":"` + strings.Repeat("é", 100) + `"}]}`, false, P, []string{`data.todos[0].status = "` + strings.Repeat("é", 39) + "…"}},
		{"header seq negative", "developer/message", `{"turn":1,"step":1,"headerSeq":-1,"message":` + plDevMsg + `}`, false, P, []string{"data.headerSeq = -1", "Seq"}},
	})
}

func TestCheckPayloadMessageRules(t *testing.T) {
	P := sdk.CodePayloadInvalid
	user := func(content string) string {
		return `{"id":"u1","role":"user","content":` + content + `,"source":{"kind":"prompt"}}`
	}
	asst := func(content string) string {
		return `{"turn":1,"step":1,"stream":[],"message":{"id":"a1","role":"assistant","content":` + content + `,"source":{"kind":"model","provider":"p","model":"m"}}}`
	}
	runPayloadCases(t, []payloadCase{
		{"message not an object", "system/message", `{"turn":0,"step":0,"message":"hi"}`, false, P, []string{`data.message = "hi"`}},
		{"message missing", "system/message", `{"turn":0,"step":0}`, false, P, []string{"data.message: missing"}},
		{"role missing", "user/message", `{"id":"u1","content":[],"source":{"kind":"k"}}`, false, P, []string{"data.role: missing"}},
		{"id empty", "user/message", `{"id":"","role":"user","content":[],"source":{"kind":"k"}}`, false, P, []string{`data.id = ""`}},
		{"id over 256 bytes", "user/message", `{"id":"` + strings.Repeat("x", 257) + `","role":"user","content":[],"source":{"kind":"k"}}`, false, P, []string{"data.id = \"xxx", "256 bytes"}},
		{"unknown message member", "user/message", `{"id":"u1","role":"user","content":[],"source":{"kind":"k"},"name":"bob"}`, false, P, []string{"data.name: unknown member"}},
		{"toolCallId outside tool", "user/message", `{"id":"u1","role":"user","content":[],"source":{"kind":"k"},"toolCallId":"a"}`, false, P, []string{"data.toolCallId: unknown member"}},
		{"content not an array", "user/message", `{"id":"u1","role":"user","content":"hi","source":{"kind":"k"}}`, false, P, []string{`data.content = "hi"`}},
		{"source not an object", "user/message", `{"id":"u1","role":"user","content":[],"source":"k"}`, false, P, []string{`data.source = "k"`}},
		{"source kind empty", "user/message", `{"id":"u1","role":"user","content":[],"source":{"kind":""}}`, false, P, []string{`data.source.kind = ""`}},
		{"source kind missing", "developer/message", `{"turn":1,"step":1,"message":{"id":"d","role":"developer","content":[],"source":{}}}`, false, P, []string{"data.message.source.kind: missing"}},
		{"block not an object", "user/message", user(`["hi"]`), false, P, []string{`data.content[0] = "hi"`}},
		{"block type missing", "user/message", user(`[{"text":"hi"}]`), false, P, []string{"data.content[0].type: missing"}},
		{"unknown block type", "user/message", user(`[{"type":"text","text":"a"},{"type":"video","url":"u"}]`), false, P, []string{`data.content[1].type = "video"`, "unknown block type"}},
		{"block unknown member", "user/message", user(`[{"type":"text","text":"a","lang":"en"}]`), false, P, []string{"data.content[0].lang: unknown member"}},
		{"text not a string", "user/message", user(`[{"type":"text","text":1}]`), false, P, []string{"data.content[0].text = 1"}},
		{"reasoning in user", "user/message", user(`[{"type":"reasoning","text":"t"}]`), false, P, []string{`data.content[0].type = "reasoning"`, "not allowed in user/message"}},
		{"tool-call in tool result", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","source":{"kind":"tool","callId":"a"},"content":[{"type":"tool-call","id":"x","name":"n","arguments":""}]}}`, false, P, []string{`data.message.content[0].type = "tool-call"`}},
		{"image in system", "system/message", `{"turn":0,"step":0,"message":{"id":"s","role":"system","content":[{"type":"image","mediaType":"image/png","data":""}],"source":{"kind":"system-prompt"}}}`, false, P, []string{`data.message.content[0].type = "image"`}},
		{"plugin block in developer", "developer/message", `{"turn":1,"step":1,"message":{"id":"d","role":"developer","content":[{"type":"plugin:x"}],"source":{"kind":"k"}}}`, false, P, []string{`data.message.content[0].type = "plugin:x"`}},
		{"image not base64", "user/message", user(`[{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo"}]`), false, P, []string{`data.content[0].data = "iVBORw0KGgo"`, "base64"}},
		{"image mediaType missing", "user/message", user(`[{"type":"image","data":"QQ=="}]`), false, P, []string{"data.content[0].mediaType: missing"}},
		{"tool-call id empty", "assistant/message", asst(`[{"type":"tool-call","id":"","name":"n","arguments":""}]`), false, P, []string{`data.message.content[0].id = ""`}},
		{"tool-call name empty", "assistant/message", asst(`[{"type":"tool-call","id":"a","name":"","arguments":""}]`), false, P, []string{`data.message.content[0].name = ""`}},
		{"tool-call id duplicate", "assistant/message", asst(`[{"type":"tool-call","id":"a","name":"n","arguments":""},{"type":"text","text":""},{"type":"tool-call","id":"a","name":"m","arguments":""}]`), false, P, []string{"data.message.content[2].id", `"a": duplicate tool-call id`}},
		{"tool-call id duplicate among many", "assistant/message", asst(manyToolCalls(80, 37)), false, P, []string{"data.message.content[80].id", `"c37": duplicate`}},
		{"isError not a bool", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","isError":"yes","source":{"kind":"tool","callId":"a"},"content":[]}}`, false, P, []string{`data.message.isError = "yes"`}},
		{"toolCallId empty", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"","source":{"kind":"tool","callId":""},"content":[]}}`, false, P, []string{`data.message.toolCallId = ""`}},
		{"toolCallId missing", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","source":{"kind":"tool","callId":"a"},"content":[]}}`, false, P, []string{"data.message.toolCallId: missing"}},
	})
}

// manyToolCalls returns n+1 tool-call blocks c0…c(n-1) plus a repeat of c(dup).
func manyToolCalls(n, dup int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"type":"tool-call","id":"c%d","name":"n","arguments":""},`, i)
	}
	fmt.Fprintf(&b, `{"type":"tool-call","id":"c%d","name":"n","arguments":""}]`, dup)
	return b.String()
}

func TestCheckPayloadMessageRoleMismatch(t *testing.T) {
	R := sdk.CodeMessageRoleMismatch
	runPayloadCases(t, []payloadCase{
		{"assistant role user", "assistant/message", `{"turn":1,"step":1,"stream":[],"message":{"id":"a","role":"user","content":[],"source":{"kind":"model","provider":"p","model":"m"}}}`, false, R, []string{`data.message.role = "user"`, `must be "assistant"`}},
		{"developer role outside developer/message", "user/message", `{"id":"u","role":"developer","content":[],"source":{"kind":"k"}}`, false, R, []string{`data.role = "developer"`, `must be "user"`}},
		{"tool result role assistant", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"assistant","content":[],"source":{"kind":"tool","callId":"a"},"toolCallId":"a"}}`, false, R, []string{`data.message.role = "assistant"`, `must be "tool"`}},
		{"role checked before other members", "system/message", `{"turn":0,"step":0,"message":{"id":"","role":"user","extra":1}}`, false, R, []string{`data.message.role = "user"`, `must be "system"`}},
	})
}

func TestCheckPayloadMessageSourceInvalid(t *testing.T) {
	S := sdk.CodeMessageSourceInvalid
	runPayloadCases(t, []payloadCase{
		{"system source kind", "system/message", `{"turn":0,"step":0,"message":{"id":"s","role":"system","content":[],"source":{"kind":"prompt"}}}`, false, S, []string{`data.message.source.kind = "prompt"`, `must be "system-prompt"`}},
		{"assistant source kind", "assistant/message", `{"turn":1,"step":1,"stream":[],"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"tool","provider":"p","model":"m"}}}`, false, S, []string{`data.message.source.kind = "tool"`, `must be "model"`}},
		{"assistant provider empty", "assistant/message", `{"turn":1,"step":1,"stream":[],"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"model","provider":"","model":"m"}}}`, false, S, []string{`data.message.source.provider = ""`}},
		{"assistant model missing", "assistant/message", `{"turn":1,"step":1,"stream":[],"message":{"id":"a","role":"assistant","content":[],"source":{"kind":"model","provider":"p"}}}`, false, S, []string{"data.message.source.model: missing"}},
		{"tool source kind", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","source":{"kind":"model","callId":"a"},"content":[]}}`, false, S, []string{`data.message.source.kind = "model"`, `must be "tool"`}},
		{"tool callId empty", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","source":{"kind":"tool","callId":""},"content":[]}}`, false, S, []string{`data.message.source.callId = ""`}},
		{"checkpoint without compactionId", "user/message", `{"id":"u","role":"user","content":[],"source":{"kind":"compact-checkpoint"}}`, false, S, []string{"data.source.compactionId: missing"}},
		{"checkpoint sourceCommandId not string", "user/message", `{"id":"u","role":"user","content":[],"source":{"kind":"compact-checkpoint","compactionId":"c","sourceCommandId":1}}`, false, S, []string{"data.source.sourceCommandId = 1"}},
	})
}

func TestCheckPayloadToolCallIDMismatch(t *testing.T) {
	runPayloadCases(t, []payloadCase{
		{"toolCallId differs from source.callId", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","source":{"kind":"tool","callId":"b"},"content":[]}}`, false,
			sdk.CodeToolCallIDMismatch, []string{"data.message.toolCallId", `"a"`, `data.message.source.callId = "b"`}},
	})
}

func TestCheckPayloadToolResultErrorWithoutIsError(t *testing.T) {
	E := sdk.CodeToolResultErrorWithoutIserror
	runPayloadCases(t, []payloadCase{
		{"isError absent", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","source":{"kind":"tool","callId":"a"},"content":[]},"error":{"name":"E","code":"C"}}`, false, E, []string{"data.message.isError: missing", "data.error"}},
		{"isError false", "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"tool","toolCallId":"a","isError":false,"source":{"kind":"tool","callId":"a"},"content":[]},"error":{"name":"E","code":"C"}}`, false, E, []string{"data.message.isError = false"}},
	})
}

func TestCheckPayloadToolChangeRules(t *testing.T) {
	dev := func(content string) string {
		return `{"turn":1,"step":1,"headerSeq":0,"message":{"id":"d","role":"developer","content":` + content + `,"source":{"kind":"k"}}}`
	}
	runPayloadCases(t, []payloadCase{
		{"addition in user message", "user/message", `{"id":"u","role":"user","content":[{"type":"tool-addition","toolName":"x"}],"source":{"kind":"k"}}`, false,
			sdk.CodeToolChangeRole, []string{`data.content[0].type = "tool-addition"`, "only in developer/message"}},
		{"removal in assistant message", "assistant/message", `{"turn":1,"step":1,"stream":[],"message":{"id":"a","role":"assistant","content":[{"type":"tool-removal","toolName":"x"}],"source":{"kind":"model","provider":"p","model":"m"}}}`, false,
			sdk.CodeToolChangeRole, []string{`data.message.content[0].type = "tool-removal"`}},
		{"addition in compaction summary", "compaction/summary", `{"compactionId":"c1","summary":[{"type":"tool-addition","toolName":"x"}],"shadowedRange":{"start":1,"end":1},"shadowedSeqs":[1],"shadowedTokenCount":1,"provider":"p","model":"m"}`, false,
			sdk.CodeToolChangeRole, []string{`data.summary[0].type = "tool-addition"`}},
		{"addition name empty", "developer/message", dev(`[{"type":"tool-addition","toolName":""}]`), false,
			sdk.CodeToolChangeNameEmpty, []string{"data.message.content[0].toolName", `""`}},
		{"removal name empty", "developer/message", `{"turn":1,"step":1,"message":{"id":"d","role":"developer","content":[{"type":"tool-removal","toolName":""}],"source":{"kind":"k"}}}`, false,
			sdk.CodeToolChangeNameEmpty, []string{"data.message.content[0].toolName"}},
		{"addition name missing is a shape error", "developer/message", dev(`[{"type":"tool-addition"}]`), false,
			sdk.CodePayloadInvalid, []string{"data.message.content[0].toolName: missing"}},
		{"addition with inline tool", "developer/message", dev(`[{"type":"tool-addition","toolName":"x","tool":{"name":"x"}}]`), false,
			sdk.CodeToolAdditionInlineDefinition, []string{"data.message.content[0].tool"}},
	})
}

func TestCheckPayloadDeveloperHeaderSeqMismatch(t *testing.T) {
	D := sdk.CodeDeveloperHeaderSeqMismatch
	runPayloadCases(t, []payloadCase{
		{"addition without headerSeq", "developer/message", `{"turn":1,"step":1,"message":{"id":"d","role":"developer","content":[{"type":"text","text":"t"},{"type":"tool-addition","toolName":"search"}],"source":{"kind":"k"}}}`, false,
			D, []string{"data.headerSeq: missing", `"search"`, "content[1]"}},
		{"removal only with headerSeq", "developer/message", `{"turn":1,"step":1,"headerSeq":4,"message":{"id":"d","role":"developer","content":[{"type":"tool-removal","toolName":"search"}],"source":{"kind":"k"}}}`, false,
			D, []string{"data.headerSeq = 4", "no tool-addition"}},
		{"text only with headerSeq", "developer/message", `{"turn":1,"step":1,"headerSeq":0,"message":{"id":"d","role":"developer","content":[],"source":{"kind":"k"}}}`, false,
			D, []string{"data.headerSeq = 0"}},
	})
}

func TestCheckPayloadRequestHeaderRules(t *testing.T) {
	hdr := func(h, rest string) string { return `{"header":` + h + `,"reason":"initial"` + rest + `}` }
	H := sdk.CodeHeaderInvalid
	runPayloadCases(t, []payloadCase{
		{"system forbidden", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"system":"you are"}`, ``), false,
			sdk.CodeHeaderSystemForbidden, []string{"data.header.system", "system/message"}},
		{"system before every other header rule", "request/header", `{"header":{"system":"x","tools":[],"adapterDefaults":{},"config":1,"bogus":1},"reason":"nope","bogus":1}`, true,
			sdk.CodeHeaderSystemForbidden, []string{"data.header.system"}},
		{"empty tools", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[]}`, ``), false,
			sdk.CodeHeaderEmptyTools, []string{"data.header.tools", "[]"}},
		{"empty tools before empty adapterDefaults", "request/header", hdr(`{"config":{},"adapterDefaults":{},"tools":[]}`, ``), false,
			sdk.CodeHeaderEmptyTools, []string{"data.header.tools"}},
		{"empty adapterDefaults", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"adapterDefaults":{}}`, ``), false,
			sdk.CodeHeaderEmptyAdapterDefaults, []string{"data.header.adapterDefaults", "{}"}},
		{"empty adapterDefaults before config shape", "request/header", hdr(`{"config":{"provider":""},"adapterDefaults":{}}`, ``), false,
			sdk.CodeHeaderEmptyAdapterDefaults, []string{"data.header.adapterDefaults"}},
		{"config missing", "request/header", hdr(`{}`, ``), false, H, []string{"data.header.config: missing"}},
		{"config not an object", "request/header", hdr(`{"config":[]}`, ``), false, H, []string{"data.header.config = an array of 0 elements"}},
		{"provider empty", "request/header", hdr(`{"config":{"provider":"","model":"m"}}`, ``), false, H, []string{`data.header.config.provider = ""`, "non-empty"}},
		{"model missing", "request/header", hdr(`{"config":{"provider":"p"}}`, ``), false, H, []string{"data.header.config.model: missing"}},
		{"reasoningEffort empty", "request/header", hdr(`{"config":{"provider":"p","model":"m","reasoningEffort":""}}`, ``), false, H, []string{`data.header.config.reasoningEffort = ""`}},
		{"maxTokens negative", "request/header", hdr(`{"config":{"provider":"p","model":"m","maxTokens":-1}}`, ``), false, H, []string{"data.header.config.maxTokens = -1"}},
		{"temperature not a number", "request/header", hdr(`{"config":{"provider":"p","model":"m","temperature":"hot"}}`, ``), false, H, []string{`data.header.config.temperature = "hot"`}},
		{"stop not a string or array", "request/header", hdr(`{"config":{"provider":"p","model":"m","stop":7}}`, ``), false, H, []string{"data.header.config.stop = 7", "string or an array"}},
		{"stop element not a string", "request/header", hdr(`{"config":{"provider":"p","model":"m","stop":["a",1]}}`, ``), false, H, []string{"data.header.config.stop[1] = 1"}},
		{"adapterDefaults without config member", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"adapterDefaults":{"maxTokens":true}}`, ``), false, H, []string{"data.header.adapterDefaults.maxTokens", "config.maxTokens", "absent"}},
		{"adapterDefaults flag false", "request/header", hdr(`{"config":{"provider":"p","model":"m","maxTokens":1},"adapterDefaults":{"maxTokens":false}}`, ``), false, H, []string{"data.header.adapterDefaults.maxTokens = false"}},
		{"adapterDefaults unknown member", "request/header", hdr(`{"config":{"provider":"p","model":"m","temperature":1},"adapterDefaults":{"temperature":true}}`, ``), false, H, []string{"data.header.adapterDefaults.temperature: unknown member"}},
		{"adapterDefaults not an object", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"adapterDefaults":true}`, ``), false, H, []string{"data.header.adapterDefaults = true"}},
		{"tools not an array", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":{"name":"x"}}`, ``), false, H, []string{"data.header.tools = an object of 1 members"}},
		{"tool name empty", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[{"name":""}]}`, ``), false, H, []string{`data.header.tools[0].name = ""`}},
		{"tool description not a string", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[{"name":"a","description":1}]}`, ``), false, H, []string{"data.header.tools[0].description = 1"}},
		{"tool parameters not an object", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[{"name":"a","parameters":[]}]}`, ``), false, H, []string{"data.header.tools[0].parameters"}},
		{"tool deferLoading false", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[{"name":"a","deferLoading":false}]}`, ``), false, H, []string{"data.header.tools[0].deferLoading = false"}},
		{"tool names duplicate", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":[{"name":"a"},{"name":"b"},{"name":"a"}]}`, ``), false, H, []string{"data.header.tools[2].name", `"a": duplicate tool name`}},
		{"tool names duplicate among many", "request/header", hdr(`{"config":{"provider":"p","model":"m"},"tools":`+manyTools(100, 44)+`}`, ``), false, H, []string{"data.header.tools[100].name", `"t44"`}},
		{"startsSeries false", "request/header", hdr(plHeader, `,"startsSeries":false`), false, H, []string{"data.startsSeries = false"}},
		{"header shape before reason", "request/header", `{"header":{"config":{"provider":"p"}},"reason":"bogus"}`, false, H, []string{"data.header.config.model: missing"}},
		{"header rules before closed members", "request/header", `{"header":{"config":{"provider":"p","model":""},"bogus":1},"reason":"initial","bogus":1}`, false, H, []string{"data.header.config.model"}},
	})
}

// manyToolsNoDup returns n tool schemas t0…t(n-1).
func manyToolsNoDup(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","description":"d","parameters":{}}`, i)
	}
	b.WriteByte(']')
	return b.String()
}

// manyTools returns n tool schemas t0…t(n-1) plus a repeat of t(dup).
func manyTools(n, dup int) string {
	s := manyToolsNoDup(n)
	return s[:len(s)-1] + fmt.Sprintf(`,{"name":"t%d"}]`, dup)
}

func TestCheckPayloadHeaderReasonInvalid(t *testing.T) {
	R := sdk.CodeHeaderReasonInvalid
	runPayloadCases(t, []payloadCase{
		{"unknown reason", "request/header", `{"header":` + plHeader + `,"reason":"restart"}`, true, R, []string{`data.reason = "restart"`, `"series"`}},
		{"reason missing", "request/header", `{"header":` + plHeader + `}`, false, R, []string{"data.reason: missing"}},
		{"reason not a string", "request/header", `{"header":` + plHeader + `,"reason":1}`, false, R, []string{"data.reason = 1"}},
		{"initial after a header", "request/header", `{"header":` + plHeader + `,"reason":"initial"}`, true, R, []string{`data.reason = "initial"`, "already has a request/header"}},
		{"first header not initial", "request/header", `{"header":` + plHeader + `,"reason":"change"}`, false, R, []string{`data.reason = "change"`, `must have reason "initial"`}},
		{"reason before closed members", "request/header", `{"header":{"config":{"provider":"p","model":"m"},"bogus":1},"reason":"resume","bogus":2}`, false, R, []string{`data.reason = "resume"`}},
	})
}

func TestCheckPayloadRequestHeaderClosedMembers(t *testing.T) {
	P := sdk.CodePayloadInvalid
	runPayloadCases(t, []payloadCase{
		{"data not an object", "request/header", `null`, false, P, []string{"data = null"}},
		{"header missing", "request/header", `{"reason":"initial"}`, false, P, []string{"data.header: missing"}},
		{"header not an object", "request/header", `{"header":[],"reason":"initial"}`, false, P, []string{"data.header = an array of 0 elements"}},
		{"unknown data member", "request/header", `{"header":` + plHeader + `,"reason":"initial","series":1}`, false, P, []string{"data.series: unknown member"}},
		{"unknown header member", "request/header", `{"header":{"config":{"provider":"p","model":"m"},"prompt":"x"},"reason":"initial"}`, false, P, []string{"data.header.prompt: unknown member"}},
	})
}

func TestCheckMessage(t *testing.T) {
	for _, tc := range []struct{ typ, msg string }{
		{"system/message", plSysMsg},
		{"developer/message", plDevMsg},
		{"user/message", plUserData},
		{"assistant/message", plAsstMsg},
		{"tool/result", plToolMsg},
	} {
		if err := checkMessage(tc.typ, parseValue(t, tc.msg)); err != nil {
			t.Errorf("checkMessage(%s) = %v, want nil", tc.typ, err)
		}
	}
	err := checkMessage("user/message", parseValue(t, `{"id":"u1","role":"assistant","content":[],"source":{"kind":"k"}}`))
	assertPayloadError(t, err, sdk.CodeMessageRoleMismatch, []string{"user/message: message.role", `"assistant"`, `must be "user"`})
	err = checkMessage("assistant/message", parseValue(t, `{"id":"a","role":"assistant","content":[{"type":"image","mediaType":"m","data":""}],"source":{"kind":"model","provider":"p","model":"m"}}`))
	assertPayloadError(t, err, sdk.CodePayloadInvalid, []string{"assistant/message: message.content[0].type", `"image"`})
	err = checkMessage("turn/start", parseValue(t, plUserData))
	assertPayloadError(t, err, sdk.CodePayloadInvalid, []string{"turn/start", "carries no message"})
}

func TestCheckProjectionTargets(t *testing.T) {
	valid := []struct {
		data string
		seq  sdk.Seq
	}{
		{`{"targets":[0],"text":"p"}`, 1},
		{`{"targets":[4,0,2],"anything":{"x":[1]}}`, 5},
	}
	for _, tc := range valid {
		if err := checkProjectionTargets(parseValue(t, tc.data), tc.seq); err != nil {
			t.Errorf("checkProjectionTargets(%s, %d) = %v, want nil", tc.data, tc.seq, err)
		}
	}
	var many strings.Builder
	many.WriteString(`{"targets":[`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&many, "%d,", i)
	}
	many.WriteString(`33]}`)
	for _, tc := range []struct {
		name, data string
		seq        sdk.Seq
		want       []string
	}{
		{"data not an object", `[0]`, 5, []string{"data = an array of 1 elements"}},
		{"targets missing", `{"text":"p"}`, 5, []string{"data.targets: missing"}},
		{"targets empty", `{"targets":[]}`, 5, []string{"data.targets = an array of 0 elements", "non-empty"}},
		{"targets not an array", `{"targets":3}`, 5, []string{"data.targets = 3"}},
		{"element not a number", `{"targets":[1,"2"]}`, 5, []string{`data.targets[1] = "2"`}},
		{"element not integer-form", `{"targets":[1e0]}`, 5, []string{"data.targets[0] = 1e0"}},
		{"element negative", `{"targets":[-1]}`, 5, []string{"data.targets[0] = -1"}},
		{"element not earlier", `{"targets":[1,5]}`, 5, []string{"data.targets[1]", "5", "seq 5"}},
		{"element later", `{"targets":[9]}`, 5, []string{"data.targets[0]", "9", "seq 5"}},
		{"element duplicate", `{"targets":[2,1,2]}`, 5, []string{"data.targets[2]", "2: duplicate"}},
		{"element duplicate among many", many.String(), 200, []string{"data.targets[100]", "33: duplicate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkProjectionTargets(parseValue(t, tc.data), tc.seq)
			assertPayloadError(t, err, sdk.CodePayloadInvalid, tc.want)
		})
	}
}

// TestValidBase64MatchesStdEncoding checks validBase64 against the decoder it
// stands in for, on exhaustive short strings and random longer ones.
func TestValidBase64MatchesStdEncoding(t *testing.T) {
	const alphabet = "AQw+/=\r\n!- "
	check := func(s string) {
		_, err := base64.StdEncoding.DecodeString(s)
		if got, want := validBase64(s), err == nil; got != want {
			t.Fatalf("validBase64(%q) = %v, StdEncoding accepts: %v", s, got, want)
		}
	}
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		check(prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 5)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := make([]byte, 6+r.IntN(20))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(b))
	}
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", "QUJDRA==", "Q\r\nQ=\n=", "QQ==\n"} {
		if !validBase64(s) {
			t.Errorf("validBase64(%q) = false", s)
		}
	}
}

// TestCheckPayloadValidPathDoesNotAllocate guards the cost of A9 on every
// append: without image blocks, a valid payload is checked without allocating.
func TestCheckPayloadValidPathDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct{ typ, data string }{
		{"assistant/message", `{"turn":1,"step":1,"message":` + plAsstMsg + `,"stream":[{"dt":0}],"usage":{"input":1,"output":2}}`},
		{"developer/message", `{"turn":1,"step":1,"headerSeq":3,"message":` + plDevMsg + `}`},
		{"tool/result", `{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"a","isError":true,"source":{"kind":"tool","callId":"a"},"content":[{"type":"text","text":"x"}]},"error":{"name":"E","code":"C"}}`},
		{"request/header", `{"header":{"config":{"provider":"p","model":"m","maxTokens":1},"adapterDefaults":{"maxTokens":true},"tools":` + manyToolsNoDup(40) + `},"reason":"change"}`},
		{"turn/end", `{"turn":1,"reason":{"kind":"aborted","cause":{"kind":"hook","reason":"r"}}}`},
		{"compaction/summary", `{"compactionId":"c1",` + plSummary + `}`},
	} {
		data := parseValue(t, tc.data)
		if err := checkPayload(tc.typ, data, true); err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if n := testing.AllocsPerRun(20, func() { _ = checkPayload(tc.typ, data, true) }); n != 0 {
			t.Errorf("%s: %v allocations per check, want 0", tc.typ, n)
		}
	}
	targets := parseValue(t, `{"targets":[3,1,2]}`)
	if n := testing.AllocsPerRun(20, func() { _ = checkProjectionTargets(targets, 9) }); n != 0 {
		t.Errorf("checkProjectionTargets: %v allocations per check, want 0", n)
	}
}

func BenchmarkCheckPayloadAssistantMessage(b *testing.B) {
	data := parseValue(b, `{"turn":1,"step":1,"message":`+plAsstMsg+`,"stream":[{"dt":0},"x",null],"usage":{"input":1,"output":2}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkPayload("assistant/message", data, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckPayloadRequestHeader(b *testing.B) {
	data := parseValue(b, `{"header":{"config":{"provider":"p","model":"m","maxTokens":100},"adapterDefaults":{"maxTokens":true},"tools":[{"name":"a","description":"d","parameters":{}},{"name":"b"},{"name":"c"}]},"reason":"change"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := checkPayload("request/header", data, true); err != nil {
			b.Fatal(err)
		}
	}
}

// salvagedWith returns a valid session/salvaged payload with one member
// replaced (or, when its name is new, added) by member, a "name":value pair.
func salvagedWith(member string) string {
	members := []string{`"salvagedFrom":"s1"`, `"damagedAtOffset":10`, `"damagedBytes":20`, `"intactEventsExcluded":2`, `"artifact":"/d/a.bin"`}
	name, _, _ := strings.Cut(member, ":")
	replaced := false
	for i, m := range members {
		if strings.HasPrefix(m, name+":") {
			members[i], replaced = member, true
		}
	}
	if !replaced {
		members = append(members, member)
	}
	return "{" + strings.Join(members, ",") + "}"
}
