package claudecode_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/claudecode"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

func run(t *testing.T, name string) foreigntest.Result {
	t.Helper()
	return foreigntest.Run(t, claudecode.New(), foreigntest.ReadLines(t, filepath.Join("testdata", name)))
}

// typed returns the session's events other than the raw records.
func typed(r foreigntest.Result) []session.Event {
	var out []session.Event
	for _, e := range r.Session.Events().All() {
		if e.Type() != events.TypeSourceLine {
			out = append(out, e)
		}
	}
	return out
}

func ofType(evs []session.Event, typ string) []session.Event {
	var out []session.Event
	for _, e := range evs {
		if e.Type() == typ {
			out = append(out, e)
		}
	}
	return out
}

func messages(t *testing.T, r foreigntest.Result, format string) string {
	t.Helper()
	b, err := r.Messages(format)
	if err != nil {
		t.Fatalf("render %s: %v", format, err)
	}
	return string(b)
}

// TestFixturesImportWithoutRefusal: every fixture maps without a refused
// input, renders for both providers, and reports damage exactly on the
// damaged fixtures.
func TestFixturesImportWithoutRefusal(t *testing.T) {
	wantDamage := map[string]map[int]string{
		"damaged-not-json.jsonl":     {2: "not JSON"},
		"damaged-torn.jsonl":         {3: "torn: the last line ends without a line feed and is not complete JSON"},
		"damaged-invalid-utf8.jsonl": {2: "invalid UTF-8"},
		"damaged-other-tool.jsonl":   {2: "not a Claude Code line"},
	}
	files, err := filepath.Glob("testdata/*.jsonl")
	if err != nil || len(files) < 10 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			r := run(t, name)
			if len(r.Refused) != 0 {
				t.Errorf("refused inputs: %v", r.Refused)
			}
			want := wantDamage[name]
			if want == nil {
				want = map[int]string{}
			}
			if strings.HasPrefix(name, "damaged-") && len(want) == 0 {
				t.Fatalf("damaged fixture %s has no expected damage", name)
			}
			if !maps.Equal(r.Damaged, want) {
				t.Errorf("damage %v, want %v", r.Damaged, want)
			}
			for _, format := range []string{"anthropic", "openai"} {
				if m := messages(t, r, format); !strings.HasPrefix(m, "[{") {
					t.Errorf("%s rendering %.200s", format, m)
				}
			}
		})
	}
}

// TestAssistantLinesMergePerMessage: lines sharing message.id (or, without
// one, requestId) become one assistant/message in a step of its own, with
// reasoning, text and tool calls in line order; an API error line types
// nothing.
func TestAssistantLinesMergePerMessage(t *testing.T) {
	r := run(t, "session.jsonl")
	evs := typed(r)
	msgs := ofType(evs, "assistant/message")
	if len(msgs) != 4 {
		t.Fatalf("%d assistant messages, want 4 (msg_01AAA, req_01BBB, msg_01CCC, msg_01DDD)", len(msgs))
	}
	var first struct {
		Turn, Step int
		Message    struct {
			ID      string
			Content []map[string]any
			Source  map[string]string
		}
		Usage map[string]int
	}
	if err := json.Unmarshal(msgs[0].Data(), &first); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, b := range first.Message.Content {
		kinds = append(kinds, b["type"].(string))
	}
	if first.Message.ID != "msg_01AAA" || strings.Join(kinds, ",") != "reasoning,text,tool-call,tool-call" {
		t.Errorf("first message %s blocks %v", first.Message.ID, kinds)
	}
	if first.Message.Content[0]["signature"] != "EqQBCkYIBxgCKkBsig==" {
		t.Errorf("reasoning signature %v", first.Message.Content[0]["signature"])
	}
	if first.Message.Source["provider"] != "anthropic" || first.Message.Source["model"] != "claude-sonnet-4-5-20250929" {
		t.Errorf("source %v", first.Message.Source)
	}
	if first.Usage["input"] != 12 || first.Usage["output"] != 30 || first.Usage["cacheRead"] != 2048 {
		t.Errorf("usage %v", first.Usage)
	}
	if !bytes.Contains(msgs[1].Data(), []byte(`"content":[{"type":"text","text":"Total sums float64 prices, so 3 × 3.33 rounds down."},{"type":"text","text":"Storing prices as integer cents fixes it."}]`)) {
		t.Errorf("lines without message.id not merged by requestId: %s", msgs[1].Data())
	}
	for _, m := range msgs {
		if bytes.Contains(m.Data(), []byte("API Error")) {
			t.Errorf("API error line typed: %s", m.Data())
		}
	}
	// Each assistant message opens a step of its own; tool/call follows it.
	if got := len(ofType(evs, "step/start")); got != 4 {
		t.Errorf("%d steps, want 4", got)
	}
	if got := len(ofType(evs, "tool/call")); got != 3 {
		t.Errorf("%d tool/call events, want 3", got)
	}
	// The model changes once: an initial header, then a change.
	var reasons []string
	for _, h := range ofType(evs, "request/header") {
		var d struct{ Reason string }
		_ = json.Unmarshal(h.Data(), &d)
		reasons = append(reasons, d.Reason)
	}
	if strings.Join(reasons, ",") != "initial,change" {
		t.Errorf("header reasons %v", reasons)
	}
	// The log-only lines (snapshot, queue operation, turn_duration, API
	// error, unknown type, summary) add only their raw records.
	if got, want := r.Session.Len(), sdk.Offset(len(foreigntest.ReadLines(t, "testdata/session.jsonl"))+len(evs)); got != want {
		t.Errorf("log length %d, want raw records + typed = %d", got, want)
	}
}

// TestToolResultsPairWithCalls: tool_result blocks become tool/results
// answering their calls (is_error as isError); renderings pair them.
func TestToolResultsPairWithCalls(t *testing.T) {
	r := run(t, "session.jsonl")
	results := ofType(typed(r), "tool/result")
	if len(results) != 3 {
		t.Fatalf("%d tool results, want 3", len(results))
	}
	if !bytes.Contains(results[0].Data(), []byte(`"toolCallId":"toolu_01Bash","isError":true`)) {
		t.Errorf("error result %s", results[0].Data())
	}
	if bytes.Contains(results[1].Data(), []byte(`isError`)) {
		t.Errorf("successful result marked as error: %s", results[1].Data())
	}
	oa := messages(t, r, "openai")
	for _, want := range []string{
		`{"role":"tool","tool_call_id":"toolu_01Bash","content":"[tool error] --- FAIL: TestTotal`,
		`{"role":"tool","tool_call_id":"toolu_01Read","content":"package cart`,
		`{"role":"user","content":"[Request interrupted by user for tool use]"}`,
	} {
		if !strings.Contains(oa, want) {
			t.Errorf("openai rendering lacks %s\n%s", want, oa)
		}
	}
	an := messages(t, r, "anthropic")
	if !strings.Contains(an, `"tool_use_id":"toolu_01Edit"`) || !strings.Contains(an, `"type":"image"`) {
		t.Errorf("anthropic rendering lacks the Edit result or the image:\n%s", an)
	}
	// The interrupted turn ends aborted by the user.
	var aborted int
	for _, e := range ofType(typed(r), "turn/end") {
		if bytes.Contains(e.Data(), []byte(`"kind":"aborted"`)) {
			aborted++
		}
	}
	if aborted != 1 {
		t.Errorf("%d aborted turns, want 1", aborted)
	}
}

// TestCompactBoundaryReplacesThePath: each compact_boundary and its
// isCompactSummary message become a compaction bracket whose checkpoint
// replaces every node before it.
func TestCompactBoundaryReplacesThePath(t *testing.T) {
	r := run(t, "compact.jsonl")
	evs := typed(r)
	if got := len(ofType(evs, "compaction/summary")); got != 2 {
		t.Fatalf("%d compaction summaries, want 2", got)
	}
	summary := ofType(evs, "compaction/summary")[0]
	if !bytes.Contains(summary.Data(), []byte(`"shadowedTokenCount":18234`)) || !bytes.Contains(summary.Data(), []byte(`"compactionId":"c-b1"`)) {
		t.Errorf("summary %s", summary.Data())
	}
	var checkpoints []session.Event
	for _, e := range ofType(evs, "user/message") {
		if op, ok := e.SurfaceOp(); ok && op.Replace {
			checkpoints = append(checkpoints, e)
		}
	}
	if len(checkpoints) != 2 {
		t.Fatalf("%d replacing user messages, want 2", len(checkpoints))
	}
	for _, c := range checkpoints {
		if !bytes.Contains(c.Data(), []byte(`"source":{"kind":"compact-checkpoint","compactionId":"c-b`)) {
			t.Errorf("checkpoint %s", c.Data())
		}
	}
	want := `[{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. Summary: worker scaled to 3 replicas in deploy/worker.yaml; next, verify."},{"role":"assistant","content":"The worker now runs 3 replicas."}]`
	if got := messages(t, r, "openai"); got != want {
		t.Errorf("openai messages\n got %s\nwant %s", got, want)
	}
}

// TestRewindForksABranch: a prompt continuing an earlier node asks for
// branch-<n>; the child gets the abandoned path whole (its last assistant
// message included), and main's prompt replaces the nodes after the
// branch point.
func TestRewindForksABranch(t *testing.T) {
	r := run(t, "rewind.jsonl")
	if !slices.Equal(r.Branches, []string{"branch-1", "branch-2"}) {
		t.Fatalf("branches %v", r.Branches)
	}
	want := `[{"role":"user","content":"Name three sorting algorithms."},{"role":"assistant","content":"Quicksort, mergesort, heapsort."},{"role":"user","content":"Which uses the least memory?"},{"role":"assistant","content":"Heapsort: O(1) extra."}]`
	if got := messages(t, r, "openai"); got != want {
		t.Errorf("main openai messages\n got %s\nwant %s", got, want)
	}
	// The child of branch-2 holds the abandoned path up to its last
	// assistant message, which the rewinding prompt completed.
	child := r.Session.Events().Range(0, sdk.Offset(r.BranchLens[1])).Slice()
	var sawLast bool
	for _, e := range child {
		if e.Type() == "assistant/message" && bytes.Contains(e.Data(), []byte("Quicksort wins here.")) {
			sawLast = true
		}
	}
	if !sawLast {
		t.Error("branch-2's child lacks the abandoned path's last assistant message")
	}
	// Each rewinding prompt replaces the nodes after its parent (r-a1).
	var replaced [][]sdk.Seq
	for _, e := range ofType(typed(r), "user/message") {
		if op, ok := e.SurfaceOp(); ok && op.Replace {
			replaced = append(replaced, e.SourceEventSeqs())
		}
	}
	if len(replaced) != 2 || len(replaced[0]) != 2 || len(replaced[1]) != 4 {
		t.Errorf("replaced nodes %v, want 2 (u2, a2) then 4 (u3, a3, result, a4)", replaced)
	}
}

// TestSubagentFiles: a subagent file identifies its parent and agent and is
// typed; sidechain lines inside a main file stay raw.
func TestSubagentFiles(t *testing.T) {
	r := run(t, "agent-a7e3f91.jsonl")
	id := r.Identity
	if id.ParentSessionID != "7f3c2a10-5b6e-4d21-9c8a-0e1f2a3b4c5d" || id.AgentID != "a7e3f91" || id.Tool != "claude-code" || id.CWD != "/home/dev/shop" {
		t.Errorf("identity %+v", id)
	}
	if got := len(ofType(typed(r), "assistant/message")); got != 2 {
		t.Errorf("subagent file typed %d assistant messages, want 2", got)
	}
	old := run(t, "agent-test-hash-123.jsonl")
	if old.Identity.ParentSessionID != "5c0375b4-57a5-4f26-b12d-d022ee4e51b7" || old.Identity.AgentID != "" {
		t.Errorf("old agent file identity %+v", old.Identity)
	}
	main := run(t, "sidechain.jsonl")
	if main.Identity.ParentSessionID != "" {
		t.Errorf("main file identified as a subagent: %+v", main.Identity)
	}
	// The main chain has one prompt; the Task subagent's prompt and answer
	// are sidechain lines between the call and its result.
	for _, e := range ofType(typed(main), "user/message") {
		if bytes.Contains(e.Data(), []byte("Examine the package.json file(s)")) {
			t.Errorf("a sidechain prompt inside the main file was typed: %.120s", e.Data())
		}
	}
	if got := len(ofType(typed(main), "user/message")); got != 1 {
		t.Errorf("%d user messages in the main file, want 1", got)
	}
	if got := len(ofType(typed(main), "tool/result")); got != 1 {
		t.Errorf("%d tool results in the main file, want 1", got)
	}
	// Three main-chain assistant lines merge into two messages; the
	// sidechain's answer is not one of them.
	if got := len(ofType(typed(main), "assistant/message")); got != 2 {
		t.Errorf("%d assistant messages in the main file, want 2", got)
	}
}

// TestClaims: Claude Code lines are claimed, other tools' lines are not.
func TestClaims(t *testing.T) {
	d := claudecode.New()
	for _, l := range foreigntest.ReadLines(t, "testdata/session.jsonl") {
		if !d.Claims(l.Text) {
			t.Errorf("line %d not claimed: %.80s", l.N, l.Text)
		}
	}
	for _, s := range []string{
		`{"timestamp":"2026-12-03T07:00:00.500Z","type":"session_meta","payload":{"id":"x"}}`,
		`{"type":"session","version":3,"id":"p1","timestamp":"2026-12-03T07:00:00.500Z","cwd":"/x"}`,
		`{"type":"message","id":"e1","parentId":null,"message":{"role":"user","content":"hi"}}`,
		`[1,2]`, `not json`, ``,
	} {
		if d.Claims([]byte(s)) {
			t.Errorf("claimed %s", s)
		}
	}
}

// TestRefusedStepStopsReplacing: after a refused Step the mapper no longer
// trusts its view of the surface, so a rewind forks but appends its prompt.
func TestRefusedStepStopsReplacing(t *testing.T) {
	lines := foreigntest.ReadLines(t, "testdata/rewind.jsonl")
	d := claudecode.New()
	id, err := d.Identify(lines)
	if err != nil {
		t.Fatal(err)
	}
	m := d.NewMapper(id)
	seq := sdk.Seq(0)
	var last foreign.Step
	for i, l := range lines[:6] {
		last = m.Line(l, seq)
		seq += 1 + sdk.Seq(len(last.Inputs))
		m.Accepted(i != 2)
	}
	if last.Branch != "branch-1" {
		t.Fatalf("line 6 step %+v, want branch-1", last)
	}
	for _, in := range last.Inputs {
		if in.SurfaceOp != nil && in.SurfaceOp.Replace {
			t.Errorf("replace after a refused step: %s", in.Data)
		}
	}
}

// TestMappingIsPure: the same lines give the same inputs.
func TestMappingIsPure(t *testing.T) {
	lines := foreigntest.ReadLines(t, "testdata/rewind.jsonl")
	feed := func() []events.Input {
		d := claudecode.New()
		id, _ := d.Identify(lines)
		m := d.NewMapper(id)
		var out []events.Input
		seq := sdk.Seq(0)
		for _, l := range lines {
			st := m.Line(l, seq)
			m.Accepted(true)
			out = append(out, st.Inputs...)
			seq += 1 + sdk.Seq(len(st.Inputs))
		}
		return append(out, m.End(seq).Inputs...)
	}
	a, b := feed(), feed()
	if len(a) != len(b) {
		t.Fatalf("%d inputs, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Type != b[i].Type || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("input %d differs: %s / %s", i, a[i].Data, b[i].Data)
		}
	}
}

// FuzzMapper: any file content maps without panicking, and every input the
// mapper returns passes the payload and surface rules.
func FuzzMapper(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 20000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lines := foreigntest.SplitLines(b)
		d := claudecode.New()
		for _, l := range lines {
			d.Claims(l.Text)
		}
		if _, err := d.Identify(lines); err != nil {
			return
		}
		r := foreigntest.Run(t, d, lines)
		if len(r.Refused) != 0 {
			t.Fatalf("refused: %v", r.Refused)
		}
	})
}

// TestCompactAfterRewind: claude-code-log's fixtures of a rewind followed
// by an automatic compaction. The rewind forks the abandoned attempt; the
// checkpoint then replaces the path the file went on with (not the
// abandoned attempt, already off the surface); the partial compaction's
// preserved tail, rewritten after the summary, is typed after the
// checkpoint.
func TestCompactAfterRewind(t *testing.T) {
	const summary = `{"role":"user","content":"This session is being continued from a previous conversation that ran out of context. Summary: the user asked for a plan."}`
	for name, want := range map[string]string{
		"dag_compact_after_rewind.jsonl":           `[` + summary + `,{"role":"user","content":"After compaction"},{"role":"assistant","content":"Final answer"}]`,
		"dag_compact_after_rewind_preserved.jsonl": `[` + summary + `,{"role":"assistant","content":"Kept going"},{"role":"user","content":"After compaction"},{"role":"assistant","content":"Final answer"}]`,
	} {
		r := run(t, name)
		if !slices.Equal(r.Branches, []string{"branch-1"}) {
			t.Errorf("%s: branches %v", name, r.Branches)
		}
		if got := messages(t, r, "openai"); got != want {
			t.Errorf("%s: messages\n got %s\nwant %s", name, got, want)
		}
		sums := ofType(typed(r), "compaction/summary")
		if len(sums) != 1 || bytes.Contains(sums[0].Data(), []byte(`"First attempt"`)) {
			t.Fatalf("%s: compaction summaries %v", name, sums)
		}
		var d struct{ ShadowedSeqs []sdk.Seq }
		if err := json.Unmarshal(sums[0].Data(), &d); err != nil {
			t.Fatal(err)
		}
		for _, seq := range d.ShadowedSeqs {
			if e := r.Session.Events().At(int(seq)); bytes.Contains(e.Data(), []byte("First ")) {
				t.Errorf("%s: the checkpoint shadows seq %d, of the abandoned attempt", name, seq)
			}
		}
	}
}

// TestSubagentFileOfClaudeCode2: claude-code-log's subagents/agent-<id>
// file (Claude Code 2.1, lines with agentId, a string prompt) is the
// child of its session and types its prompt and answer.
func TestSubagentFileOfClaudeCode2(t *testing.T) {
	r := run(t, "agent-showcol1.jsonl")
	want := foreign.Identity{Tool: "claude-code", SessionID: "showcol1", Version: "2.1.173", CWD: "/workspace/example-app",
		ParentSessionID: "55550000-0000-4000-8000-000000000001", AgentID: "showcol1"}
	if r.Identity != want {
		t.Errorf("identity %+v, want %+v", r.Identity, want)
	}
	if got := messages(t, r, "anthropic"); !strings.HasPrefix(got, `[{"role":"user","content":[{"type":"text","text":"Survey src/web`) || !strings.Contains(got, "column layout") {
		t.Errorf("messages %s", got)
	}
}

// TestEndLeavesARunningTurnOpen: End at a point where the turn is still
// running (its prompt, call or tool result awaits the model, as when the
// mirror reads a live session) closes nothing, so the lines appended later continue the
// same turn; End after the model's answer closes it.
func TestEndLeavesARunningTurnOpen(t *testing.T) {
	file := `{"parentUuid":null,"type":"user","message":{"role":"user","content":"Why does make test fail?"},"uuid":"u1","sessionId":"7f3c"}
{"parentUuid":"u1","type":"assistant","message":{"id":"msg_A","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]},"uuid":"a1"}
{"parentUuid":"a1","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"FAIL"}]},"uuid":"u2"}
{"parentUuid":"u2","type":"assistant","message":{"id":"msg_B","model":"m","content":[{"type":"text","text":"A fixture is missing."}]},"uuid":"a2"}
`
	lines := foreigntest.SplitLines([]byte(file))
	d := claudecode.New()
	id, _ := d.Identify(lines)
	m := d.NewMapper(id)
	seq := sdk.Seq(0)
	var types []string
	feed := func(st foreign.Step) []string {
		var got []string
		for _, in := range st.Inputs {
			got = append(got, in.Type)
		}
		seq += sdk.Seq(len(st.Inputs))
		m.Accepted(true)
		types = append(types, got...)
		return got
	}
	feed(m.Line(lines[0], seq))
	seq++
	if got := feed(m.End(seq)); len(got) != 0 {
		t.Errorf("End with the prompt awaiting the model: %v, want nothing", got)
	}
	feed(m.Line(lines[1], seq))
	seq++
	if got := feed(m.End(seq)); !slices.Equal(got, []string{"request/header", "request/context", "step/start", "assistant/message", "tool/call"}) {
		t.Errorf("End with a call running: %v, want the message and no ends", got)
	}
	feed(m.Line(lines[2], seq))
	seq++
	if got := feed(m.End(seq)); len(got) != 0 {
		t.Errorf("End with a result awaiting the model: %v, want nothing", got)
	}
	feed(m.Line(lines[3], seq))
	seq++
	if got := feed(m.End(seq)); !slices.Equal(got, []string{"step/end", "step/start", "assistant/message", "step/end", "turn/end"}) {
		t.Errorf("End after the answer: %v", got)
	}
	if n := len(slices.DeleteFunc(types, func(s string) bool { return s != "turn/start" })); n != 1 {
		t.Errorf("%d turns, want 1: the lines after each End continue the turn", n)
	}
}
