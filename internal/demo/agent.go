package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
)

// The demo's model and its request header: two tools, logged as a
// request/header event in the first step of the log (docs/format.md).
const (
	// contextWindow is what request/context reports for the mock model.
	contextWindow = 32000
	// pathParameters is the JSON Schema of both tools' arguments.
	pathParameters = `{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}`
)

var (
	model  = events.Model{Provider: "mock", Name: "mock-coder-1"}
	header = events.Header{
		Config: events.Config{Provider: model.Provider, Model: model.Name},
		Tools: []events.ToolSchema{
			{Name: "list_dir", Description: "List the entries of a directory of the workspace.", Parameters: json.RawMessage(pathParameters)},
			{Name: "read_file", Description: "Read a file of the workspace.", Parameters: json.RawMessage(pathParameters)},
		},
	}
)

// call is one tool call the mock model asks for.
type call struct{ tool, path string }

// reply is one step's answer of the mock model: tool calls, or a final text.
type reply struct {
	calls []call
	text  string
}

// script is the deterministic mock model: for each user request, the
// replies of its steps in order.
var script = map[string][]reply{
	"What does this project do?": {
		{calls: []call{{"list_dir", "."}}},
		{calls: []call{{"read_file", "README.md"}}},
		{text: "It is a tiny word-count tool: main.go counts the words of its input, and the README explains how to build and run it."},
	},
	"Check main.go for bugs.": {
		{calls: []call{{"read_file", "main.go"}}},
		// The runtime crashes while this tool call runs.
	},
	"Please continue: is main.go correct?": {
		{calls: []call{{"read_file", "main.go"}}},
		{text: "main.go is correct for ASCII input; for other text, count with strings.Fields over the decoded input, which it already does."},
	},
}

// workspace is the demo's own directory of files the tools read.
type workspace struct{ root string }

// files of the demo workspace.
var workspaceFiles = map[string]string{
	"README.md": "# wc\n\nA tiny word counter, written to show a coding agent at work.\n\n" +
		"## Build\n\n    go build -o wc .\n\n## Run\n\n    echo 'one two three' | ./wc\n    3\n\n" +
		"## Notes\n\nThe counter splits on Unicode white space, so tabs and newlines separate words too. " +
		"It reads the whole input into memory, which is fine for files of a few megabytes. " +
		strings.Repeat("Input is read from standard input only; there are no flags and no configuration. ", 12),
	"main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"io\"\n\t\"os\"\n\t\"strings\"\n)\n\n" +
		"func main() {\n\tb, err := io.ReadAll(os.Stdin)\n\tif err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n" +
		"\tfmt.Println(len(strings.Fields(string(b))))\n}\n",
	"go.mod":           "module example.com/wc\n\ngo 1.26\n",
	"testdata/one.txt": "one two three\n",
}

// newWorkspace writes the demo files under root.
func newWorkspace(root string) (*workspace, error) {
	for name, body := range workspaceFiles {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	return &workspace{root: root}, nil
}

// run executes a tool for real over the workspace. A failing tool is a
// tool error (isError), not a demo failure.
func (w *workspace) run(c call) (text string, isError bool) {
	p := filepath.Join(w.root, filepath.FromSlash(c.path))
	if rel, err := filepath.Rel(w.root, p); err != nil || strings.HasPrefix(rel, "..") {
		return "path " + c.path + " is outside the workspace", true
	}
	switch c.tool {
	case "read_file":
		b, err := os.ReadFile(p)
		if err != nil {
			return err.Error(), true
		}
		return string(b), false
	case "list_dir":
		entries, err := os.ReadDir(p)
		if err != nil {
			return err.Error(), true
		}
		var names []string
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			names = append(names, n)
		}
		sort.Strings(names)
		return strings.Join(names, "\n"), false
	}
	return "unknown tool " + c.tool, true
}

// agent drives one session through turns of the mock model, appending
// every event an agent loop would log.
type agent struct {
	s       *service.Session
	ws      *workspace
	turn    int
	headers int // request/header events this agent appended
	calls   int
}

// append appends ins to the agent's session, in order, stopping at the
// first rejected one.
func (a *agent) append(ctx context.Context, ins ...events.Input) error {
	_, err := a.s.Append(ctx, service.AppendRequest{Inputs: ins})
	return err
}

// begin starts a turn: turn/start, the system prompt in the first turn of
// the log, and the user's request.
func (a *agent) begin(ctx context.Context, request string) error {
	a.turn++
	if err := a.append(ctx, events.TurnStart(a.turn)); err != nil {
		return err
	}
	if a.s.Len() == 1 {
		sys := events.System(a.turn, 0, events.TextMessage{ID: "sys", Text: "You are a careful coding agent. Use the tools to look at the workspace before answering."})
		if err := a.append(ctx, sys); err != nil {
			return err
		}
	}
	err := a.append(ctx, events.UserText(events.TextMessage{ID: fmt.Sprintf("u%d", a.turn), Text: request}))
	return err
}

// step runs one model step: the request header when the log has none yet
// (or after a resume), the model's reply, and the tools it asks for. With
// crash a tool call is logged as dispatched and step returns before its
// result, as a process killed mid tool call would. The log is made durable
// at each step start and before a tool call runs: the loop's checkpoints
// (docs/architecture.md).
func (a *agent) step(ctx context.Context, n int, r reply, headerReason events.HeaderReason, crash func()) error {
	if err := a.append(ctx, events.StepStart(a.turn, n)); err != nil {
		return err
	}
	if _, err := a.s.Flush(ctx); err != nil {
		return err
	}
	if headerReason != "" {
		if err := a.append(ctx, events.RequestHeader(header, headerReason)); err != nil {
			return err
		}
		if err := a.append(ctx, events.RequestContext(events.ContextInfo{Model: model, ContextWindow: contextWindow})); err != nil {
			return err
		}
		a.headers++
	}
	msg := events.Reply{ID: fmt.Sprintf("a%d-%d", a.turn, n), Model: model, Usage: &events.Usage{}}
	if r.text != "" {
		msg.Content = []events.Block{events.Text(r.text)}
	}
	ids := make([]string, len(r.calls))
	args := make([]string, len(r.calls))
	for i, c := range r.calls {
		a.calls++
		ids[i] = fmt.Sprintf("call-%d", a.calls)
		b, _ := json.Marshal(map[string]string{"path": c.path})
		args[i] = string(b)
		msg.Content = append(msg.Content, events.ToolCallBlock(events.Call{ID: ids[i], Name: c.tool, Arguments: args[i]}))
	}
	if err := a.append(ctx, events.Assistant(a.turn, n, msg)); err != nil {
		return err
	}
	for i, c := range r.calls {
		if err := a.append(ctx, events.ToolCall(a.turn, n, events.Call{ID: ids[i], Name: c.tool, Arguments: args[i]})); err != nil {
			return err
		}
		if _, err := a.s.Flush(ctx); err != nil {
			return err
		}
		if crash != nil {
			crash() // the crash worker never comes back from here
		}
		out, isErr := a.ws.run(c)
		res := events.ToolMessage{ID: "r-" + ids[i], CallID: ids[i], Content: []events.Block{events.Text(out)}, IsError: isErr}
		if err := a.append(ctx, events.Tool(a.turn, n, res)); err != nil {
			return err
		}
	}
	err := a.append(ctx, events.StepEnd(a.turn, n))
	return err
}

// end closes the turn as completed.
func (a *agent) end(ctx context.Context) error {
	err := a.append(ctx, events.TurnEnd(a.turn, events.Completed()))
	return err
}

// runTurn runs a whole scripted turn; the first step logs the request
// header with headerReason ("" when the folded header is current).
func (a *agent) runTurn(ctx context.Context, request string, headerReason events.HeaderReason) error {
	if err := a.begin(ctx, request); err != nil {
		return err
	}
	for i, r := range script[request] {
		var reason events.HeaderReason
		if i == 0 {
			reason = headerReason
		}
		if err := a.step(ctx, i+1, r, reason, nil); err != nil {
			return err
		}
	}
	return a.end(ctx)
}

// lastTurn is the number of the last turn/start in the log, 0 without one.
func lastTurn(s *service.Session) int {
	evs := s.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if e := evs[i]; e.Type == events.TypeTurnStart {
			var d struct{ Turn int }
			if json.Unmarshal(e.Data, &d) == nil {
				return d.Turn
			}
		}
	}
	return 0
}
