// Command agent-turn drives runtime/session through one short agent turn —
// a system prompt, a user request, a model call that asks for a tool, the
// tool's result, a pruned rewrite of that result and the final answer — then
// a second turn that "crashes" mid tool call, and prints the log, the surface,
// the derived messages and the closers a resume would append.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/runtime/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-turn:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	now := int64(1_764_000_000_000)
	clock := session.ClockFunc(func() int64 { now += 250; return now })
	s, err := session.New(session.Options{Header: sdk.Header{FormatVersion: sdk.FormatVersion, ID: "demo"}, Clock: clock})
	if err != nil {
		return err
	}
	appendOp := &session.SurfaceOp{}
	steps := []session.AppendInput{
		{Type: "turn/start", Data: raw(`{"turn":1}`)},
		{Type: "system/message", SurfaceOp: appendOp, Data: raw(`{"turn":1,"step":0,"message":{"id":"sys","role":"system","content":[{"type":"text","text":"You are a careful coding agent."}],"source":{"kind":"system-prompt"}}}`)},
		{Type: "user/message", SurfaceOp: appendOp, Data: raw(`{"id":"u1","role":"user","content":[{"type":"text","text":"How many lines does main.go have?"}],"source":{"kind":"user"}}`)},
		{Type: "step/start", Data: raw(`{"turn":1,"step":1}`)},
		{Type: "request/header", Data: raw(`{"header":{"config":{"provider":"deepseek","model":"deepseek-chat"},"tools":[{"name":"shell","description":"Run a shell command","parameters":{"type":"object"}}]},"reason":"initial"}`)},
		{Type: "assistant/message", SurfaceOp: appendOp, Data: raw(`{"turn":1,"step":1,"message":{"id":"a1","role":"assistant","content":[{"type":"tool-call","id":"c1","name":"shell","arguments":"{\"cmd\":\"wc -l main.go\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[]}`)},
		{Type: "tool/call", Data: raw(`{"turn":1,"step":1,"callId":"c1","name":"shell","arguments":"{\"cmd\":\"wc -l main.go\"}"}`)},
		{Type: "tool/result", SurfaceOp: appendOp, Data: raw(`{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"     42 main.go\n(and 3,000 lines of noise)"}],"source":{"kind":"tool","callId":"c1"}}}`)},
		{Type: "step/end", Data: raw(`{"turn":1,"step":1}`)},
	}
	for _, in := range steps {
		if _, err := s.Append(ctx, in); err != nil {
			return err
		}
	}
	// A pruner rewrites the long tool result: same data, shorter content.
	if _, err := s.Append(ctx, session.AppendInput{Type: "tool/result", SurfaceOp: &session.SurfaceOp{Replace: true, StartSeq: 7, EndSeq: 7}, SourceEventSeqs: []sdk.Seq{7},
		Data: raw(`{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"     42 main.go"}],"source":{"kind":"tool","callId":"c1"}}}`)}); err != nil {
		return err
	}
	rest := []session.AppendInput{
		{Type: "step/start", Data: raw(`{"turn":1,"step":2}`)},
		{Type: "assistant/message", SurfaceOp: appendOp, Data: raw(`{"turn":1,"step":2,"message":{"id":"a2","role":"assistant","content":[{"type":"text","text":"main.go has 42 lines."}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[],"usage":{"input":812,"output":9}}`)},
		{Type: "step/end", Data: raw(`{"turn":1,"step":2}`)},
		{Type: "turn/end", Data: raw(`{"turn":1,"reason":{"kind":"completed"}}`)},
		// Turn 2 crashes after the tool call started.
		{Type: "turn/start", Data: raw(`{"turn":2}`)},
		{Type: "user/message", SurfaceOp: appendOp, Data: raw(`{"id":"u2","role":"user","content":[{"type":"text","text":"Now delete the build cache."}],"source":{"kind":"user"}}`)},
		{Type: "step/start", Data: raw(`{"turn":2,"step":1}`)},
		{Type: "assistant/message", SurfaceOp: appendOp, Data: raw(`{"turn":2,"step":1,"message":{"id":"a3","role":"assistant","content":[{"type":"tool-call","id":"c2","name":"shell","arguments":"{\"cmd\":\"rm -rf .cache\"}"}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"}},"stream":[]}`)},
		{Type: "tool/call", Data: raw(`{"turn":2,"step":1,"callId":"c2","name":"shell","arguments":"{\"cmd\":\"rm -rf .cache\"}"}`)},
	}
	for _, in := range rest {
		if _, err := s.Append(ctx, in); err != nil {
			return err
		}
	}
	// Bad input is refused and changes nothing.
	_, err = s.Append(ctx, session.AppendInput{Type: "user/message", Data: raw(`{"id":"u3","role":"user","content":[],"source":{"kind":"user"}}`)})
	fmt.Printf("rejected append without surfaceOp: %v\n\n", err)

	fmt.Println("== log (canonical envelopes)")
	for _, e := range s.Events().All() {
		fmt.Printf("%s\n", e.Envelope())
	}
	surface, err := s.Surface()
	if err != nil {
		return err
	}
	fmt.Printf("\n== surface (replace generation %d)\n%v\n", surface.ReplaceGeneration(), surface.Nodes())
	msgs, err := s.Messages()
	if err != nil {
		return err
	}
	fmt.Println("\n== derived messages (what the model sees next)")
	for _, m := range msgs.All() {
		fmt.Printf("node %2d %-9s %s\n", m.NodeSeq(), m.Role(), m.JSON())
	}
	fmt.Println("\n== closers a resume would append (crash mid tool call)")
	for _, e := range session.InterruptedTurnClosers(s.Events().Slice()) {
		fmt.Printf("%s\n", e.Envelope())
	}
	return nil
}

func raw(s string) []byte { return []byte(s) }
