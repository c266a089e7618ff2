package codex_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/codex"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/sdk"
)

func run(t *testing.T, name string) foreigntest.Result {
	t.Helper()
	return foreigntest.Run(t, codex.New(), foreigntest.ReadLines(t, filepath.Join("testdata", name)))
}

// typed lists the types of the session's events other than the raw records.
func typed(r foreigntest.Result) []string {
	var out []string
	for _, e := range r.Session.Events().All() {
		if !strings.HasPrefix(e.Type(), "plugin:") {
			out = append(out, e.Type())
		}
	}
	return out
}

func count(types []string, typ string) int {
	n := 0
	for _, t := range types {
		if t == typ {
			n++
		}
	}
	return n
}

func messages(t *testing.T, r foreigntest.Result, format string) string {
	t.Helper()
	b, err := r.Messages(format)
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return string(b)
}

// pendingCall names the fixtures whose source leaves a tool call without
// its output, and why: their provider renderings are the named error
// TOOL_CALLS_PENDING rather than a body.
var pendingCall = map[string]string{
	// A subagent's rollout starts with a copy of its parent's history,
	// up to the spawn_agent call that started it; the call's output is
	// in the parent's rollout only.
	"rollout-2026-01-03T04-05-10-33333333-3333-4333-8333-333333333333.jsonl": "call-spawn-001",
}

// Every well-formed fixture imports without damage and without a refused
// input, its messages render in both OpenAI formats, and every tool call
// is paired with its result (but for the calls pendingCall names).
func TestFixturesImportWithoutRefusal(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	n := 0
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasPrefix(name, "damaged-") {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			if len(r.Damaged) != 0 || len(r.Refused) != 0 {
				t.Fatalf("damaged %v refused %v", r.Damaged, r.Refused)
			}
			if call, ok := pendingCall[name]; ok {
				_, err := r.Messages("openai")
				if !errors.Is(err, sdk.CodeToolCallsPending) || !strings.Contains(err.Error(), call) {
					t.Errorf("rendering: %v, want TOOL_CALLS_PENDING for %s", err, call)
				}
				return
			}
			messages(t, r, "openai")
			messages(t, r, "openai-responses")
			ml, err := r.Session.Messages()
			if err != nil {
				t.Fatal(err)
			}
			var msgs [][]byte
			for _, m := range ml.All() {
				msgs = append(msgs, m.JSON())
			}
			if om, err := provider.Omissions(msgs); err != nil || om != nil {
				t.Errorf("omissions %v, %v; want every call paired", om, err)
			}
		})
	}
	if n < 5 {
		t.Fatalf("%d well-formed fixtures, want 5", n)
	}
}

// A damaged line is reported with its number and reason, kept raw only,
// and the lines after it still map.
func TestDamageIsReportedExactly(t *testing.T) {
	for name, want := range map[string]map[int]string{
		"damaged-not-json.jsonl": {3: "not JSON"},
		"damaged-torn.jsonl":     {4: "torn: the last line has no line feed and is not complete JSON"},
		"damaged-utf8.jsonl":     {3: "invalid UTF-8"},
		"damaged-foreign.jsonl":  {3: "not a Codex rollout line"},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			if len(r.Damaged) != len(want) || len(r.Refused) != 0 {
				t.Fatalf("damaged %v refused %v, want %v", r.Damaged, r.Refused, want)
			}
			for n, reason := range want {
				if r.Damaged[n] != reason {
					t.Errorf("line %d: %q, want %q", n, r.Damaged[n], reason)
				}
			}
			const msgs = `[{"role":"system","content":"You are Codex, a coding agent. Be precise."},{"role":"user","content":"hello"},{"role":"assistant","content":"hi"}]`
			if got := messages(t, r, "openai"); got != msgs {
				t.Errorf("messages\n got %s\nwant %s", got, msgs)
			}
		})
	}
}

// session_meta gives the identity; a later session_meta (a fork's copy of
// its parent's) does not.
func TestIdentify(t *testing.T) {
	for name, want := range map[string]foreign.Identity{
		"basic.jsonl":  {Tool: "codex", SessionID: "0199a213-81c0-7800-8aa1-bbab2a035a53", Version: "0.64.0", CWD: "/home/dev/proj"},
		"fork.jsonl":   {Tool: "codex", SessionID: "0199a6d2-5f00-7a31-8e42-0c9d1b7a6f10", Version: "0.64.0", CWD: "/home/dev/proj"},
		"legacy.jsonl": {Tool: "codex", SessionID: "5973b6c0-94b8-487b-a530-2aeb6098ae0e"},
	} {
		if got := run(t, name).Identity; got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	sub := `{"timestamp":"t","type":"session_meta","payload":{"id":"c1","cwd":"rel","parent_thread_id":"p1"}}`
	id, err := codex.New().Identify(foreigntest.SplitLines([]byte(sub + "\n")))
	if want := (foreign.Identity{Tool: "codex", SessionID: "c1", ParentSessionID: "p1", AgentID: "c1"}); err != nil || id != want {
		t.Errorf("subagent: %+v %v, want %+v", id, err, want)
	}
	// Versions that name the parent only inside source, and a plain source.
	nested := `{"timestamp":"t","type":"session_meta","payload":{"id":"c2","source":{"subagent":{"thread_spawn":{"parent_thread_id":"p2","depth":1}}}}}`
	id, err = codex.New().Identify(foreigntest.SplitLines([]byte(nested + "\n")))
	if want := (foreign.Identity{Tool: "codex", SessionID: "c2", ParentSessionID: "p2", AgentID: "c2"}); err != nil || id != want {
		t.Errorf("subagent named in source: %+v %v, want %+v", id, err, want)
	}
	for _, src := range []string{`"cli"`, `{"subagent":"review"}`, `{"subagent":{"thread_spawn":{}}}`} {
		main := `{"timestamp":"t","type":"session_meta","payload":{"id":"c3","source":` + src + `}}`
		id, err = codex.New().Identify(foreigntest.SplitLines([]byte(main + "\n")))
		if want := (foreign.Identity{Tool: "codex", SessionID: "c3"}); err != nil || id != want {
			t.Errorf("source %s: %+v %v, want %+v", src, id, err, want)
		}
	}
	if _, err := codex.New().Identify(foreigntest.SplitLines([]byte(`{"type":"user"}` + "\n"))); err == nil {
		t.Error("a file without session_meta was identified")
	}
}

// The consecutive output items of one model response (reasoning, text,
// tool calls) form one assistant message in one step; token_count gives
// its usage; task_complete closes the turn.
func TestBasicLoop(t *testing.T) {
	r := run(t, "basic.jsonl")
	types := typed(r)
	for typ, want := range map[string]int{
		"turn/start": 2, "turn/end": 2, "step/start": 5, "step/end": 5, "assistant/message": 5,
		"tool/call": 4, "tool/result": 4, "request/header": 2, "request/context": 1,
		"system/message": 1, "developer/message": 1, "user/message": 4,
	} {
		if got := count(types, typ); got != want {
			t.Errorf("%d %s, want %d", got, typ, want)
		}
	}
	ev := findData(t, r, "assistant/message", "l10")
	var a struct {
		Message struct {
			Content []struct{ Type string } `json:"content"`
		} `json:"message"`
		Usage map[string]int64 `json:"usage"`
	}
	if err := json.Unmarshal(ev, &a); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range a.Message.Content {
		kinds = append(kinds, c.Type)
	}
	if strings.Join(kinds, ",") != "reasoning,text,tool-call,tool-call" {
		t.Errorf("first reply's blocks %v", kinds)
	}
	if a.Usage["input"] != 4210-3072 || a.Usage["cacheRead"] != 3072 || a.Usage["output"] != 96 {
		t.Errorf("usage %v", a.Usage)
	}
	const prompt = `{"role":"user","content":"Which Go version does go.mod ask for?"}`
	if got := messages(t, r, "openai"); !strings.Contains(got, prompt) ||
		!strings.Contains(got, `{"role":"user","content":"<environment_context>`) {
		t.Errorf("openai messages lack the prompt or the context: %s", got)
	}
}

// A turn_context becomes a request header only when the model or a policy
// changes: the first is "initial", later ones "change"; policies are
// config members and no header holds a system prompt.
func TestTurnContextHeaders(t *testing.T) {
	r := run(t, "compacted.jsonl")
	var headers []string
	for _, e := range r.Session.Events().All() {
		if e.Type() == "request/header" {
			headers = append(headers, string(e.Data()))
		}
	}
	if len(headers) != 2 {
		t.Fatalf("%d headers, want 2: %v", len(headers), headers)
	}
	for i, want := range []string{`"model":"gpt-5-codex","reasoningEffort":"medium","approvalPolicy":"on-request"`, `"model":"gpt-5.1-codex","reasoningEffort":"low"`} {
		if !strings.Contains(headers[i], want) {
			t.Errorf("header %d: %s lacks %s", i, headers[i], want)
		}
	}
	if !strings.HasSuffix(headers[0], `"reason":"initial"}`) || !strings.HasSuffix(headers[1], `"reason":"change"}`) {
		t.Errorf("reasons: %v", headers)
	}
	for _, h := range headers {
		if strings.Contains(h, `"system"`) || strings.Contains(h, "Answer briefly") {
			t.Errorf("a header holds instructions: %s", h)
		}
	}
}

// compacted replaces every surface node but the system prompt with a
// checkpoint, inside a compaction bracket.
func TestCompactedIsACheckpoint(t *testing.T) {
	r := run(t, "compacted.jsonl")
	types := typed(r)
	for _, typ := range []string{"compaction/start", "compaction/summary", "compaction/end"} {
		if count(types, typ) != 1 {
			t.Errorf("%d %s, want 1", count(types, typ), typ)
		}
	}
	const want = `[{"role":"system","content":"You are Codex, a coding agent. Be precise."},{"role":"user","content":"List the packages.\n\nSummary of the conversation so far: the user asked for the packages; there are two, proj and proj/store."},{"role":"user","content":"Which one has tests?"},{"role":"assistant","content":"Only proj/store has tests."}]`
	if got := messages(t, r, "openai"); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// An old rollout (bare meta line, bare items, state lines) maps like a
// current one; its instructions are the system prompt.
func TestLegacyRollout(t *testing.T) {
	const want = `[{"role":"system","content":"Always run the tests."},{"role":"user","content":"<user_instructions>\n\nAlways run the tests.\n\n</user_instructions>"},{"role":"user","content":"What does main.go print?"},{"role":"assistant","tool_calls":[{"id":"call_m1","type":"function","function":{"name":"shell","arguments":"{\"command\":[\"cat\",\"main.go\"]}"}}]},{"role":"tool","tool_call_id":"call_m1","content":"package main\n\nfunc main() { println(\"hi\") }\n"},{"role":"assistant","content":"It prints hi."}]`
	if got := messages(t, run(t, "legacy.jsonl"), "openai"); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

// A fork's file copies its parent's lines; the parent's session_meta among
// them adds no second system prompt, and turn_aborted ends the turn as
// aborted by the user.
func TestForkCopiesAndAbort(t *testing.T) {
	r := run(t, "fork.jsonl")
	types := typed(r)
	if count(types, "system/message") != 1 {
		t.Errorf("%d system messages, want 1", count(types, "system/message"))
	}
	var last string
	for _, e := range r.Session.Events().All() {
		if e.Type() == "turn/end" {
			last = string(e.Data())
		}
	}
	if !strings.Contains(last, `"kind":"aborted","cause":{"kind":"user"}`) {
		t.Errorf("last turn/end %s", last)
	}
}

// An assistant message followed directly by its tool result (no
// token_count between) is split over two Steps, one surface event each,
// and End hands out what is left.
func TestOneSurfaceEventPerStep(t *testing.T) {
	src := `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"ls","arguments":"{}","call_id":"c1"}}
{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a"}}
`
	r := foreigntest.Run(t, codex.New(), foreigntest.SplitLines([]byte(src)))
	if len(r.Refused) != 0 {
		t.Fatalf("refused %v", r.Refused)
	}
	const want = `[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"a"}]`
	if got := messages(t, r, "openai"); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

func findData(t *testing.T, r foreigntest.Result, typ, msgID string) []byte {
	t.Helper()
	for _, e := range r.Session.Events().All() {
		if e.Type() == typ && strings.Contains(string(e.Data()), `"id":"`+msgID+`"`) {
			return e.Data()
		}
	}
	t.Fatalf("no %s %s", typ, msgID)
	return nil
}

// The rollouts of claude-code-log's fixtures: a parent that spawns a
// subagent, the subagent's rollout naming its parent only inside source
// (as Codex versions before the top-level parent_thread_id do), and a
// session with custom_tool_call (an array output), an MCP call and an
// envelope type this mapper does not know (kept raw).
func TestClaudeCodeLogRollouts(t *testing.T) {
	const parent = "22222222-2222-4222-8222-222222222222"
	sub := run(t, "rollout-2026-01-03T04-05-10-33333333-3333-4333-8333-333333333333.jsonl").Identity
	if sub.ParentSessionID != parent || sub.AgentID != "33333333-3333-4333-8333-333333333333" {
		t.Errorf("subagent identity %+v", sub)
	}
	if id := run(t, "rollout-2026-01-03T04-05-06-"+parent+".jsonl").Identity; id.ParentSessionID != "" || id.SessionID != parent {
		t.Errorf("parent identity %+v", id)
	}
	r := run(t, "rollout-2026-01-02T03-04-05-11111111-1111-4111-8111-111111111111.jsonl")
	const want = `[{"role":"user","content":"List the synthetic files."},` +
		`{"role":"assistant","tool_calls":[{"id":"call-structured-001","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"find . -maxdepth 1 -type f\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call-structured-001","content":"./alpha.txt\n./beta.txt"},` +
		`{"role":"assistant","tool_calls":[{"id":"call-custom-001","type":"function","function":{"name":"apply_patch","arguments":"*** Begin Patch\n*** Add File: gamma.txt\n+synthetic\n*** End Patch"}}]},` +
		`{"role":"tool","tool_call_id":"call-custom-001","content":"Done!"},` +
		`{"role":"assistant","tool_calls":[{"id":"call-mcp-001","type":"function","function":{"name":"mcp__synthetic__lookup","arguments":"{\"query\":\"fixture\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call-mcp-001","content":"{\"status\":\"ok\"}"},` +
		`{"role":"assistant","content":"The synthetic files are alpha.txt and beta.txt."}]`
	if got := messages(t, r, "openai"); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	if strings.Contains(messages(t, r, "openai-responses"), "SYNTHETIC_ENCRYPTED_CONTENT") {
		t.Error("encrypted reasoning content reached a rendering")
	}
}

// A turn_context whose effort is only in its collaboration mode (later
// Codex versions) gives the header that effort; a top-level effort wins.
func TestEffortFromCollaborationMode(t *testing.T) {
	src := `{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}
{"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5.5","collaboration_mode":{"mode":"default","settings":{"model":"gpt-5.5","reasoning_effort":"high"}}}}
{"timestamp":"t","type":"turn_context","payload":{"model":"gpt-5.5","effort":"low","collaboration_mode":{"mode":"default","settings":{"reasoning_effort":"high"}}}}
`
	r := foreigntest.Run(t, codex.New(), foreigntest.SplitLines([]byte(src)))
	var efforts []string
	for _, e := range r.Session.Events().All() {
		if e.Type() == "request/header" {
			var d struct {
				Header struct {
					Config struct{ ReasoningEffort string }
				}
			}
			if err := json.Unmarshal(e.Data(), &d); err != nil {
				t.Fatal(err)
			}
			efforts = append(efforts, d.Header.Config.ReasoningEffort)
		}
	}
	if strings.Join(efforts, ",") != "high,low" {
		t.Errorf("header efforts %v, want high then low", efforts)
	}
}
