// Command agent-turn builds one short agent turn with the builders of
// package events — a system prompt, a user request, a model call that asks
// for a tool, the tool's result, a pruned rewrite of that result and the
// final answer — then a second turn that "crashes" mid tool call, appends
// them to a session of an embedded runtime (package logbook, in a
// temporary directory), and prints the log, the surface, the derived
// messages and the closers a resume would append.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/events"
	_ "github.com/seed-e5e476df/logbook/plugins/compactor-summary/bundle"
)

func main() {
	logbook.ServePlugins() // first: this program also runs logbook's bundled plugins
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-turn:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agent-turn-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		return err
	}
	defer rt.Close(ctx)
	s, err := rt.Create(ctx, "demo", events.CreateOptions{})
	if err != nil {
		return err
	}
	model := events.Model{Provider: "deepseek", Name: "deepseek-chat"}
	shell := events.ToolSchema{Name: "shell", Description: "Run a shell command", Parameters: json.RawMessage(`{"type":"object"}`)}
	turns := []events.Input{
		events.TurnStart(1),
		events.System(1, 0, events.TextMessage{ID: "sys", Text: "You are a careful coding agent."}),
		events.UserText(events.TextMessage{ID: "u1", Text: "How many lines does main.go have?"}),
		events.StepStart(1, 1),
		events.RequestHeader(events.Header{Config: events.Config{Provider: model.Provider, Model: model.Name}, Tools: []events.ToolSchema{shell}}, events.HeaderInitial),
		events.Assistant(1, 1, events.Reply{ID: "a1", Model: model, Content: []events.Block{events.ToolCallBlock(events.Call{ID: "c1", Name: "shell", Arguments: `{"cmd":"wc -l main.go"}`})}}),
		events.ToolCall(1, 1, events.Call{ID: "c1", Name: "shell", Arguments: `{"cmd":"wc -l main.go"}`}),
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "     42 main.go\n(and 3,000 lines of noise)"}), // seq 7
		events.StepEnd(1, 1),
		// A pruner rewrites the long tool result: same data, shorter content.
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "     42 main.go"}).Replacing(7, 7, 7),
		events.StepStart(1, 2),
		events.Assistant(1, 2, events.Reply{ID: "a2", Model: model, Content: []events.Block{events.Text("main.go has 42 lines.")}, Usage: &events.Usage{Input: 812, Output: 9}}),
		events.StepEnd(1, 2),
		events.TurnEnd(1, events.Completed()),
		// Turn 2 crashes after the tool call started.
		events.TurnStart(2),
		events.UserText(events.TextMessage{ID: "u2", Text: "Now delete the build cache."}),
		events.StepStart(2, 1),
		events.Assistant(2, 1, events.Reply{ID: "a3", Model: model, Content: []events.Block{events.ToolCallBlock(events.Call{ID: "c2", Name: "shell", Arguments: `{"cmd":"rm -rf .cache"}`})}}),
		events.ToolCall(2, 1, events.Call{ID: "c2", Name: "shell", Arguments: `{"cmd":"rm -rf .cache"}`}),
	}
	for _, in := range turns {
		if _, err := s.Append(ctx, in); err != nil {
			return err
		}
	}
	// Bad input is refused and changes nothing: the result the open call
	// waits for, but without its surfaceOp.
	bad := events.ToolResult(2, 1, events.ToolText{ID: "r2", CallID: "c2", Text: "removed"})
	bad.SurfaceOp = nil
	_, err = s.Append(ctx, bad)
	fmt.Printf("rejected append without surfaceOp: %v\n\n", err)

	fmt.Println("== log (canonical envelopes)")
	log := s.Events()
	for _, e := range log {
		fmt.Printf("%s\n", e.Envelope)
	}
	surface, err := s.Surface()
	if err != nil {
		return err
	}
	fmt.Printf("\n== surface\n%v\n", surface)
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	fmt.Println("\n== derived messages (what the model sees next)")
	for _, m := range msgs {
		var role struct{ Role string }
		if err := json.Unmarshal(m, &role); err != nil {
			return err
		}
		fmt.Printf("%-9s %s\n", role.Role, m)
	}
	// The "crash": the session is released with its turn open, and a
	// read-only inspect shows what a resume would append to close it.
	if err := s.Release(ctx); err != nil {
		return err
	}
	v, _, err := rt.Inspect(ctx, "demo")
	if err != nil {
		return err
	}
	fmt.Println("\n== closers a resume would append (crash mid tool call)")
	for _, e := range v.Events()[len(log):] {
		fmt.Printf("%s\n", e.Envelope)
	}
	return nil
}
