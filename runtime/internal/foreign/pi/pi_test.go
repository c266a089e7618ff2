package pi_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/foreigntest"
	"github.com/seed-e5e476df/logbook/runtime/internal/foreign/pi"
	"github.com/seed-e5e476df/logbook/sdk"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current mapping")

// fixtures returns the well-formed fixtures (not damaged-*).
func fixtures(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob("testdata/*.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if !strings.HasPrefix(filepath.Base(f), "damaged-") {
			out = append(out, f)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d fixtures, want at least 5", len(out))
	}
	return out
}

func run(t *testing.T, path string) foreigntest.Result {
	t.Helper()
	return foreigntest.Run(t, pi.New(), foreigntest.ReadLines(t, path))
}

// typed returns the session's events of type typ.
func typed(r foreigntest.Result, typ string) []events.Event {
	var out []events.Event
	for _, e := range r.Session.Events().All() {
		if e.Type() == typ {
			out = append(out, e.Shared())
		}
	}
	return out
}

// TestFixturesImportWithoutRefusals: every well-formed fixture maps to
// inputs the session accepts, without damage, and its messages render for
// both providers exactly as the golden files say.
func TestFixturesImportWithoutRefusals(t *testing.T) {
	for _, f := range fixtures(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := run(t, f)
			if len(r.Damaged) != 0 || len(r.Refused) != 0 {
				t.Fatalf("damaged %v, refused %v", r.Damaged, r.Refused)
			}
			for _, format := range []string{"openai", "anthropic"} {
				got, err := r.Messages(format)
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, got, "", " "); err != nil {
					t.Fatal(err)
				}
				pretty.WriteByte('\n')
				golden := filepath.Join("testdata", "golden", strings.TrimSuffix(filepath.Base(f), ".jsonl")+"."+format+".json")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, pretty.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(pretty.Bytes(), want) {
					t.Errorf("%s messages differ from %s:\n%s", format, golden, pretty.Bytes())
				}
			}
		})
	}
}

// TestDamageReportedPerLine: each damaged fixture reports exactly its bad
// line, with the reason, and the rest imports.
func TestDamageReportedPerLine(t *testing.T) {
	for name, want := range map[string]map[int]string{
		"damaged-not-json.jsonl":   {5: "not JSON"},
		"damaged-torn.jsonl":       {6: "torn: the last line is incomplete JSON without a line feed"},
		"damaged-utf8.jsonl":       {4: "invalid UTF-8"},
		"damaged-other-tool.jsonl": {1: `not a pi session line: type "user"`, 5: `not a pi session line: type "response_item"`},
	} {
		t.Run(name, func(t *testing.T) {
			r := run(t, filepath.Join("testdata", name))
			if len(r.Refused) != 0 {
				t.Errorf("refused %v", r.Refused)
			}
			if len(r.Damaged) != len(want) {
				t.Errorf("damaged %v, want %v", r.Damaged, want)
			}
			for n, reason := range want {
				if r.Damaged[n] != reason {
					t.Errorf("line %d: damage %q, want %q", n, r.Damaged[n], reason)
				}
			}
			if len(typed(r, events.TypeUserMessage)) < 2 {
				t.Errorf("the intact lines around the damage did not import")
			}
		})
	}
}

// TestIdentify reads the header of each version, after another tool's line.
func TestIdentify(t *testing.T) {
	for file, want := range map[string]foreign.Identity{
		"basic-v3.jsonl":           {Tool: "pi", SessionID: "019ae001-0000-7000-8000-000000000001", Version: "3", CWD: "/home/dev/project"},
		"tree-v2.jsonl":            {Tool: "pi", SessionID: "v2-session-0002", Version: "2", CWD: "/home/dev/mid"},
		"linear-v1.jsonl":          {Tool: "pi", SessionID: "v1-session-0001", Version: "1", CWD: "/home/dev/old"},
		"damaged-other-tool.jsonl": {Tool: "pi", SessionID: "019ae001-0000-7000-8000-000000000002", Version: "3", CWD: "/home/dev/project"},
	} {
		got, err := pi.New().Identify(foreigntest.ReadLines(t, filepath.Join("testdata", file)))
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", file, got, err, want)
		}
	}
	if _, err := pi.New().Identify(foreigntest.SplitLines([]byte(`{"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"x"}}` + "\n"))); err == nil {
		t.Error("a file without a header identified")
	}
}

// TestClaims: pi lines are claimed, other tools' lines are not.
func TestClaims(t *testing.T) {
	d := pi.New()
	for _, l := range foreigntest.ReadLines(t, "testdata/basic-v3.jsonl") {
		if !d.Claims(l.Text) {
			t.Errorf("line %d not claimed", l.N)
		}
	}
	for _, l := range []string{
		`{"parentUuid":null,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s"}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`,
		`{"type":"message","role":"user","content":[]}`,
		`[1,2]`, `not json`,
	} {
		if d.Claims([]byte(l)) {
			t.Errorf("claimed %s", l)
		}
	}
}

// TestTreeSwitchesBranchAndMoveTheSurface: each switch asks for a branch,
// and the switching entry replaces the abandoned entries' nodes.
func TestTreeSwitchesBranchAndMoveTheSurface(t *testing.T) {
	r := run(t, "testdata/branches-v3.jsonl")
	if got := strings.Join(r.Branches, ","); got != "branch-1,branch-2" {
		t.Fatalf("branches %q", got)
	}
	b, _ := r.Messages("openai")
	for _, gone := range []string{"Its worst case?", "naive pivot", "Show it in Go."} {
		if bytes.Contains(b, []byte(gone)) {
			t.Errorf("abandoned %q still on the surface: %s", gone, b)
		}
	}
	ck := typed(r, "compaction/summary")
	if len(ck) != 1 || !bytes.Contains(ck[0].Data, []byte("a stub was shown")) {
		t.Errorf("branch summary checkpoint: %v", ck)
	}
	r2 := run(t, "testdata/tree-v2.jsonl")
	if len(r2.Branches) != 1 {
		t.Errorf("v2 branches %v", r2.Branches)
	}
}

// TestCompactionReplacesTheSummarizedRange: a compaction's checkpoint
// replaces the nodes before its first kept entry; the kept ones stay.
func TestCompactionReplacesTheSummarizedRange(t *testing.T) {
	for file, kept := range map[string]string{
		"compaction-v3.jsonl": "Run it.",
		"linear-v1.jsonl":     "And the README?",
		"tree-v2.jsonl":       "Actually, which half is riskier?",
	} {
		r := run(t, filepath.Join("testdata", file))
		var cps []events.Event
		for _, e := range typed(r, events.TypeUserMessage) {
			if bytes.Contains(e.Data, []byte(`"compact-checkpoint"`)) {
				cps = append(cps, e)
			}
		}
		if len(cps) == 0 || cps[0].SurfaceOp == nil || !cps[0].SurfaceOp.Replace {
			t.Errorf("%s: no replacing checkpoint: %v", file, cps)
			continue
		}
		b, _ := r.Messages("openai")
		if !bytes.Contains(b, []byte(kept)) {
			t.Errorf("%s: kept message %q missing: %s", file, kept, b)
		}
	}
	r := run(t, "testdata/linear-v1.jsonl")
	b, _ := r.Messages("openai")
	if bytes.Contains(b, []byte("List the files.")) {
		t.Errorf("v1: summarized prompt still on the surface: %s", b)
	}
}

// TestContextEditRewritesToolResult: a context edit of a tool result is a
// content-only rewrite of it; an omission stays untyped.
func TestContextEditRewritesToolResult(t *testing.T) {
	r := run(t, "testdata/compaction-v3.jsonl")
	var rewrites []events.Event
	for _, e := range typed(r, events.TypeToolResult) {
		if e.SurfaceOp != nil && e.SurfaceOp.Replace {
			rewrites = append(rewrites, e)
		}
	}
	if len(rewrites) != 1 || !bytes.Contains(rewrites[0].Data, []byte("[vendor listing removed]")) {
		t.Fatalf("rewrites %v", rewrites)
	}
}

// TestModelChangesWriteHeaders: model, thinking and tool changes write
// request headers, the first "initial", the others "change".
func TestModelChangesWriteHeaders(t *testing.T) {
	r := run(t, "testdata/basic-v3.jsonl")
	hs := typed(r, events.TypeRequestHeader)
	var got []string
	for _, h := range hs {
		var d struct {
			Header struct {
				Config struct{ Provider, Model, ReasoningEffort string }
				Tools  []struct{ Name string }
			}
			Reason string
		}
		if err := json.Unmarshal(h.Data, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimSpace(d.Reason+" "+d.Header.Config.Provider+"/"+d.Header.Config.Model+" "+d.Header.Config.ReasoningEffort+" "+strings.Repeat("t", len(d.Header.Tools))))
	}
	want := []string{
		"initial anthropic/claude-sonnet-4-5",
		"change anthropic/claude-sonnet-4-5 medium",
		"change anthropic/claude-sonnet-4-5 medium tt",
		"change openai/gpt-5 medium tt",
		"change openai/gpt-5 high tt",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("headers\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(typed(r, events.TypeRequestContext)); n != 2 {
		t.Errorf("%d request/context events, want 2 (one per model)", n)
	}
	if n := len(typed(r, events.TypeSystemMessage)); n != 2 {
		t.Errorf("%d system messages, want 2", n)
	}
	if n := len(typed(r, events.TypeAssistantAttempt)); n != 1 {
		t.Errorf("%d attempts, want 1 (the aborted reply)", n)
	}
}

// TestRefusedStepLeavesStateUnchanged: when the store refuses a Step, the
// mapper's surface does not move, so the next replace names real nodes.
func TestRefusedStepLeavesStateUnchanged(t *testing.T) {
	lines := foreigntest.ReadLines(t, "testdata/branches-v3.jsonl")
	// Line 7 switches; its prompt replaces the nodes of line 5 only.
	m2 := pi.New().NewMapper(foreign.Identity{})
	seq := sdk.Seq(0)
	for i, l := range lines[:7] {
		st := m2.Line(l, seq)
		if i == 6 {
			for _, in := range st.Inputs {
				if in.SurfaceOp != nil && in.SurfaceOp.Replace {
					if len(in.SourceEventSeqs) != 1 {
						t.Errorf("replace after a refused step shadows %v, want only the prompt of line 5", in.SourceEventSeqs)
					}
					return
				}
			}
			t.Fatalf("line 7 did not replace: %+v", st)
		}
		seq++       // the raw record
		if i != 5 { // the store refuses line 6 (the answer abandoned later)
			seq += sdk.Seq(len(st.Inputs))
		}
		m2.Accepted(i != 5)
	}
}

// TestLongCallIDsPair: a tool call id longer than logbook's call ids may
// be is hashed the same way in the call and in its result, so the session
// takes both and they pair; an id that fits is kept.
func TestLongCallIDsPair(t *testing.T) {
	long := strings.Repeat("c", sdk.MaxCallIDBytes+12)
	src := `{"type":"session","version":3,"id":"p1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}
{"type":"message","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}
{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"LONG","name":"bash","arguments":{"c":1}},{"type":"toolCall","id":"short","name":"bash","arguments":{}}],"provider":"anthropic","model":"m","stopReason":"toolUse","timestamp":2}}
{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"LONG","toolName":"bash","content":[{"type":"text","text":"one"}],"isError":false,"timestamp":3}}
{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"toolResult","toolCallId":"short","toolName":"bash","content":[{"type":"text","text":"two"}],"isError":false,"timestamp":4}}
{"type":"message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"provider":"anthropic","model":"m","stopReason":"stop","timestamp":5}}
`
	r := foreigntest.Run(t, pi.New(), foreigntest.SplitLines([]byte(strings.ReplaceAll(src, "LONG", long))))
	if len(r.Refused) != 0 {
		t.Fatalf("refused: %v", r.Refused)
	}
	got, err := r.Messages("openai")
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"call-h`
	if !bytes.HasPrefix(got, []byte(want)) || bytes.Contains(got, []byte(long)) ||
		!bytes.Contains(got, []byte(`"tool_call_id":"short","content":"two"`)) || bytes.Count(got, []byte(`"tool_call_id":"call-h`)) != 1 {
		t.Errorf("messages %s", got)
	}
}

// TestBranchChildEndsTheAbandonedTurn: a tree switch that leaves a turn
// open (tree-v2's prompt "Go." had no answer) ends that turn before the
// fork, so the branch child holds it closed, and main too.
func TestBranchChildEndsTheAbandonedTurn(t *testing.T) {
	r := run(t, "testdata/tree-v2.jsonl")
	if len(r.BranchLens) != 1 {
		t.Fatalf("branches %v", r.Branches)
	}
	child := r.Session.Events().Range(0, sdk.Offset(r.BranchLens[0])).Slice()
	last := child[len(child)-1]
	if last.Type() != events.TypeTurnEnd || !bytes.Contains(last.Data(), []byte(`"turn":3`)) {
		t.Errorf("the child ends with %s %s, want turn 3's turn/end", last.Type(), last.Data())
	}
}
