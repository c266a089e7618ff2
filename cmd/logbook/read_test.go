package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

func TestReadCommandsGolden(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"events", []string{"events", "s"}},
		{"events-range", []string{"events", "s", "--from", "3", "--to", "5"}},
		{"messages", []string{"messages", "s"}},
		{"messages-at-6", []string{"messages", "s", "--at", "6"}},
		{"transcript", []string{"transcript", "s"}},
		{"transcript.json", []string{"transcript", "s", "--json"}},
		{"surface", []string{"surface", "s"}},
		{"surface-at-8", []string{"surface", "s", "--at", "8"}},
		{"header", []string{"header", "s"}},
		{"header-at-2", []string{"header", "s", "--at", "2"}},
		{"request-at-6", []string{"request", "s", "--at", "6"}},
		{"messages-openai", []string{"messages", "s", "--format", "openai"}},
		{"messages-anthropic", []string{"messages", "s", "--format", "anthropic"}},
		{"messages-markdown", []string{"messages", "s", "--format", "markdown"}},
		{"messages-logbook-at-6", []string{"messages", "s", "--at", "6", "--format", "logbook"}},
		{"request-openai", []string{"request", "s", "--at", "10", "--format", "openai"}},
		{"request-openai-responses", []string{"request", "s", "--at", "10", "--format", "openai-responses"}},
		{"request-anthropic", []string{"request", "s", "--at", "10", "--format", "anthropic"}},
		{"why-10", []string{"why", "s", "10"}},
		{"why-10.json", []string{"why", "s", "10", "--json"}},
		{"inspect-closed", []string{"inspect", "s"}},
	} {
		r := ok(t, data, "", tc.args...)
		if r.stderr != "" {
			t.Errorf("%v: stderr %q, want nothing", tc.args, r.stderr)
		}
		golden(t, tc.golden, normalize(r.stdout, data))
	}
	// At seq 6 the step's call has no result yet: a provider format
	// refuses, naming the call; logbook's own shows the messages (above).
	r := fail(t, data, "", sdk.CodeToolCallsPending, "request", "s", "--at", "6", "--format", "openai")
	if !strings.Contains(r.lastLine(), "have no result yet") {
		t.Errorf("request --at 6 --format openai: %q", r.lastLine())
	}
}

// request without --at is the request right after the last event, as
// messages without --at is; a provider format with no request/header up
// to the asked seq is REQUEST_HEADER_MISSING naming the seq, while the
// logbook format shows the header as null and messages renders every
// format, for a created, empty session too.
func TestRequestIsNowAndNeedsAHeaderForAProvider(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s") // 11 events, the request/header at seq 3
	for _, f := range []string{"logbook", "openai", "anthropic"} {
		now := ok(t, data, "", "request", "s", "--format", f).stdout
		if last := ok(t, data, "", "request", "s", "--at", "10", "--format", f).stdout; now != last {
			t.Errorf("request --format %s without --at:\n%s\nwant the request at 10:\n%s", f, now, last)
		}
	}
	for _, f := range []string{"openai", "anthropic"} {
		r := fail(t, data, "", sdk.CodeRequestHeaderMissing, "request", "s", "--at", "2", "--format", f)
		if !strings.Contains(r.lastLine(), "no request/header event up to seq 2, and format "+f+" needs the model it sets") {
			t.Errorf("request --at 2 --format %s: %q", f, r.lastLine())
		}
		ok(t, data, "", "request", "s", "--at", "3", "--format", f)
	}
	if got := ok(t, data, "", "request", "s", "--at", "2").stdout; !strings.HasPrefix(got, `{"header":null,"context":null,"messages":[`) {
		t.Errorf("request --at 2 (logbook): %q", got)
	}

	ok(t, data, "", "create", "e")
	fail(t, data, "", sdk.CodeRequestHeaderMissing, "request", "e", "--format", "openai")
	if got := ok(t, data, "", "request", "e").stdout; got != "{\"header\":null,\"context\":null,\"messages\":[]}\n" {
		t.Errorf("request of an empty session: %q", got)
	}
	for _, f := range []string{"logbook", "openai", "anthropic", "markdown"} {
		ok(t, data, "", "messages", "e", "--format", f)
		ok(t, data, "", "messages", "s", "--at", "2", "--format", f)
	}
}

// An unknown --format is USAGE naming the formats the command takes.
func TestFormatNamesTheAllowed(t *testing.T) {
	data := t.TempDir()
	r := fail(t, data, "", sdk.CodeUsage, "messages", "s", "--format", "gemini")
	if !strings.Contains(r.lastLine(), `--format "gemini" is not one of logbook, openai, anthropic, openai-responses, markdown`) {
		t.Errorf("messages: %q", r.lastLine())
	}
	r = fail(t, data, "", sdk.CodeUsage, "request", "s", "--at", "1", "--format", "markdown")
	if !strings.Contains(r.lastLine(), `--format "markdown" is not one of logbook, openai, anthropic, openai-responses`) {
		t.Errorf("request: %q", r.lastLine())
	}
}

// TestReadCommandsAreReadOnly checks that no read command changes the
// stored log, not even of a crashed session a resume would repair.
func TestReadCommandsAreReadOnly(t *testing.T) {
	data := t.TempDir()
	crashed(t, data, "s")
	before := ok(t, data, "", "export", "s").stdout
	for _, args := range [][]string{{"events", "s"}, {"messages", "s"}, {"transcript", "s"}, {"surface", "s"},
		{"header", "s"}, {"request", "s", "--at", "6"}, {"why", "s", "6"}, {"inspect", "s"}, {"export", "s"}} {
		ok(t, data, "", args...)
	}
	if after := ok(t, data, "", "export", "s").stdout; after != before {
		t.Fatalf("the stored log changed:\n%s\nwas:\n%s", after, before)
	}
}

func TestInspectCrashedSession(t *testing.T) {
	data := t.TempDir()
	crashed(t, data, "s")
	golden(t, "inspect-crashed", normalize(ok(t, data, "", "inspect", "s").stdout, data))
	r := ok(t, data, "", "inspect", "s", "--json")
	golden(t, "inspect-crashed.json", normalize(r.stdout, data))
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep["openTurn"] != 1.0 || len(rep["pendingRepair"].([]any)) != 3 {
		t.Fatalf("inspect %s", r.stdout)
	}
	// A closed session: openTurn null, pendingRepair [].
	finished(t, data, "done")
	r = ok(t, data, "", "inspect", "done", "--json")
	if !strings.Contains(r.stdout, `"openTurn":null,"pendingRepair":[]`) {
		t.Fatalf("inspect %s", r.stdout)
	}
}

func TestAtViews(t *testing.T) {
	data := t.TempDir()
	finished(t, data, "s")
	// --at SEQ is the session right after SEQ: the request at 6 is the
	// messages at 6 with the folded header and context.
	var req struct {
		Header, Context json.RawMessage
		Messages        json.RawMessage
	}
	if err := json.Unmarshal([]byte(ok(t, data, "", "request", "s", "--at", "6").stdout), &req); err != nil {
		t.Fatal(err)
	}
	if got, want := string(req.Messages)+"\n", ok(t, data, "", "messages", "s", "--at", "6").stdout; got != want {
		t.Errorf("request messages %s, messages --at 6 %s", got, want)
	}
	if got, want := string(req.Header)+"\n", ok(t, data, "", "header", "s", "--at", "6").stdout; got != want {
		t.Errorf("request header %s, header --at 6 %s", got, want)
	}
	// The last seq is the whole log; one past it is INVALID_BOUNDARY.
	if a, b := ok(t, data, "", "messages", "s", "--at", "10").stdout, ok(t, data, "", "messages", "s").stdout; a != b {
		t.Errorf("messages --at 10 %s, messages %s", a, b)
	}
	for _, args := range [][]string{{"messages", "s", "--at", "11"}, {"surface", "s", "--at", "11"}, {"header", "s", "--at", "99"},
		{"request", "s", "--at", "11"}, {"why", "s", "11"}} {
		fail(t, data, "", sdk.CodeInvalidBoundary, args...)
	}
	// A fork child's prefix before its inherited marker restores too.
	ok(t, data, "", "fork", "s", "--as", "child", "--at", "5")
	if got, want := ok(t, data, "", "messages", "child", "--at", "3").stdout, ok(t, data, "", "messages", "s", "--at", "3").stdout; got != want {
		t.Errorf("child --at 3 %s, source --at 3 %s", got, want)
	}
}

// A provider rendering of a lenient log with a tool result no call asked
// for leaves the result out and says so on stderr, naming the seq, the
// call and the rule; logbook's own format shows it and warns of nothing.
func TestProviderRenderingWarnsOfWhatItLeftOut(t *testing.T) {
	data := t.TempDir()
	ok(t, data, "", "create", "o", "--protocol", "lenient")
	ok(t, data, `{"type":"request/header","data":{"header":{"config":{"provider":"openai","model":"gpt-4.1"}},"reason":"initial"}}
{"type":"user/message","surfaceOp":"append","data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"prompt"}}}
{"type":"tool/result","surfaceOp":"append","data":{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"zz","content":[{"type":"text","text":"out"}],"source":{"kind":"tool","callId":"zz"}}}}
`, "append", "o", "--continue")
	const warning = `logbook: warning: seq 2: tool result for call "zz" left out (TOOL_RESULT_UNMATCHED)` + "\n"
	for _, args := range [][]string{{"messages", "o", "--format", "openai"}, {"request", "o", "--format", "anthropic"}} {
		r := ok(t, data, "", args...)
		if r.stderr != warning || strings.Contains(r.stdout, "zz") {
			t.Errorf("%v: stderr %q, stdout %s; want the warning %q and no orphan", args, r.stderr, r.stdout, warning)
		}
	}
	if r := ok(t, data, "", "messages", "o"); r.stderr != "" || !strings.Contains(r.stdout, `"toolCallId":"zz"`) {
		t.Errorf("messages (logbook): stderr %q, stdout %s", r.stderr, r.stdout)
	}
}
