package logbook_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/seed-e5e476df/logbook"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/provider"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Session.Request is the next request as the provider would receive it.
// While a call has no result it is TOOL_CALLS_PENDING naming the call and
// the event that announced it; once answered, the body is complete. The
// same body comes from package provider and what the session holds.
func ExampleSession_Request() {
	dir, err := os.MkdirTemp("", "logbook-request")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	rt, err := logbook.Open(ctx, logbook.Options{DataDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	s, err := rt.Create(ctx, "s1", events.CreateOptions{})
	if err != nil {
		log.Fatal(err)
	}
	model := events.Model{Provider: "openai", Name: "gpt-4.1"}
	call := events.Call{ID: "c1", Name: "ls", Arguments: `{}`}
	if _, err := s.Append(ctx,
		events.RequestHeader(events.Header{Config: events.Config{Provider: model.Provider, Model: model.Name}}, events.HeaderInitial),
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}),
		events.StepStart(1, 1),
		events.Assistant(1, 1, events.Reply{ID: "a1", Model: model, Content: []events.Block{events.ToolCallBlock(call)}})); err != nil {
		log.Fatal(err)
	}
	_, _, err = s.Request(provider.FormatOpenAI)
	e := sdk.ErrorOf(err)
	fmt.Println(e.Code, e.Meta["callIds"], *e.Seq)

	if _, err := s.Append(ctx, events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "go.mod"})); err != nil {
		log.Fatal(err)
	}
	body, omitted, err := s.Request(provider.FormatOpenAI)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(body), len(omitted))

	msgs, err := s.Messages()
	if err != nil {
		log.Fatal(err)
	}
	raws := make([][]byte, len(msgs))
	for i, m := range msgs {
		raws[i] = m
	}
	same, err := provider.Request(provider.FormatOpenAI, provider.RequestParts{Header: s.RequestHeader(), Messages: raws})
	fmt.Println(string(same) == string(body), err)
	// Output:
	// TOOL_CALLS_PENDING ["c1"] 4
	// {"model":"gpt-4.1","messages":[{"role":"user","content":"list the files"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"go.mod"}]} 0
	// true <nil>
}
