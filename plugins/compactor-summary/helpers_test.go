package compactorsummary

import (
	"os"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// logbookBin is the logbook binary the subprocess tests run, built once by
// TestMain.
var logbookBin string

func TestMain(m *testing.M) {
	for _, a := range os.Args[1:] {
		if strings.HasPrefix(a, "-test.fuzz") {
			os.Exit(m.Run())
		}
	}
	testbin.Main(m, &logbookBin)
}

// q is a JSON string.
func q(s string) string { return string(jsonv.AppendString(nil, s)) }

func text(s string) string      { return `{"type":"text","text":` + q(s) + `}` }
func reasoning(s string) string { return `{"type":"reasoning","text":` + q(s) + `}` }
func call(id, name, args string) string {
	return `{"type":"tool-call","id":` + q(id) + `,"name":` + q(name) + `,"arguments":` + q(args) + `}`
}

const image = `{"type":"image","mediaType":"image/png","data":"iVBORw0KGgo="}`

func blocks(bs []string) string { return "[" + strings.Join(bs, ",") + "]" }

func systemMsg(s string) []byte {
	return []byte(`{"id":"sys","role":"system","content":[` + text(s) + `],"source":{"kind":"system-prompt"}}`)
}

func userMsg(id string, bs ...string) []byte {
	return []byte(`{"id":` + q(id) + `,"role":"user","content":` + blocks(bs) + `,"source":{"kind":"user"}}`)
}

func developerMsg(id string, bs ...string) []byte {
	return []byte(`{"id":` + q(id) + `,"role":"developer","content":` + blocks(bs) + `,"source":{"kind":"harness"}}`)
}

func assistantMsg(id string, bs ...string) []byte {
	return []byte(`{"id":` + q(id) + `,"role":"assistant","content":` + blocks(bs) +
		`,"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}}`)
}

func toolMsg(callID string, isError bool, bs ...string) []byte {
	e := ""
	if isError {
		e = `,"isError":true`
	}
	return []byte(`{"id":"r-` + callID + `","role":"tool","content":` + blocks(bs) +
		`,"source":{"kind":"tool","callId":` + q(callID) + `},"toolCallId":` + q(callID) + e + `}`)
}

// checkpointMsg is a compaction checkpoint holding summary.
func checkpointMsg(id, summary string) []byte {
	t := "Checkpoint: earlier parts of this conversation were condensed into the summary below.\n\n<conversation-summary>\n" +
		summary + "\n</conversation-summary>"
	return []byte(`{"id":` + q(id) + `,"role":"user","content":[` + text(t) + `],"source":{"kind":"compact-checkpoint","compactionId":"c0"}}`)
}

// instruction has the headings of logbook's default instruction.
const instruction = `Summarize the conversation above with exactly these sections:

## Goals and constraints
## Decisions and key technical concepts
## Files and artifacts
## Errors and resolutions
## Open tasks
## Current work
## Next step
## Other context

Do not call any tools.`

// tools is a folded header's tools array.
const tools = `[{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},` +
	`{"name":"run","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}},"deferLoading":true}]`

// conversation is a region with every kind of message.
func conversation() [][]byte {
	return [][]byte{
		userMsg("u1", text("Fix the failing test in main_test.go.\nKeep the public API."), image),
		assistantMsg("a1", reasoning("The user wants a fix."), text("I'll read the test first."), call("call_1", "read", `{"path":"main_test.go"}`)),
		toolMsg("call_1", false, text("package main\n\nfunc TestX(t *testing.T) {}")),
		developerMsg("d1", `{"type":"tool-addition","toolName":"run"}`, text("The run tool is now available.")),
		assistantMsg("a2", call("call_2", "run", `{"cmd":"go test ./..."}`), call("call_3", "read", `{"path":"main.go"}`)),
		toolMsg("call_2", true, text("\n--- FAIL: TestX\nexit status 1")),
		toolMsg("call_3", false),
		assistantMsg("a3", reasoning("Found it."), text("The test failed because TestX had no assertions; I added one and it passes now.")),
	}
}

// request is a summarize request over conversation.
func request() sdk.SummarizeRequest {
	return sdk.SummarizeRequest{
		SessionID:    "s1",
		CompactionID: "c1",
		Provider:     "deepseek",
		Model:        "deepseek-chat",
		MaxTokens:    1234,
		System:       systemMsg("You are a coding agent."),
		Tools:        []byte(tools),
		Config:       []byte(`{"provider":"deepseek","model":"deepseek-chat"}`),
		Messages:     conversation(),
		Instruction:  instruction,
	}
}

// env is a fake environment.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// requireCode fails t unless err is an *sdk.Error with code whose text
// contains every value in want.
func requireCode(t testing.TB, err error, code sdk.Code, want ...string) *sdk.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %s", code)
	}
	e, ok := err.(*sdk.Error)
	if !ok || e.Code != code {
		t.Fatalf("error %v (%T); want code %s", err, err, code)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
	return e
}

// summaryText returns the text of a reply's single text block.
func summaryText(t testing.TB, r sdk.SummarizeReply) string {
	t.Helper()
	if len(r.Summary) != 1 {
		t.Fatalf("%d summary blocks; want 1", len(r.Summary))
	}
	doc, err := jsonv.Parse(r.Summary[0], jsonv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(doc.Root().Bytes()) != string(r.Summary[0]) || !doc.Root().Get("type").StrEqual("text") || doc.Root().Len() != 2 {
		t.Fatalf("summary block %s is not a canonical text block", r.Summary[0])
	}
	s, _ := doc.Root().Get("text").Str()
	return s
}
