package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/session"
)

// The demo's model target and its request header: two tools, logged as a
// request/header event in the first step of the log (docs/format.md).
const (
	provider = "mock"
	model    = "mock-coder-1"
	// contextWindow is what request/context reports for the mock model.
	contextWindow = 32000
)

var toolSchemas = []map[string]any{
	{"name": "list_dir", "description": "List the entries of a directory of the workspace.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}},
	{"name": "read_file", "description": "Read a file of the workspace.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"}}},
}

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
	s  *session.Session
	ws *workspace
	// flush makes the log durable: the loop's checkpoints (docs/architecture.md) at
	// each step start and before running a tool call.
	flush   func(ctx context.Context) error
	turn    int
	headers int // request/header events this agent appended
	calls   int
}

// add appends one event; surface says whether it joins the surface.
func (a *agent) add(ctx context.Context, typ string, surface bool, data any) (session.Event, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return session.Event{}, err
	}
	in := session.AppendInput{Type: typ, Data: b}
	if surface {
		in.SurfaceOp = &session.SurfaceOp{}
	}
	return a.s.Append(ctx, in)
}

// message is a model message in the shape of docs/format.md.
func message(id, role string, content []map[string]any, source map[string]any) map[string]any {
	return map[string]any{"id": id, "role": role, "content": content, "source": source}
}

func text(s string) []map[string]any { return []map[string]any{{"type": "text", "text": s}} }

// begin starts a turn: turn/start, the system prompt in the first turn of
// the log, and the user's request.
func (a *agent) begin(ctx context.Context, request string) error {
	a.turn++
	if _, err := a.add(ctx, session.TypeTurnStart, false, map[string]any{"turn": a.turn}); err != nil {
		return err
	}
	if a.s.Len() == 1 {
		sys := message("sys", "system", text("You are a careful coding agent. Use the tools to look at the workspace before answering."), map[string]any{"kind": "system-prompt"})
		if _, err := a.add(ctx, session.TypeSystemMessage, true, map[string]any{"turn": a.turn, "step": 0, "message": sys}); err != nil {
			return err
		}
	}
	user := message(fmt.Sprintf("u%d", a.turn), "user", text(request), map[string]any{"kind": "user"})
	_, err := a.add(ctx, session.TypeUserMessage, true, user)
	return err
}

// step runs one model step: the request header when the log has none yet
// (or after a resume), the model's reply, and the tools it asks for. With
// crash a tool call is logged as dispatched and step returns before its
// result, as a process killed mid tool call would.
func (a *agent) step(ctx context.Context, n int, r reply, headerReason string, crash func()) error {
	if _, err := a.add(ctx, session.TypeStepStart, false, map[string]any{"turn": a.turn, "step": n}); err != nil {
		return err
	}
	if err := a.flush(ctx); err != nil {
		return err
	}
	if headerReason != "" {
		header := map[string]any{"config": map[string]any{"provider": provider, "model": model}, "tools": toolSchemas}
		if _, err := a.add(ctx, session.TypeRequestHeader, false, map[string]any{"header": header, "reason": headerReason}); err != nil {
			return err
		}
		if _, err := a.add(ctx, session.TypeRequestContext, false, map[string]any{"provider": provider, "model": model, "contextWindow": contextWindow}); err != nil {
			return err
		}
		a.headers++
	}
	src := map[string]any{"kind": "model", "provider": provider, "model": model}
	usage := map[string]any{"input": 0, "output": 0}
	if r.text != "" {
		msg := message(fmt.Sprintf("a%d-%d", a.turn, n), "assistant", text(r.text), src)
		if _, err := a.add(ctx, session.TypeAssistantMessage, true, map[string]any{"turn": a.turn, "step": n, "message": msg, "stream": []any{}, "usage": usage}); err != nil {
			return err
		}
	} else {
		var blocks []map[string]any
		ids := make([]string, len(r.calls))
		for i, c := range r.calls {
			a.calls++
			ids[i] = fmt.Sprintf("call-%d", a.calls)
			args, _ := json.Marshal(map[string]string{"path": c.path})
			blocks = append(blocks, map[string]any{"type": "tool-call", "id": ids[i], "name": c.tool, "arguments": string(args)})
		}
		msg := message(fmt.Sprintf("a%d-%d", a.turn, n), "assistant", blocks, src)
		if _, err := a.add(ctx, session.TypeAssistantMessage, true, map[string]any{"turn": a.turn, "step": n, "message": msg, "stream": []any{}, "usage": usage}); err != nil {
			return err
		}
		for i, c := range r.calls {
			args, _ := json.Marshal(map[string]string{"path": c.path})
			if _, err := a.add(ctx, session.TypeToolCall, false, map[string]any{"turn": a.turn, "step": n, "callId": ids[i], "name": c.tool, "arguments": string(args)}); err != nil {
				return err
			}
			if err := a.flush(ctx); err != nil {
				return err
			}
			if crash != nil {
				crash() // the crash worker never comes back from here
			}
			out, isErr := a.ws.run(c)
			res := message(fmt.Sprintf("r-%s", ids[i]), "tool", text(out), map[string]any{"kind": "tool", "callId": ids[i]})
			res["toolCallId"] = ids[i]
			if isErr {
				res["isError"] = true
			}
			if _, err := a.add(ctx, session.TypeToolResult, true, map[string]any{"turn": a.turn, "step": n, "message": res}); err != nil {
				return err
			}
		}
	}
	_, err := a.add(ctx, session.TypeStepEnd, false, map[string]any{"turn": a.turn, "step": n})
	return err
}

// end closes the turn as completed.
func (a *agent) end(ctx context.Context) error {
	_, err := a.add(ctx, session.TypeTurnEnd, false, map[string]any{"turn": a.turn, "reason": map[string]any{"kind": "completed"}})
	return err
}

// runTurn runs a whole scripted turn; the first step logs the request
// header with headerReason ("" when the folded header is current).
func (a *agent) runTurn(ctx context.Context, request, headerReason string) error {
	if err := a.begin(ctx, request); err != nil {
		return err
	}
	for i, r := range script[request] {
		reason := ""
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
func lastTurn(s *session.Session) int {
	evs := s.Events()
	for i := evs.Len() - 1; i >= 0; i-- {
		if e := evs.At(i); e.Type() == session.TypeTurnStart {
			var d struct{ Turn int }
			if json.Unmarshal(e.Data(), &d) == nil {
				return d.Turn
			}
		}
	}
	return 0
}
