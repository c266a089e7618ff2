package provenance_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/provenance"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A tool result's provenance: the tool/call that started the call and the
// assistant message that requested it; its rewrite (a pruned copy that
// replaces it) was derived from the original it shadowed.
func ExampleTree() {
	ctx := context.Background()
	s, err := session.New(session.Options{Header: sdk.Header{ID: "demo", FormatVersion: sdk.FormatVersion}})
	if err != nil {
		panic(err)
	}
	for _, in := range []events.Input{
		events.TurnStart(1), // 0
		events.UserText(events.TextMessage{ID: "u1", Text: "list the files"}), // 1
		events.StepStart(1, 1), // 2
		events.Assistant(1, 1, events.Reply{ID: "a1", Model: events.Model{Provider: "p", Name: "m"}, Content: []events.Block{events.ToolCallBlock(events.Call{ID: "c1", Name: "ls", Arguments: "{}"})}}), // 3
		events.ToolCall(1, 1, events.Call{ID: "c1", Name: "ls", Arguments: "{}"}),                              // 4
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "a.txt\nb.txt"}),                 // 5
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "c1", Text: "[2 files]"}).Replacing(5, 5, 5), // 6
	} {
		if _, err := s.Append(ctx, in); err != nil {
			panic(err)
		}
	}
	root, err := provenance.Tree(ctx, s.Events().Slice(), nil, 6)
	if err != nil {
		panic(err)
	}
	var show func(n *provenance.Node, indent string)
	show = func(n *provenance.Node, indent string) {
		fmt.Printf("%s%s %d %s: %s\n", indent, n.Relation, n.Seq, n.Type, n.Summary)
		for _, c := range n.DerivedFrom {
			show(c, indent+"  ")
		}
	}
	show(root, "")
	b, _ := json.Marshal(root.Replace)
	fmt.Println("replace:", string(b))
	// Output:
	//  6 tool/result: call c1 "[2 files]"
	//   shadowed 5 tool/result: call c1 "a.txt b.txt"
	//     call 4 tool/call: ls, call c1
	//     answers 3 assistant/message: assistant "→ ls({}) [call c1]"
	//   call 4 tool/call: ls, call c1
	//   answers 3 assistant/message: assistant "→ ls({}) [call c1]"
	// replace: {"startSeq":5,"endSeq":5}
}
