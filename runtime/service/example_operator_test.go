package service_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
)

// An operator searches the stored sessions, then asks why a tool result
// is in the log: it answers the tool call the assistant requested.
func ExampleService_Search() {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)
	s, err := svc.Create(ctx, service.CreateRequest{ID: "s1", Header: events.CreateOptions{CWD: "/work"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := events.Model{Provider: "anthropic", Name: "claude-sonnet-4"}
	if _, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{
		events.TurnStart(1),
		events.UserText(events.TextMessage{ID: "u1", Text: "which files are here?"}),
		events.StepStart(1, 1),
		events.Assistant(1, 1, events.Reply{ID: "a1", Model: model, Content: []events.Block{events.ToolCallBlock(events.Call{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls"}`})}}),
		events.ToolCall(1, 1, events.Call{ID: "c1", Name: "shell", Arguments: `{"cmd":"ls"}`}),
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "README.md go.mod"}),
	}}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.Flush(ctx); err != nil {
		fmt.Println(err)
		return
	}

	err = svc.Search(ctx, service.SearchQuery{Text: "readme"}, func(h service.SearchHit) error {
		fmt.Printf("hit: %s #%d %s %q\n", h.Session, h.Seq, h.Type, h.Snippet)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, torn, err := svc.ReadStored(ctx, "s1", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stored events:", v.Len(), "torn bytes:", torn.Bytes)
	why, err := v.Why(ctx, 5)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("why", why.Seq, why.Type)
	for _, n := range why.DerivedFrom {
		fmt.Println("  ", n.Relation, n.Seq, n.Type)
	}
	// Output:
	// hit: s1 #5 tool/result "README.md go.mod"
	// stored events: 6 torn bytes: 0
	// why 5 tool/result
	//    call 4 tool/call
	//    answers 3 assistant/message
}
